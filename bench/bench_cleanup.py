"""SourceCleanup on labelled claims under the chat contract: information kept, leaks, answers refused.

For each row of ``../shared/eval/claims/*.jsonl`` (claim, evidence, label), the claim is treated as a
chat claim citing its evidence as passage [1] and quoting the evidence sentence closest to it in words
(rapidfuzz token-set ratio; what a model following the contract would quote). The gateway's verifier
(``bootstrap.build_verifier``: quote anchoring and binding, local checks, the judge/NLI model only when
configured) decides it; a claim that fails goes through the configured rewriter (the source's own
sentence holding the quote, after the upstream model when one is configured), whose rewrite is
verified again. Outcomes per claim: ``kept`` (verified as written), ``rewritten`` (replaced by
verified source text), ``removed``. Printed per set and overall:

* information kept: supported claims kept or rewritten to the source (the source's information still
  reaches the patient);
* leak: not-supported claims kept as written (what a patient would read unverified); a rewrite shows the
  source's words, not the claim, so it is not a leak;
* answers refused: claims grouped in consecutive answers of ``--answer-size`` (4) and judged by the
  real refusal rules (``cleanup.stage.refusal_reason``).

Skips when ../shared/eval is missing.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_cleanup.py [--limit N] [--answer-size 4]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CLAIMS = REPO.parent / "shared" / "eval" / "claims"
SEED = 20


def load_rows(limit: int) -> dict[str, list[dict[str, Any]]]:
    rows: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(CLAIMS.glob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        data = [json.loads(line) for line in lines if line.strip()]
        if limit and len(data) > limit:
            data = sorted(random.Random(SEED).sample(data, limit), key=lambda r: r["id"])
        rows[path.stem] = data
    return rows


def build(settings: Any, models: Any) -> tuple[Any, Any, Any]:
    from gateway.bootstrap import build_rewriter, build_verifier
    from gateway.models.embedding import Embedder
    from gateway.policies import load_configured_policy

    policy = load_configured_policy(settings)
    embedder = Embedder()
    verifier = build_verifier(settings, policy, embedder, models)
    return verifier, build_rewriter(settings, policy, embedder, verifier, models), policy


@asynccontextmanager
async def product_cleanup() -> AsyncIterator[tuple[Any, Any, Any]]:
    """The product's verifier, rewriter and policy over the default settings (``build``), announced
    with the machine's load; their models are closed on exit."""
    from gateway.bootstrap import build_models
    from gateway.settings import Settings

    settings = Settings()
    models = build_models(settings)
    try:
        verifier, rewriter, policy = build(settings, models)
        print(f"verifier: {verifier.name}   rewriter: {rewriter.name}   load {os.getloadavg()[0]:.2f}")
        yield verifier, rewriter, policy
    finally:
        await models.aclose()


def closest_sentence(claim: str, passage: Any) -> str:
    from rapidfuzz import fuzz

    sentences = [text for _, text in passage.sentences()] or [passage.text]
    best: str = max(sentences, key=lambda s: fuzz.token_set_ratio(claim.lower(), s.lower()))
    return best


async def run_row(row: dict[str, Any], verifier: Any, rewriter: Any, policy: Any) -> Any:
    """The claim's ClaimResult after verification and cleanup."""
    from gateway.cleanup.stage import judge_claims
    from gateway.domain import (
        ChatRequest,
        ClaimOutcome,
        ClaimToCheck,
        Message,
        Role,
        Span,
        Statement,
        StatementKind,
    )
    from gateway.text import passage_from_text

    passage = passage_from_text(row["evidence"], row["id"], title="evidence")
    claim = row["claim"]
    quote = closest_sentence(claim, passage)
    verdict = (await verifier.verify([ClaimToCheck(claim, quote, ((1, passage),))]))[0]
    statement = Statement(claim, Span(0, len(claim)), StatementKind.CLAIM, (1,), quote, 0)
    [result] = judge_claims([statement], [verdict], [passage], policy.thresholds.cleanup)
    if result.outcome is not ClaimOutcome.REMOVED:
        return result
    request = ChatRequest(messages=(Message(Role.USER, claim),), model="bench")
    return await rewriter.rewrite(result, (passage,), request)


def outcome(result: Any) -> str:
    value: str = result.outcome.value
    return {"verified": "kept"}.get(value, value)


def share(counter: collections.Counter[str], *keys: str) -> str:
    total = sum(counter.values())
    return f"{sum(counter[k] for k in keys) / total:6.1%}" if total else "   n/a"


def refused_share(results: list[tuple[str, Any]], size: int, policy: Any) -> str:
    from gateway.cleanup.stage import refusal_reason

    answers = [results[i : i + size] for i in range(0, len(results), size)]
    refused = sum(refusal_reason([r for _, r in a], policy.thresholds.cleanup) is not None for a in answers)
    return f"{refused / len(answers):6.1%} of {len(answers)}" if answers else "n/a"


def report(name: str, results: list[tuple[str, Any]], size: int, policy: Any) -> None:
    unsupported = collections.Counter(outcome(r) for label, r in results if label != "supported")
    supported = collections.Counter(outcome(r) for label, r in results if label == "supported")
    print(
        f"{name:20s} supported n={sum(supported.values()):4d}: information kept "
        f"{share(supported, 'kept', 'rewritten')} (kept {share(supported, 'kept')}, rewritten to source "
        f"{share(supported, 'rewritten')}) | not supported n={sum(unsupported.values()):4d}: leak "
        f"{share(unsupported, 'kept')}, rewritten {share(unsupported, 'rewritten')}, removed "
        f"{share(unsupported, 'removed')} | answers refused {refused_share(results, size, policy)}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=100, help="rows sampled per set (0: all)")
    parser.add_argument("--answer-size", type=int, default=4, help="claims per simulated answer")
    args = parser.parse_args()
    if not CLAIMS.is_dir():
        print(f"skipped: {CLAIMS} is missing")
        return
    async with product_cleanup() as (verifier, rewriter, policy):
        started = time.perf_counter()
        everything: list[tuple[str, Any]] = []
        for name, rows in load_rows(args.limit).items():
            results = [(row["label"], await run_row(row, verifier, rewriter, policy)) for row in rows]
            everything += results
            report(name, results, args.answer_size, policy)
        report("all", everything, args.answer_size, policy)
        print(f"{len(everything)} claims in {time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    asyncio.run(main())
