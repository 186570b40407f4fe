"""What the grounding alerts would see: claims counted by what happened to them, per model behaviour.

The figures behind the thresholds of the grounding alerts (``deploy/prometheus/rules/gateway.rules.yml``,
``docs/operations.md``). Each row of ``../shared/eval/claims/*.jsonl`` (claim, evidence, label) becomes a
chat claim citing its evidence as passage [1], written by one of four model behaviours:

* ``faithful``: the supported claims, quoting the evidence sentence closest to them in words (the
  contract's anchor: its first ``ANCHOR_MAX_WORDS`` words), as a model that follows the contract does;
  mostly paraphrases, so most are rewritten to the source;
* ``loose quote``: the same claims, the quote lower-cased and one word dropped (a careless copy);
* ``doubling``: the supported rows' closest source sentence restated with its first number doubled
  (a misstated dose or figure), quoting that sentence;
* ``misstating``: the refuted claims with the same real quote: a model that changes what its source says;
* ``unsupported``: the not-enough-information claims with the same real quote;
* ``fabricating``: every claim, quoting its own first words as if they were the source's: a quote that
  is not in the cited passage unless the claim copies it.

Each claim goes through the gateway's verifier and SourceCleanup (``bench_cleanup.run_row``: the
configured verifier and rewriter), and is counted into a real ``GatewayMetrics`` by the labelling code
the chat path uses (``pipeline.recording.claim_labels``). Printed per behaviour and set: the shares the
alert rules compute (unanchored quotes, contradicted, removed, all claims), the shares kept as written
and rewritten to the source, and the share of answers of ``--answer-size`` claims the refusal rules
(``cleanup.stage.refusal_reason``) refuse. Then, for each alert's threshold, the share of a
behaviour's claims in the traffic at which the alert fires (mixed with faithful claims).

Skips when ../shared/eval is missing. Asserts nothing.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_grounding.py [--limit 60] [--answer-size 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_cleanup import CLAIMS, SEED, closest_sentence, product_cleanup
from gateway.cleanup.stage import judge_claims, refusal_reason
from gateway.domain import (
    ChatRequest,
    ClaimOutcome,
    ClaimResult,
    ClaimToCheck,
    Message,
    Role,
    Span,
    Statement,
    StatementKind,
)
from gateway.metric_labels import CLAIM_RESULTS, CLAIM_STATUSES
from gateway.metrics import GatewayMetrics
from gateway.pipeline.recording import claim_labels
from gateway.testing.openai_server import ANCHOR_MAX_WORDS
from gateway.text import passage_from_text

NAME = "gateway_claim_results_total"
THRESHOLDS = {"unanchored": 0.05, "contradicted": 0.10, "removed": 0.10}
"""The alert thresholds of ``gateway.rules.yml`` (shares of all claims over 15 minutes), restated to
print where each behaviour crosses them; keep in step with the rules."""


def anchor(text: str) -> str:
    return " ".join(text.split()[:ANCHOR_MAX_WORDS])


def real_quote(row: dict[str, Any]) -> str:
    return anchor(closest_sentence(row["claim"], passage_from_text(row["evidence"], row["id"])))


def load_rows(claims_dir: Path, limit: int) -> dict[str, list[dict[str, Any]]]:
    """Every set of ``claims_dir``, ``limit`` rows sampled per set (seeded as bench_cleanup samples)."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(claims_dir.glob("*.jsonl")):
        data = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if limit and len(data) > limit:
            data = sorted(random.Random(SEED).sample(data, limit), key=lambda r: r["id"])
        rows[path.stem] = data
    return rows


async def run_claim(
    row: dict[str, Any], quote: str, verifier: Any, rewriter: Any, policy: Any
) -> ClaimResult:
    """The claim's ClaimResult after verification and cleanup, as the chat path gives it."""
    passage = passage_from_text(row["evidence"], row["id"], title="evidence")
    claim = row["claim"]
    verdict = (await verifier.verify([ClaimToCheck(claim, quote, ((1, passage),))]))[0]
    statement = Statement(claim, Span(0, len(claim)), StatementKind.CLAIM, (1,), quote, 0)
    [result] = judge_claims([statement], [verdict], [passage], policy.thresholds.cleanup)
    if result.outcome is not ClaimOutcome.REMOVED:
        return result
    request = ChatRequest(messages=(Message(Role.USER, claim),), model="bench")
    rewritten: ClaimResult = await rewriter.rewrite(result, (passage,), request)
    return rewritten


def loose_quote(row: dict[str, Any]) -> str:
    """The real anchor as a careless model copies it: lower-cased, its third word dropped."""
    words = real_quote(row).lower().split()
    return " ".join(words[:2] + words[3:]) if len(words) > 3 else " ".join(words)


_NUMBER = re.compile(r"(?<![\w\-\[(./])\d+(?:\.\d+)?(?![\w\-\]/]|\.\d)")
"""A quantity standing alone (a dose, a count, a share), not a digit of a name (SARS-CoV-2, HER2) or a
reference marker ([12])."""


def changed_number(row: dict[str, Any]) -> dict[str, Any] | None:
    """The claim a model writes when it restates the closest source sentence with its first number
    doubled (a dose or a figure misstated), quoting that sentence; None when it has no number."""
    sentence = closest_sentence(row["claim"], passage_from_text(row["evidence"], row["id"]))
    found = _NUMBER.search(sentence)
    if found is None:
        return None
    number = float(found.group(0))
    doubled = f"{number * 2:g}" if number else "1"
    return dict(row, claim=sentence[: found.start()] + doubled + sentence[found.end() :])


