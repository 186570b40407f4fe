"""SourceCleanup quality on labelled claims: how much of what is unsupported ends removed or fixed.

For each row of ``../shared/eval/claims/*.jsonl`` (claim, evidence, label), the claim is verified
against its evidence (as passage [1]) with the gateway's verifier; a claim that fails goes through the
extractive rewriter (whose rewrite is verified again). Printed per file and overall:

* not supported (refuted + nei): the share that ends removed, rewritten-and-verified, and either of
  the two (SourceCheckup's SourceCleanup: 90.7% removed or correctly fixed) — the rest slipped through
  as "verified";
* supported: the share left untouched (the rest was rewritten or removed needlessly).

The verifier is whatever ``bootstrap.build_verifier`` returns (``--verifier local`` forces the local
entailment verifier). The figure is an upper bound on "correctly fixed": a rewrite counts when the
verifier accepts it, not when a clinician would. Skips when ../shared/eval is missing.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_cleanup.py [--limit N] [--verifier built|local]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CLAIMS = REPO.parent / "shared" / "eval" / "claims"
SOURCECHECKUP_REMOVED_OR_FIXED = 0.907


def load_rows(limit: int) -> dict[str, list[dict[str, Any]]]:
    rows: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(CLAIMS.glob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        data = [json.loads(line) for line in lines if line.strip()]
        rows[path.stem] = data[:limit] if limit else data
    return rows


def build(choice: str) -> tuple[Any, Any, Any]:
    from gateway.bootstrap import build_verifier, load_configured_policy
    from gateway.cleanup import ExtractiveRewriter
    from gateway.knowledge.embedding import Embedder
    from gateway.settings import Settings

    settings = Settings()
    policy = load_configured_policy(settings)
    embedder = Embedder()
    if choice == "local":
        from gateway.verification.local import LocalEntailmentVerifier

        verifier: Any = LocalEntailmentVerifier(embedder, policy.thresholds.verification)
    else:
        verifier = build_verifier(settings, policy, embedder)
    return verifier, ExtractiveRewriter(embedder, verifier, policy.thresholds.cleanup), policy


async def run_row(row: dict[str, Any], verifier: Any, rewriter: Any) -> str:
    """'untouched', 'rewritten' or 'removed' for one claim."""
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
    from gateway.text import passage_from_text

    evidence = row["evidence"]
    passage = passage_from_text(evidence, row["id"], title="evidence")
    claim = row["claim"]
    verdict = (await verifier.verify([ClaimToCheck(claim, None, ((1, passage),))]))[0]
    if verdict.supported:
        return "untouched"
    statement = Statement(claim, Span(0, len(claim)), StatementKind.CLAIM, (1,), None, 0)
    failed = ClaimResult(statement, verdict, ClaimOutcome.REMOVED, None, reason=verdict.check)
    request = ChatRequest(messages=(Message(Role.USER, claim),), model="bench")
    result = await rewriter.rewrite(failed, (passage,), request)
    return "rewritten" if result.outcome is ClaimOutcome.REWRITTEN else "removed"


def share(counter: collections.Counter[str], *keys: str) -> str:
    total = sum(counter.values())
    return f"{sum(counter[k] for k in keys) / total:6.1%}" if total else "   n/a"


def report(name: str, results: list[tuple[str, str]]) -> None:
    unsupported = collections.Counter(o for label, o in results if label != "supported")
    supported = collections.Counter(o for label, o in results if label == "supported")
    print(
        f"{name:18s} not supported n={sum(unsupported.values()):5d}  removed {share(unsupported, 'removed')}"
        f"  rewritten+verified {share(unsupported, 'rewritten')}"
        f"  removed-or-fixed {share(unsupported, 'removed', 'rewritten')}"
        f"  slipped through {share(unsupported, 'untouched')}"
    )
    print(
        f"{'':18s} supported     n={sum(supported.values()):5d}  untouched {share(supported, 'untouched')}"
        f"  rewritten {share(supported, 'rewritten')}  removed {share(supported, 'removed')}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="rows per file (0: all)")
    parser.add_argument("--verifier", choices=("built", "local"), default="built")
    args = parser.parse_args()
    if not CLAIMS.is_dir():
        print(f"skipped: {CLAIMS} is missing")
        return
    verifier, rewriter, policy = build(args.verifier)
    print(
        f"verifier: {verifier.name}   rewriter: {rewriter.name} "
        f"(rewrite_min_similarity={policy.thresholds.cleanup.rewrite_min_similarity})"
    )
    if verifier.name == "anchoring":
        print("note: these claims carry no quote, so quote anchoring fails every one of them")
    started = time.perf_counter()
    everything: list[tuple[str, str]] = []
    for name, rows in load_rows(args.limit).items():
        results = [(row["label"], await run_row(row, verifier, rewriter)) for row in rows]
        everything += results
        report(name, results)
    report("all", everything)
    print(f"SourceCheckup SourceCleanup reference: removed-or-fixed {SOURCECHECKUP_REMOVED_OR_FIXED:.1%}")
    print(f"{len(everything)} claims in {time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    asyncio.run(main())
