"""MiniLM encoding per runtime: ms per call by texts per call, and how far the runtimes' vectors agree.

Run: ``HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_encoding.py [--calls 40] [--agreement 3000]``

Runtimes, each an ``Embedder`` with one model thread and no cache (so every call reaches the model):
torch bf16 (the default on CPUs with native bfloat16), torch fp32, and ONNX Runtime fp32 and int8
(exported into ``--cache``; a serving process uses one of them, by ``GATEWAY_EMBEDDING_ONNX_WEIGHTS``,
for calls of up to ``ONNX_MAX_TEXTS`` texts). Timing:
``--calls`` rounds; each round times, for every batch size, one call per runtime (the order rotating),
each on texts the previous calls did not have: patients' questions (``bench/data/patient_questions.jsonl``)
and claims (``../shared/eval/claims``). Prints median and p95 ms per call, the ratio of each median to
torch bf16's, and the load average before and after.

Agreement (``--agreement N``, 0 to skip): N distinct texts (claims, knowledge-base sentences, triage
questions, from ``../shared/eval``) encoded by each runtime in calls of 32; prints min and mean cosine of
ONNX Runtime's vectors (fp32 and int8) to torch fp32's and to torch bf16's (and bf16 to fp32), then,
for the first 256 texts, each runtime's vector of a text encoded alone against the same text in a
call of 16 (what coalescing with other requests' texts can change). Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.domain import Vector
from gateway.models.embedding import Embedder

REPO = Path(__file__).resolve().parents[1]
EVAL = REPO.parent / "shared" / "eval"
QUESTIONS = REPO / "bench" / "data" / "patient_questions.jsonl"
SIZES = (1, 2, 3, 4, 8, 16)


def rows(path: Path) -> Iterator[dict[str, str]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            yield json.loads(line)


def timing_texts() -> list[str]:
    """Patients' questions and claims, shuffled (seeded): what a serving process encodes per request."""
    texts = [row["question"] for row in rows(QUESTIONS)]
    claims = EVAL / "claims" / "checkcovid_dev.jsonl"
    if claims.is_file():
        texts += [row["claim"] for row in rows(claims)]
    texts = list(dict.fromkeys(texts))
    random.Random(7).shuffle(texts)
    return texts