@dataclass(frozen=True)
class Behaviour:
    name: str
    takes: Callable[[dict[str, Any]], bool]
    quote: Callable[[dict[str, Any]], str]
    rewrite: Callable[[dict[str, Any]], dict[str, Any] | None] = lambda r: r
    """What the model writes instead of the row's claim (None: the row is not used)."""


BEHAVIOURS = (
    Behaviour("faithful", lambda r: r["label"] == "supported", real_quote),
    Behaviour("loose quote", lambda r: r["label"] == "supported", loose_quote),
    Behaviour("doubling", lambda r: r["label"] == "supported", real_quote, changed_number),
    Behaviour("misstating", lambda r: r["label"] == "refuted", real_quote),
    Behaviour("unsupported", lambda r: r["label"] == "nei", real_quote),
    Behaviour("fabricating", lambda r: True, lambda r: anchor(r["claim"])),
)


@dataclass(frozen=True)
class Shares:
    n: int
    unanchored: float
    contradicted: float
    removed: float
    not_verified: float
    kept: float
    rewritten_source: float
    refused: float
    answers: int


def shares(results: list[ClaimResult], size: int, policy: Any) -> Shares:
    """Counted through a real registry with the chat path's labels, then read back as the rules do."""
    metrics = GatewayMetrics()
    for result in results:
        status, outcome = claim_labels(result)
        metrics.claim_results.labels(status=status, outcome=outcome).inc()

    def count(status: str | None = None, outcome: str | None = None) -> float:
        return sum(
            metrics.registry.get_sample_value(NAME, {"status": s, "outcome": o}) or 0.0
            for s in CLAIM_STATUSES
            for o in CLAIM_RESULTS
            if status in (None, s) and outcome in (None, o)
        )

    n = len(results)
    answers = [results[i : i + size] for i in range(0, n, size)]
    refused = sum(refusal_reason(a, policy.thresholds.cleanup) is not None for a in answers)
    return Shares(
        n,
        count("unanchored") / n,
        count("contradicted") / n,
        count(outcome="removed") / n,
        count("not_verified") / n,
        count(outcome="kept") / n,
        count(outcome="rewritten_source") / n,
        refused / len(answers),
        len(answers),
    )


HEADER = (
    f"{'behaviour':<12}{'set':<20}{'n':>5}{'unanch':>8}{'contra':>8}{'removed':>9}{'undecid':>9}"
    f"{'kept':>7}{'rw src':>8}{'refused':>9}{'answers':>8}"
)


def line(behaviour: str, name: str, s: Shares) -> str:
    return (
        f"{behaviour:<12}{name:<20}{s.n:>5}{s.unanchored:>8.1%}{s.contradicted:>8.1%}{s.removed:>9.1%}"
        f"{s.not_verified:>9.1%}{s.kept:>7.1%}{s.rewritten_source:>8.1%}{s.refused:>9.1%}{s.answers:>8}"
    )


def crossing(faithful: float, other: float, threshold: float) -> str:
    """The share of ``other`` claims (the rest faithful) at which the mixture's share reaches threshold."""
    if faithful >= threshold:
        return "always (faithful alone crosses)"
    if other <= threshold:
        return "never"
    return f"{(threshold - faithful) / (other - faithful):.0%} of claims"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=60, help="rows sampled per set (0: all)")
    parser.add_argument("--answer-size", type=int, default=4, help="claims per simulated answer")
    parser.add_argument("--eval", type=Path, default=CLAIMS, help="directory of the claim sets (*.jsonl)")
    args = parser.parse_args()
    if not args.eval.is_dir():
        print(f"skipped: {args.eval} is missing")
        return
    async with product_cleanup() as (verifier, rewriter, policy):
        started = time.perf_counter()
        pooled: dict[str, list[ClaimResult]] = {b.name: [] for b in BEHAVIOURS}
        per_set: list[tuple[int, str]] = []
        for name, rows in load_rows(args.eval, args.limit).items():
            for behaviour in BEHAVIOURS:
                written = [behaviour.rewrite(r) for r in rows if behaviour.takes(r)]
                chosen = [r for r in written if r is not None]
                if not chosen:
                    continue
                results = [await run_claim(r, behaviour.quote(r), verifier, rewriter, policy) for r in chosen]
                pooled[behaviour.name] += results
                counted = shares(results, args.answer_size, policy)
                per_set.append((BEHAVIOURS.index(behaviour), line(behaviour.name, name, counted)))
        print(HEADER)
        print("\n".join(text for _, text in sorted(per_set, key=lambda item: item[0])))
        print("\nall sets pooled")
        print(HEADER)
        overall = {b: shares(r, args.answer_size, policy) for b, r in pooled.items() if r}
        for kind, pooled_shares in overall.items():
            print(line(kind, "all", pooled_shares))
        faithful = overall["faithful"]
        print("\nwhere each alert fires: the share of a behaviour's claims, the rest faithful")
        for metric, threshold in THRESHOLDS.items():
            for kind in [b.name for b in BEHAVIOURS[1:] if b.name in overall]:
                at = crossing(getattr(faithful, metric), getattr(overall[kind], metric), threshold)
                print(f"  {metric} > {threshold:.0%}: {kind:<12} {at}")
        total = sum(len(r) for r in pooled.values())
        print(f"\n{total} claims in {time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    asyncio.run(main())
