"""What one search costs once its question is encoded: Chroma calls side by side, and the whole search.

The bundled corpus is indexed in a temporary directory; every question is encoded first, so the
figures leave MiniLM out. Printed: median and p95 ms per call of a passages query asking for
documents + metadata + distances (what a search asked before #18) against ids + distances (what it
asks now) and against the exact search in memory (``exact.py``, what a search of a collection of up
to ``EXACT_MAX_PASSAGES`` does now), the titles query both ways, the registry version read, and
``search_sync`` with the record cache cold (first time a passage is read) and warm, then warm with
the dense search asked of Chroma.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_search_trips.py [--questions 60]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
QUESTIONS = REPO / "gateway" / "evaluation" / "questions" / "bundled.jsonl"
"""The bundled corpus's evaluation questions: they reach most of its documents, so a first pass reads
records the cache does not hold yet."""


def timed(label: str, call: Callable[[int], object], n: int) -> float:
    samples = []
    for i in range(n):
        started = time.perf_counter()
        call(i)
        samples.append((time.perf_counter() - started) * 1000)
    ordered = sorted(samples)
    p95 = ordered[min(n - 1, round(0.95 * (n - 1)))]
    median = statistics.median(samples)
    print(f"{label:52s} median {median:6.2f} ms   p95 {p95:6.2f} ms")
    return median


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--questions", type=int, default=67, help="questions asked (67: each bundled one once)"
    )
    args = parser.parse_args()
    from gateway.bootstrap import build_services
    from gateway.knowledge import store as store_module
    from gateway.knowledge.records import STATE_ID
    from gateway.knowledge.store import EXACT_MAX_PASSAGES, ChromaStore
    from gateway.settings import Settings

    services = build_services(Settings(data_dir=Path(tempfile.mkdtemp())))
    store = services.store
    assert isinstance(store, ChromaStore)
    asked = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line.strip()]
    questions = [
        asked[i % len(asked)] + ("" if i < len(asked) else f" (asked again, {i})")
        for i in range(args.questions)
    ]
    n = len(questions)
    # in calls small enough for the embedder's cache, so that the searches find every question encoded
    vectors = np.concatenate([services.embedder.encode(questions[i : i + 32]) for i in range(0, n, 32)])
    passages, titles = store._passages, store._titles._collection
    print(f"bundled corpus: {store.count_sync()} passages; {n} questions, encoded beforehand")
    full = timed(
        "passages query: documents, metadatas, distances",
        lambda i: passages.query(
            query_embeddings=vectors[i : i + 1],
            n_results=48,
            include=["documents", "metadatas", "distances"],
        ),
        n,
    )
    ids = timed(
        "passages query: ids and distances",
        lambda i: passages.query(query_embeddings=vectors[i : i + 1], n_results=48, include=["distances"]),
        n,
    )
    print(f"{'':52s} ratio {ids / full:.2f}x")
    exact = timed(
        "passages exact in memory (exact.py)",
        lambda i: store._exact_passages.nearest(
            vectors[i : i + 1],
            48,
            store.version,
            lambda: store.committed_record_ids(store.version),
            EXACT_MAX_PASSAGES,
        ),
        n,
    )
    print(f"{'':52s} ratio to the ids query {exact / ids:.2f}x")
    timed(
        "titles query: metadatas, distances",
        lambda i: titles.query(
            query_embeddings=vectors[i : i + 1], n_results=40, include=["metadatas", "distances"]
        ),
        n,
    )
    timed(
        "titles query: ids and distances",
        lambda i: titles.query(query_embeddings=vectors[i : i + 1], n_results=40, include=["distances"]),
        n,
    )
    timed("registry version read", lambda i: store._registry.get(ids=[STATE_ID], include=["metadatas"]), n)
    store._records = type(store._records)(passages, store._vectors, services.embedder.dimensions)
    cold = timed("search_sync, record cache cold", lambda i: store.search_sync(questions[i], 8), n)
    warm = timed("search_sync, record cache warm", lambda i: store.search_sync(questions[i], 8), n)
    print(f"{'':52s} ratio {warm / cold:.2f}x; records cached: {len(store._records)}")
    store_module.EXACT_MAX_PASSAGES = 0  # the dense search asked of Chroma, as before
    chroma = timed(
        "search_sync, record cache warm, dense by Chroma", lambda i: store.search_sync(questions[i], 8), n
    )
    print(f"{'':52s} exact / Chroma {warm / chroma:.2f}x")


if __name__ == "__main__":
    main()
