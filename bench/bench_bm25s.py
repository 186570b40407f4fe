"""BM25 at 16k sections: the gateway's own index (``knowledge/lexical.py``) against bm25s, side by side.

#18 asked whether a well-kept library such as bm25s measures faster. Both index the same passages
(MedQuAD chunked exactly as ingestion does, title + section + text) with the same tokens (the
gateway's ``tokenize``: lower-case, accent-folded, stemmed, stop words out) and the same BM25 (Lucene
idf, k1 1.2, b 0.75), so only the implementation differs. Printed: build seconds, query median and p95
(top 30, one query at a time, as a request asks), and recall@5 / MRR@10 of the section a title question
came from, with the ratio of bm25s to the gateway's index. bm25s is not a dependency: install it to run
this (``.venv/bin/pip install bm25s==0.3.16``).

    .venv/bin/python bench/bench_bm25s.py [--queries 300]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.bench_retrieval import DATA, TIERS_BY_ORG, percentile, question_from_title  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    import bm25s

    from gateway.knowledge.chunking import chunk_document
    from gateway.knowledge.corpus import SourceDocument
    from gateway.knowledge.lexical import LexicalIndex, tokenize
    from gateway.knowledge.loaders import iter_jsonl

    documents = [r for r in iter_jsonl(DATA, tiers_by_org=TIERS_BY_ORG) if isinstance(r, SourceDocument)]
    chunks = [(d, c) for d in documents for c in chunk_document(d)]
    texts = [f"{d.title} {c.section} {c.text}" for d, c in chunks]
    owners = [d.id for d, _ in chunks]

    started = time.perf_counter()
    own = LexicalIndex()
    for i, ((document, _), text) in enumerate(zip(chunks, texts, strict=True)):
        own.add(str(i), text, document.tier, document.org)
    own.search("warm up", 1)
    own_build = time.perf_counter() - started

    started = time.perf_counter()
    library = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    library.index([tokenize(text) for text in texts], show_progress=False)
    library_build = time.perf_counter() - started

    def ours(question: str) -> list[int]:
        return [int(hit.record_id) for hit in own.search(question, 30)]

    def theirs(question: str) -> list[int]:
        tokens = tokenize(question) or ["__none__"]
        found, _ = library.retrieve([tokens], k=30, show_progress=False, n_threads=1)
        return [int(i) for i in found[0]]

    sample = random.Random(7).sample(documents, min(args.queries, len(documents)))
    questions = [(question_from_title(d.title), d.id) for d in sample]
    results = {name: measure(run, questions, owners) for name, run in (("gateway", ours), ("bm25s", theirs))}
    print(f"{len(documents)} sections -> {len(chunks)} passages; {len(questions)} title questions, top 30")
    print(f"build: gateway {own_build:.1f} s, bm25s {library_build:.1f} s (tokenising included)")
    print(f"{'index':10}{'median ms':>11}{'p95 ms':>9}{'recall@5':>10}{'MRR@10':>9}")
    for name, (latencies, recall, mrr) in results.items():
        print(
            f"{name:10}{statistics.median(latencies):11.2f}{percentile(latencies, 0.95):9.2f}"
            f"{recall:10.3f}{mrr:9.3f}"
        )
    ratio = statistics.median(results["bm25s"][0]) / statistics.median(results["gateway"][0])
    print(f"bm25s / gateway, median: {ratio:.2f}x")


def measure(
    run: Callable[[str], list[int]], questions: list[tuple[str, str]], owners: list[str]
) -> tuple[list[float], float, float]:
    latencies: list[float] = []
    hits5 = 0
    reciprocal = 0.0
    for question, wanted in questions:
        started = time.perf_counter()
        found = run(question)
        latencies.append((time.perf_counter() - started) * 1000)
        ids = list(dict.fromkeys(owners[i] for i in found))[:10]
        hits5 += wanted in ids[:5]
        reciprocal += 1 / (ids.index(wanted) + 1) if wanted in ids else 0.0
    return latencies, hits5 / len(questions), reciprocal / len(questions)


if __name__ == "__main__":
    main()
