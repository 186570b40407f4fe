"""Triage when the client offers tools (issue #36): what reaches the model, with tools and without.

Run::

    PYTHONPATH=. HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_tool_triage.py --cache /tmp/triage-cache

The production triage (``gateway.triage.decision.decide``, as ``bench_triage`` runs it) decides each
message once; ``gateway.tools.passages.ToolPassages.lift`` then gives the decision a request offering
tools gets (``lifted``, what ``ToolPassages.lift`` applies when the policy and the upstream allow). Per
source (never pooled), both sides: emergencies given the emergency message (recall, on
rows labelled emergency / suicide) and health questions given it (false alarms), which must not move;
and the share refused as ``non_clinical`` against the share that reaches the model, which is what the
lift changes (a non-clinical request reaches the model, which may call a tool; any text it writes is
verified). Sources: the project's tune set, its held-out test set (aggregates only) and the shared
held-out split (``bench/triage_data``), each cut to its first ``--limit`` rows. Prints a table; asserts
nothing. Nothing here is tuned.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_triage import DEV, Row, project_rows, request_of, shared_set_rows, triage_all
from bench.triage_data import EVAL, ROOT
from gateway.domain import Scope, Triage
from gateway.knowledge.query import load_planner
from gateway.models.embedding import Embedder
from gateway.policies import load_policy
from gateway.tools.passages import lifted
from gateway.triage.semantic import SemanticTriage

HEALTH = ("routine", "urgent", "clinical")
EMERGENCY = ("emergency",)


def share(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.1f}%)" if total else "-"


def line(name: str, side: str, rows: list[Row], results: list[Triage]) -> str:
    def count(labels: tuple[str, ...], scope: Scope) -> tuple[int, int]:
        chosen = [r for row, r in zip(rows, results, strict=True) if row.label in labels]
        return sum(r.scope is scope for r in chosen), len(chosen)

    recall = share(*count(EMERGENCY, Scope.EMERGENCY))
    alarms = share(*count(HEALTH, Scope.EMERGENCY))
    labels = tuple({row.label for row in rows})
    refused = share(*count(labels, Scope.NON_CLINICAL))
    reach = share(*count(labels, Scope.IN_SCOPE))
    return f"| {name} | {side} | {recall} | {alarms} | {refused} | {reach} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=None, help="scratch directory for embeddings")
    parser.add_argument("--context", default="general")
    parser.add_argument("--limit", type=int, default=1000, help="rows per source, the first in file order")
    args = parser.parse_args()
    policy = load_policy(ROOT / "policies", args.context)
    model = SemanticTriage(policy.triage, Embedder(), load_planner(ROOT / "policies").words)
    sources: list[tuple[str, list[Row]]] = []
    for split in ("tune", "test"):
        path = DEV / f"{split}.jsonl"
        if path.is_file():
            sources.append((f"project {split}", project_rows(path)))
    if EVAL.is_dir():
        shared = ("clinical", "non_clinical", "suicide_risk")
        sources += [(f"shared {n} (held-out split)", shared_set_rows(n)) for n in shared]
    print(
        "| source | request | emergency recall | health flagged | refused non_clinical | reaches the model |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for name, all_rows in sources:
        rows = all_rows[: args.limit]
        requests = [request_of(list(row.turns)) for row in rows]
        results = triage_all(requests, policy.context, model, args.cache, name.replace(" ", "-"))
        print(line(name, "no tools", rows, results))
        print(line(name, "tools offered", rows, [lifted(result) for result in results]))


if __name__ == "__main__":
    main()