def agreement_texts(count: int) -> list[str]:
    """``count`` distinct texts: a third claims, a third knowledge-base sentences, a third questions."""
    per_kind = -(-count // 3)
    kinds: list[list[str]] = [[], [], []]
    for name in ("checkcovid_dev", "kqa_dev", "scifact_rte", "covidfact"):
        kinds[0] += [row["claim"] for row in rows(EVAL / "claims" / f"{name}.jsonl")]
    for row in itertools.islice(rows(EVAL / "kb" / "medquad_kb.jsonl"), 2000):
        kinds[1] += [s for s in re.split(r"(?<=[.?!])\s+", row["text"]) if len(s.split()) >= 4]
    kinds[2] += [row["text"] for row in rows(EVAL / "triage" / "clinical.jsonl")]
    kinds[2] += [row["text"] for row in rows(EVAL / "triage" / "non_clinical.jsonl")]
    chosen: list[str] = []
    for kind in kinds:
        distinct = list(dict.fromkeys(kind))
        random.Random(11).shuffle(distinct)
        chosen += distinct[:per_kind]
    return list(dict.fromkeys(chosen))[:count]


def runtimes(cache: Path) -> dict[str, Embedder]:
    return {
        "torch bf16": Embedder(precision="bf16", threads=1, cache_size=0),
        "torch fp32": Embedder(precision="fp32", threads=1, cache_size=0),
        "ORT fp32": Embedder(precision="fp32", threads=1, cache_size=0, onnx_dir=cache, onnx_weights="fp32"),
        "ORT int8": Embedder(precision="fp32", threads=1, cache_size=0, onnx_dir=cache, onnx_weights="int8"),
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def timing(embedders: dict[str, Embedder], calls: int) -> None:
    texts = timing_texts()
    needed = calls * sum(SIZES)
    print(f"{len(texts)} texts for {needed} texts per runtime (they repeat past that)")
    names = list(embedders)
    for embedder in embedders.values():
        embedder.encode(texts[:4])  # warm-up
    times: dict[tuple[str, int], list[float]] = {(n, b): [] for n in names for b in SIZES}
    start = 0
    load_before = load()
    for round_number in range(calls):
        for size in SIZES:
            batch = [texts[(start + i) % len(texts)] for i in range(size)]
            start += size
            shift = round_number % len(names)
            for name in names[shift:] + names[:shift]:
                began = time.perf_counter()
                embedders[name].encode(batch)
                times[(name, size)].append((time.perf_counter() - began) * 1000)
    print(f"load average before {load_before}, after {load()}; {calls} calls per cell, ms per call")
    print()
    header = " | ".join(f"{n} median / p95" for n in names)
    ratios = " | ".join(f"{n} / bf16" for n in names if n != "torch bf16")
    print(f"| texts per call | {header} | {ratios} |")
    print("| --- " * (1 + len(names) + len(names) - 1) + "|")
    for size in SIZES:
        medians = {n: statistics.median(times[(n, size)]) for n in names}
        cells = " | ".join(f"{medians[n]:.1f} / {percentile(times[(n, size)], 0.95):.1f}" for n in names)
        ratio = " | ".join(f"{medians[n] / medians['torch bf16']:.2f}" for n in names if n != "torch bf16")
        print(f"| {size} | {cells} | {ratio} |")


def encode_in_calls(embedder: Embedder, texts: list[str], size: int) -> Vector:
    return np.concatenate([embedder.encode(texts[i : i + size]) for i in range(0, len(texts), size)])


def agreement(embedders: dict[str, Embedder], count: int) -> None:
    texts = agreement_texts(count)
    vectors = {name: encode_in_calls(embedder, texts, 32) for name, embedder in embedders.items()}
    print(f"\n{len(texts)} distinct texts (claims, MedQuAD sentences, triage questions), calls of 32:")
    print("| vectors | min cosine | mean cosine |")
    print("| --- | --- | --- |")
    pairs = (
        ("ORT fp32", "torch fp32"),
        ("ORT fp32", "torch bf16"),
        ("torch bf16", "torch fp32"),
        ("ORT int8", "torch fp32"),
        ("ORT int8", "torch bf16"),
    )
    for a, b in pairs:
        cosines = (vectors[a] * vectors[b]).sum(axis=1)
        print(f"| {a} to {b} | {cosines.min():.7f} | {cosines.mean():.7f} |")
    sample = texts[:256]
    print("\nThe same text alone and in a call of 16 (256 texts):")
    print("| runtime | min cosine | identical rows |")
    print("| --- | --- | --- |")
    for name, embedder in embedders.items():
        alone = encode_in_calls(embedder, sample, 1)
        grouped = encode_in_calls(embedder, sample, 16)
        cosines = (alone * grouped).sum(axis=1)
        same = float(np.mean(np.all(alone == grouped, axis=1)))
        print(f"| {name} | {cosines.min():.7f} | {same:.0%} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=40, help="timed calls per runtime and batch size")
    parser.add_argument("--agreement", type=int, default=3000, help="texts for the cosine check (0: skip)")
    parser.add_argument(
        "--cache", type=Path, help="directory of the exported graph (default: a temporary one)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        cache = args.cache or Path(scratch)
        began = time.perf_counter()
        embedders = runtimes(cache)
        print(f"runtimes loaded in {time.perf_counter() - began:.1f} s (ORT graph in {cache})")
        if args.calls:
            timing(embedders, args.calls)
        if args.agreement:
            agreement(embedders, args.agreement)


if __name__ == "__main__":
    main()
