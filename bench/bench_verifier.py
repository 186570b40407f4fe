"""Claim-verification benchmark on the shared dev sets (Check-COVID, K-QA): accuracy and speed.

Run: ``.venv/bin/python bench/bench_verifier.py [--batch 16] [--limit N]``

Binary task: ``supported`` vs everything else (``refuted`` + ``nei``). Each row's evidence paragraph is
split with ``gateway.text`` and treated as one cited Passage. Configurations:

- baseline: best-sentence MiniLM cosine at its best threshold on that very set (an optimistic ceiling
  for plain similarity, shown for comparison);
- local: ``LocalEntailmentVerifier`` with evidence sentences encoded per request (worst case);
- local (ingested): the same with sentence vectors precomputed, as the knowledge base stores them;
- local (learned): the same, scored by the learned combiner (``local_combiner: learned``);
- cascade: ``CascadeVerifier`` without a judge (no quotes in these sets, so anchoring never helps).

Latency is per ``verify()`` call of ``--batch`` claims. ``--speed`` instead measures the production
path (sentence vectors precomputed) at batches of 1, 8 and 32 claims, ``--repeat`` times, and prints
the best run with the load average at the time. Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.domain import ClaimToCheck, Passage, Vector, Verdict
from gateway.knowledge.embedding import Embedder, serving_threads
from gateway.policy import VerificationPolicy
from gateway.text import passage_from_text
from gateway.verification import checks
from gateway.verification import local as local_module
from gateway.verification.anchoring import QuoteAnchoringVerifier
from gateway.verification.base import Verifier
from gateway.verification.cascade import CascadeVerifier
from gateway.verification.local import LocalEntailmentVerifier, TextEncoder

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval" / "claims"
SETS = ("checkcovid_dev", "kqa_dev")
P95 = 0.95


@dataclass(frozen=True)
class Row:
    claim: str
    evidence: str
    supported: bool


@dataclass(frozen=True)
class Result:
    balanced: float
    recall_supported: float
    recall_not: float
    claims_per_second: float | None = None
    median_ms: float | None = None
    p95_ms: float | None = None


def load(name: str, limit: int | None) -> list[Row]:
    lines = (EVAL / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return [Row(r["claim"], r["evidence"], r["label"] == "supported") for r in rows[:limit]]


def passage(index: int, text: str) -> Passage:
    return passage_from_text(text, f"row-{index}")


def scores(predicted: list[bool], truth: list[bool]) -> tuple[float, float, float]:
    p, y = np.array(predicted), np.array(truth)
    pos = float(p[y].mean()) if y.any() else 0.0
    neg = float((~p[~y]).mean()) if (~y).any() else 0.0
    return (pos + neg) / 2, pos, neg


def baseline(rows: list[Row], passages: list[Passage], embedder: Embedder) -> Result:
    """Best-sentence cosine, thresholded at the value that maximises balanced accuracy here."""
    claims = embedder.encode([r.claim for r in rows])
    best = []
    for i, p in enumerate(passages):
        vectors = p.sentence_vectors
        best.append(float((vectors @ claims[i]).max()) if vectors is not None and len(vectors) else 0.0)
    truth = [r.supported for r in rows]
    top = max((scores([b >= t for b in best], truth), t) for t in sorted(set(best)))
    return Result(*top[0])


async def timed(
    verifier: Verifier, claims: list[ClaimToCheck], batch: int
) -> tuple[list[Verdict], list[float]]:
    verdicts: list[Verdict] = []
    latencies: list[float] = []
    for start in range(0, len(claims), batch):
        began = time.perf_counter()
        verdicts += await verifier.verify(claims[start : start + batch])
        latencies.append(time.perf_counter() - began)
    return verdicts, latencies


async def measure(verifier: Verifier, rows: list[Row], passages: list[Passage], batch: int) -> Result:
    claims = [ClaimToCheck(r.claim, None, ((1, p),)) for r, p in zip(rows, passages, strict=True)]
    verdicts, latencies = await timed(verifier, claims, batch)
    balanced, pos, neg = scores([v.supported for v in verdicts], [r.supported for r in rows])
    ordered = sorted(latencies)
    return Result(
        balanced,
        pos,
        neg,
        len(claims) / sum(latencies),
        statistics.median(latencies) * 1000,
        ordered[min(len(ordered) - 1, int(P95 * len(ordered)))] * 1000,
    )


def fmt(value: float | None, pattern: str) -> str:
    return "n/a" if value is None else pattern.format(value)


def report(name: str, results: dict[str, Result]) -> None:
    base = results["baseline"].balanced
    print(f"\n{name}")
    print(
        f"{'configuration':<20}{'bal.acc':>8}{'x base':>8}{'rec sup':>9}{'rec not':>9}"
        f"{'claims/s':>10}{'med ms':>9}{'p95 ms':>9}"
    )
    print(f"{'anchoring':<20}{'n/a (these sets carry no quotes)':>40}")
    for config, r in results.items():
        print(
            f"{config:<20}{r.balanced:>8.3f}{r.balanced / base:>8.2f}{r.recall_supported:>9.3f}"
            f"{r.recall_not:>9.3f}{fmt(r.claims_per_second, '{:.0f}'):>10}{fmt(r.median_ms, '{:.0f}'):>9}"
            f"{fmt(r.p95_ms, '{:.0f}'):>9}"
        )


class CountingEncoder:
    """Counts the texts encoded while timed: with precomputed passage vectors only claims should be."""

    def __init__(self, embedder: TextEncoder) -> None:
        self._embedder = embedder
        self.texts = 0

    def encode(self, texts: Sequence[str]) -> Vector:
        self.texts += len(texts)
        return self._embedder.encode(texts)


def cold_checks() -> None:
    """Forget memoised text analyses, so every run pays for claim and evidence analysis."""
    for module in (checks, local_module):
        for value in vars(module).values():
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()


def ingest(raw: list[Passage], embedder: Embedder) -> list[Passage]:
    """Sentence vectors for every passage, encoded in one call as ingestion does."""
    sentences = [[t for _, t in p.sentences()] for p in raw]
    flat = embedder.encode([t for group in sentences for t in group])
    out, offset = [], 0
    for p, group in zip(raw, sentences, strict=True):
        out.append(replace(p, sentence_vectors=flat[offset : offset + len(group)]))
        offset += len(group)
    return out


async def speed(embedder: Embedder, policy: VerificationPolicy, limit: int | None, repeat: int) -> None:
    """Claims/s on the production path, best of ``repeat`` runs.

    claims/CPU-s divides by the process's CPU time instead of the wall clock: on a shared machine it
    shows what the same work gives on a core of its own (with one model thread, the serving default).
    Timed: what a request does (claim encoding, candidate windows, checks). Not timed: passage sentence
    vectors, computed beforehand as ingestion stores them. Each run starts with a new verifier and cold
    check caches, and the number of texts encoded is printed to show that only claims were.
    """
    rows = load(SETS[0], limit or 256) + load(SETS[1], (limit or 256) // 2)
    passages = ingest([passage(i, r.evidence) for i, r in enumerate(rows)], embedder)
    claims = [ClaimToCheck(r.claim, None, ((1, p),)) for r, p in zip(rows, passages, strict=True)]
    print(
        f"\nspeed: {len(claims)} claims (Check-COVID + K-QA), precomputed passage vectors, best of {repeat}"
    )
    print(
        f"{'batch':>6}{'claims/s':>10}{'med ms':>9}{'p95 ms':>9}{'claims/CPU-s':>14}"
        "   load average (1/5/15 min)"
    )
    for batch in (1, 8, 32):
        best: tuple[float, float, float, tuple[float, float, float], float] | None = None
        for _ in range(repeat):
            counter = CountingEncoder(embedder)
            local = LocalEntailmentVerifier(counter, policy)
            cold_checks()
            load_avg = os.getloadavg()
            cpu = time.process_time()
            _, latencies = await timed(local, claims, batch)
            cpu = time.process_time() - cpu
            if counter.texts > len(claims):
                print(f"  warning: {counter.texts} texts encoded for {len(claims)} claims")
            ordered = sorted(latencies)
            run = (
                len(claims) / sum(latencies),
                statistics.median(latencies) * 1000,
                ordered[min(len(ordered) - 1, int(P95 * len(ordered)))] * 1000,
                load_avg,
                len(claims) / cpu,
            )
            best = run if best is None or run[0] > best[0] else best
        assert best is not None
        print(
            f"{batch:>6}{best[0]:>10.0f}{best[1]:>9.1f}{best[2]:>9.1f}{best[4]:>14.0f}   "
            f"{best[3][0]:.2f} / {best[3][1]:.2f} / {best[3][2]:.2f}"
        )


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16, help="claims per verify() call (one request)")
    parser.add_argument("--limit", type=int, default=None, help="first N rows of each set only")
    parser.add_argument("--speed", action="store_true", help="only the claims/s table at batches 1, 8, 32")
    parser.add_argument("--repeat", type=int, default=3, help="speed runs per batch size (best is shown)")
    parser.add_argument(
        "--threads", type=int, default=serving_threads(), help="MiniLM threads (default: a serving process's)"
    )
    args = parser.parse_args()
    if not EVAL.is_dir():
        print(f"skipped: {EVAL} is not present")
        return 0
    # no text cache: repeated runs must measure encoding, not cache hits
    embedder = Embedder(cache_size=0, threads=args.threads)
    print(f"MiniLM {embedder.precision}, {args.threads} thread(s)")
    policy = VerificationPolicy()
    local = LocalEntailmentVerifier(embedder, policy)
    anchoring = QuoteAnchoringVerifier(policy.quote_fuzzy_threshold, policy.quote_min_chars)
    cascade = CascadeVerifier(anchoring, local, None, policy)
    embedder.encode(["warm-up"])
    if args.speed:
        await speed(embedder, policy, args.limit, args.repeat)
        return 0
    learned = LocalEntailmentVerifier(embedder, replace(policy, local_combiner="learned"))
    for name in SETS:
        rows = load(name, args.limit)
        raw = [passage(i, r.evidence) for i, r in enumerate(rows)]
        ingested = ingest(raw, embedder)
        results = {
            "baseline": baseline(rows, ingested, embedder),
            "local": await measure(local, rows, raw, args.batch),
            "local (ingested)": await measure(local, rows, ingested, args.batch),
            "local (learned)": await measure(learned, rows, ingested, args.batch),
            "cascade (no judge)": await measure(cascade, rows, ingested, args.batch),
        }
        report(f"{name} ({len(rows)} claims, batch {args.batch})", results)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
