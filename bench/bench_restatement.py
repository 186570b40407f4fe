"""Restatement (#35 item 5): chat claims kept as written before and after the restatement check.

Each sampled row of ``../shared/eval/claims/*.jsonl`` (claim, evidence, label) becomes a chat claim
citing its evidence as passage [1] and quoting the first words of the evidence sentence closest to it
(``bench_grounding.real_quote``: what a model following the contract quotes). The local checker's
verdict of each row comes from ``bench_verifier.py``'s cache (``--cache``, ``--per-set``: the rows it
samples; computed with MiniLM and written there when absent: the local verdict does not depend on the
quote); quote anchoring runs here; then the cascade's own ``combine`` decides each claim twice:

* before: quote binding alone (``restatement`` off, the behaviour before #35 item 5);
* after: binding plus ``restatement.Restatement`` over ``policies/restatements.yaml`` (the default).

Printed per set and split (``tune``: crc32(id) even, where the term list and hedges were looked at;
``held``: odd, never looked at), before | after side by side:

* kept: supported claims kept as written (count and share): in the chat path the supported recall;
* leak: not-supported claims kept as written (count and share), bound <= 2% on every set;
* after only: claims newly kept by ``restatement``, and binding-supported claims now refused for a
  dropped hedge (``hedge_dropped``).

A claim not kept is rewritten to its source's sentence or removed (``bench_cleanup.py`` measures that
step). Skips when ../shared/eval is missing. Asserts nothing.

``--eval bench/data/restatements --per-set 0`` scores the project's own restatement set instead
(``medquad_restatements.jsonl``, see ``bench/data/README.md``): model-style restatements of MedQuAD
sentences, labelled ``supported`` (must be kept) or ``refuted`` (altered: must not be). Its rows carry
``half`` (tune / held, by source sentence, so that the restatements of one sentence stay in one half)
and ``kind``; the bench then also prints kept / not kept per kind and split.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_restatement.py [--per-set 800] [--cache FILE]
    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_restatement.py --eval bench/data/restatements \
        --per-set 0 --cache /tmp/bench_restatement_own.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_grounding import real_quote
from bench.bench_verifier import CACHE, EVAL, local_rows, local_verdict, split_of
from gateway.domain import ClaimToCheck, Verdict
from gateway.models.embedding import Embedder
from gateway.settings import Settings
from gateway.text import passage_from_text
from gateway.verification.anchoring import QuoteAnchoringVerifier
from gateway.verification.cascade import CascadeVerifier
from gateway.verification.checks.analysis import Analyses
from gateway.verification.checks.data import CheckData
from gateway.verification.local import LocalEntailmentVerifier
from gateway.verification.policy import VerificationPolicy
from gateway.verification.restatement import HEDGE_CHECK, RESTATEMENT_CHECK, build_restatement

BATCH = 16


@dataclass(frozen=True)
class Decided:
    row: dict[str, Any]
    before: Verdict
    after: Verdict


async def decide(
    rows: list[dict[str, Any]],
    before: CascadeVerifier,
    after: CascadeVerifier,
    anchoring: QuoteAnchoringVerifier,
    policy: VerificationPolicy,
    data: CheckData,
) -> list[Decided]:
    """Each row as a chat claim quoting its closest sentence, decided by both cascades (``data``: the
    checks' word data)."""
    out: list[Decided] = []
    for start in range(0, len(rows), BATCH):
        chunk = rows[start : start + BATCH]
        claims = [
            ClaimToCheck(r["claim"], real_quote(r), ((1, passage_from_text(r["evidence"], r["id"])),))
            for r in chunk
        ]
        anchors = await anchoring.verify(claims)
        analyses = Analyses(data)
        for row, claim, a in zip(chunk, claims, anchors, strict=True):
            local = local_verdict(row, policy, data)
            out.append(
                Decided(
                    row, before.combine(claim, a, local, analyses), after.combine(claim, a, local, analyses)
                )
            )
    return out


def half(row: dict[str, Any]) -> str:
    """The row's split: its own ``half`` field (the project's restatement set), else ``split_of`` its id."""
    return str(row.get("half") or split_of(row["id"]))


def with_fields(rows: list[dict[str, Any]], eval_dir: Path) -> list[dict[str, Any]]:
    """The cached rows with ``half`` and ``kind`` of their source file, where it has them."""
    extra: dict[str, dict[str, Any]] = {}
    for path in eval_dir.glob("*.jsonl"):
        for text in path.read_text(encoding="utf-8").splitlines():
            if text.strip():
                r = json.loads(text)
                if "half" in r:
                    extra[str(r["id"])] = {"half": r["half"], "kind": r.get("kind", "")}
    return [{**r, **extra.get(str(r["id"]), {})} for r in rows]


def by_kind(decided: list[Decided]) -> None:
    """Per kind and split: rows, kept as written (the share must be high for ``supported`` kinds, 0 for
    the altered ones)."""
    kinds = sorted({str(d.row.get("kind")) for d in decided if d.row.get("kind")})
    if not kinds:
        return
    print(f"  {'kind':<16}{'label':<11}{'tune kept':>14}{'held kept':>14}")
    for kind in kinds:
        mine = [d for d in decided if d.row.get("kind") == kind]
        cells = []
        for part in ("tune", "held"):
            chosen = [d for d in mine if half(d.row) == part]
            cells.append(share(sum(d.after.supported for d in chosen), len(chosen)))
        print(f"  {kind:<16}{mine[0].row['label']:<11}{cells[0]:>14}{cells[1]:>14}")


def share(k: int, n: int) -> str:
    return f"{k:>4}/{n:<4}{k / n:>6.1%}" if n else f"{'-':>16}"


def line(name: str, part: str, decided: list[Decided]) -> str:
    supported = [d for d in decided if d.row["label"] == "supported"]
    other = [d for d in decided if d.row["label"] != "supported"]
    kept_b = sum(d.before.supported for d in supported)
    kept_a = sum(d.after.supported for d in supported)
    leak_b = sum(d.before.supported for d in other)
    leak_a = sum(d.after.supported for d in other)
    new = sum(d.after.check == RESTATEMENT_CHECK for d in decided)
    new_bad = sum(d.after.check == RESTATEMENT_CHECK for d in other)
    hedged = sum(d.after.check == HEDGE_CHECK for d in decided)
    hedged_good = sum(d.after.check == HEDGE_CHECK for d in supported)
    return (
        f"{name:<20}{part:<6}{share(kept_b, len(supported)):>17} | {share(kept_a, len(supported)):<17}"
        f"{share(leak_b, len(other)):>17} | {share(leak_a, len(other)):<17}"
        f"{new:>6} ({new_bad} not supp.){hedged:>6} ({hedged_good} supp.)"
    )


def show(tune: list[Decided], limit: int) -> None:
    """Tune-split examples only: claims the restatement check changed, supported claims still refused,
    and not-supported claims kept (leaked)."""
    changed = [d for d in tune if d.after.check in (RESTATEMENT_CHECK, HEDGE_CHECK)]
    refused = [d for d in tune if d.row["label"] == "supported" and not d.after.supported]
    leaked = [d for d in tune if d.row["label"] != "supported" and d.after.supported]
    for d in changed[:limit] + refused[:limit] + leaked[:limit]:
        print(f"    [{d.row['label']}] {d.after.check}: {d.row['claim']!r}")
        print(f"        source: {d.after.evidence.text if d.after.evidence else None!r}")
        print(f"        {d.after.reason}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--per-set", type=int, default=800, help="rows sampled per set (bench_verifier's sample)"
    )
    parser.add_argument(
        "--cache", type=Path, default=CACHE, help="bench_verifier's local verdicts cache (JSONL)"
    )
    parser.add_argument("--eval", type=Path, default=EVAL, help="directory of the claim sets (*.jsonl)")
    parser.add_argument(
        "--show", type=int, default=0, help="print this many tune-split claims per set newly kept / leaked"
    )
    args = parser.parse_args()
    if not args.eval.is_dir():
        print(f"skipped: {args.eval} is missing")
        return
    policy = VerificationPolicy()
    embedder = Embedder()
    rows = with_fields(local_rows(embedder, policy, args.per_set, args.cache, embedder, args.eval), args.eval)
    anchoring = QuoteAnchoringVerifier(policy.quote_fuzzy_threshold, policy.quote_min_chars)
    local = LocalEntailmentVerifier(embedder, policy)  # not called: the cascades only combine
    before = CascadeVerifier(anchoring, local, None, replace(policy, restatement=False), data=local.data)
    restatement = build_restatement(Settings(), policy, local.data)
    after = CascadeVerifier(anchoring, local, None, policy, restatement=restatement, data=local.data)
    started = time.perf_counter()
    print(
        f"load {os.getloadavg()[0]:.2f}; {args.per_set} rows per set ({args.cache}); quote: closest sentence"
    )
    print("split: tune = crc32(id) even (terms and hedges looked at), held = odd (never looked at)")
    print(
        f"{'set':<20}{'split':<6}{'kept (supported) before':>17} | {'after':<17}"
        f"{'leak before':>17} | {'after':<17}{'restatement':>14}{'hedge_dropped':>14}"
    )
    pooled: list[Decided] = []
    for name in dict.fromkeys(r["set"] for r in rows):
        decided = await decide(
            [r for r in rows if r["set"] == name], before, after, anchoring, policy, local.data
        )
        pooled += decided
        for part in ("tune", "held", "all"):
            chosen = [d for d in decided if part == "all" or half(d.row) == part]
            print(line(name if part == "tune" else "", part, chosen))
        by_kind(decided)
        if args.show:
            show([d for d in decided if half(d.row) == "tune"], args.show)
    for part in ("tune", "held", "all"):
        chosen = [d for d in pooled if part == "all" or half(d.row) == part]
        print(line("all sets" if part == "tune" else "", part, chosen))
    print(f"{len(pooled)} claims in {time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    asyncio.run(main())
