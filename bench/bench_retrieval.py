"""Knowledge base at scale: ingestion speed, query latency and retrieval quality on MedQuAD.

Data: ../shared/eval/kb/medquad_kb.jsonl, 16,407 NIH question-answer sections,
MedQuAD (Ben Abacha & Demner-Fushman 2019, CC BY 4.0).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_retrieval.py [--limit N] [--queries N]

Prints: ingestion time and sections/s (with the share spent encoding), resident memory, query latency
(median, p95, ratio to dense-only) for dense, lexical, hybrid, hybrid + re-rank and hybrid + question
matching (titles), and recall@5 / MRR@10
on two question sets, relevant = the section a question came from: questions derived from the section
titles (the title with its MedQuAD template wording removed, so the question is not the indexed title
string verbatim) and keyword queries of up to six content words from one body sentence. With
``--data-dir`` the index is kept; a second run measures queries only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gateway.bootstrap import open_store

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DATA = next(
    (
        root / "shared" / "eval" / "kb" / "medquad_kb.jsonl"
        for root in (REPO.parent, REPO.parents[1])  # a checkout beside shared/, or a worktree one deeper
        if (root / "shared" / "eval" / "kb" / "medquad_kb.jsonl").is_file()
    ),
    REPO.parent / "shared" / "eval" / "kb" / "medquad_kb.jsonl",
)

TIERS_BY_ORG = {
    "NLM Genetics Home Reference": "clinical_reference",
    "NIH Genetic and Rare Diseases Information Center (GARD)": "clinical_reference",
    "NLM MedlinePlus Health Topics": "clinical_reference",
    "National Cancer Institute (cancer.gov)": "clinical_reference",
    "National Institute of Diabetes and Digestive and Kidney Diseases": "clinical_reference",
    "National Institute of Neurological Disorders and Stroke": "clinical_reference",
    "National Heart, Lung, and Blood Institute": "clinical_reference",
    "Centers for Disease Control and Prevention": "guideline",
    "NIH SeniorHealth (NIA/NLM)": "educational",
}
"""Tier of each MedQuAD source (policies/tiers.yaml ids): NIH/NLM references are curated clinical
references, CDC pages are public-health guidance, NIHSeniorHealth is educational material."""

_TEMPLATE = re.compile(r"\((?:are|is)\)|\?", re.IGNORECASE)


def question_from_title(title: str) -> str:
    """'What is (are) Gout ?' -> 'what is gout': the template's '(are)' and spacing removed, lower-cased."""
    return " ".join(_TEMPLATE.sub(" ", title).split()).lower()


_STOPWORDS = frozenset(
    [
        "about",
        "after",
        "also",
        "been",
        "being",
        "between",
        "both",
        "could",
        "does",
        "during",
        "each",
        "from",
        "have",
        "having",
        "into",
        "more",
        "most",
        "other",
        "over",
        "should",
        "some",
        "such",
        "than",
        "that",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "under",
        "very",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "will",
        "with",
        "within",
        "without",
        "would",
        "your",
    ]
)


def question_from_text(text: str, rng: random.Random) -> str:
    """Up to six content words, in order, from one sentence of the section body (not its first).

    A second view next to the title questions, which favour whatever indexes the title: here the
    query shares words with the passage text only, as a patient's keyword search might.
    """
    from gateway.text import split_sentences

    sentences = [s for s in split_sentences(text) if len(s.split()) >= 8]
    if len(sentences) > 1:
        sentences = sentences[1:]
    if not sentences:
        return text[:80]
    words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}", rng.choice(sentences))]
    content = [w for w in dict.fromkeys(words) if w not in _STOPWORDS]
    if len(content) > 6:
        keep = sorted(rng.sample(range(len(content)), 6))
        content = [content[i] for i in keep]
    return " ".join(content)


def score_modes(
    store: Any, questions: list[tuple[str, str]], modes: dict[str, Any]
) -> dict[str, tuple[list[float], float, float]]:
    """Per mode: latencies (ms), recall@5 and MRR@10 at document level."""
    results: dict[str, tuple[list[float], float, float]] = {}
    for name, options in modes.items():
        latencies: list[float] = []
        hits5 = 0
        reciprocal = 0.0
        for question, relevant in questions:
            started = time.perf_counter()
            found = store.search_sync(question, 10, options=options)
            latencies.append((time.perf_counter() - started) * 1000)
            ids = [p.document_id for p in found]
            if relevant in ids[:5]:
                hits5 += 1
            if relevant in ids:
                reciprocal += 1 / (ids.index(relevant) + 1)
        results[name] = (latencies, hits5 / len(questions), reciprocal / len(questions))
    return results


def print_modes(results: dict[str, tuple[list[float], float, float]]) -> None:
    dense_median = statistics.median(results["dense"][0])
    dense_p95 = percentile(results["dense"][0], 0.95)
    print(
        f"{'mode':<15}{'median ms':>10}{'p95 ms':>9}{'x dense p50':>12}{'x dense p95':>12}"
        f"{'recall@5':>10}{'MRR@10':>8}"
    )
    for name, (latencies, recall, mrr) in results.items():
        median, p95 = statistics.median(latencies), percentile(latencies, 0.95)
        print(
            f"{name:<15}{median:>10.1f}{p95:>9.1f}{median / dense_median:>12.2f}{p95 / dense_p95:>12.2f}"
            f"{recall:>10.3f}{mrr:>8.3f}"
        )


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0, help="ingest only the first N sections")
    parser.add_argument("--queries", type=int, default=300, help="questions for quality and latency")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="keep the index here (default: a temporary directory); a second run on it measures queries "
        "against the kept index, and its ingestion figures are those of an unchanged re-ingest",
    )
    parser.add_argument(
        "--lexical-only", action="store_true", help="only the full-size BM25 figures (no model needed)"
    )
    args = parser.parse_args()
    if not DATA.is_file():
        sys.exit(f"{DATA} not found")
    lexical_at_scale(args.queries)
    if args.lexical_only:
        return

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)

    from gateway.knowledge.corpus import SourceDocument
    from gateway.knowledge.ingest import Ingestor
    from gateway.knowledge.loaders import iter_jsonl
    from gateway.knowledge.search_options import SearchOptions
    from gateway.models.embedding import Embedder
    from gateway.settings import Settings

    rows = list(iter_jsonl(DATA, tiers_by_org=TIERS_BY_ORG))
    if args.limit:
        rows = rows[: args.limit]
    documents = [r for r in rows if isinstance(r, SourceDocument)]
    print(f"MedQuAD (Ben Abacha & Demner-Fushman 2019, CC BY 4.0): {len(documents)} sections", flush=True)
    print(
        f"torch threads: {torch.get_num_threads()}, cpus: {os.cpu_count()}, "
        f"load average: {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    embedder = Embedder()
    base_rss = rss_mb()

    encode_seconds = 0.0
    original_encode = embedder.encode

    def timed_encode(texts):  # type: ignore[no-untyped-def]
        nonlocal encode_seconds
        started = time.perf_counter()
        try:
            return original_encode(texts)
        finally:
            encode_seconds += time.perf_counter() - started

    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.data_dir or Path(scratch)
        store = open_store(Settings(data_dir=tmp), embedder)
        embedder.encode = timed_encode  # type: ignore[method-assign]
        report = Ingestor(store, embedder, batch_documents=args.batch, progress=True).run(
            documents, total=len(documents)
        )
        embedder.encode = original_encode  # type: ignore[method-assign]
        summary = report.summary
        print(
            f"\ningestion: {report.seconds:.1f} s for {summary.added} sections = "
            f"{summary.added / report.seconds:.1f} sections/s; {summary.chunks_written} passages; "
            f"{report.sentences} sentences, {report.texts_encoded} distinct sentences and headings encoded; "
            f"encoding {encode_seconds:.1f} s ({100 * encode_seconds / report.seconds:.0f}%), "
            f"Chroma writes + commits {report.seconds - encode_seconds:.1f} s",
            flush=True,
        )
        started = time.perf_counter()
        again = Ingestor(store, embedder).run(documents)
        print(
            f"re-ingest unchanged: {time.perf_counter() - started:.1f} s, "
            f"{again.summary.unchanged} unchanged, {again.summary.chunks_written} written"
        )
        started = time.perf_counter()
        reopened = open_store(Settings(data_dir=tmp), embedder)
        print(f"reopen with BM25 cache: {time.perf_counter() - started:.2f} s")
        print(
            f"resident memory: {rss_mb():.0f} MB (model loaded: {base_rss:.0f} MB; "
            f"peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)",
            flush=True,
        )

        rng = random.Random(7)
        sample = rng.sample(documents, min(args.queries, len(documents)))
        plain = {"focus": False, "question_matching": False}
        modes = {
            "dense": SearchOptions(mode="dense", rerank=False, **plain),
            "lexical": SearchOptions(mode="lexical", rerank=False, **plain),
            "hybrid": SearchOptions(mode="hybrid", rerank=False, **plain),
            "hybrid+rerank": SearchOptions(mode="hybrid", rerank=True, **plain),
            "hybrid+titles": SearchOptions(mode="hybrid", rerank=False, focus=False),
        }
        question_sets = {
            "questions from section titles": [(question_from_title(d.title), d.id) for d in sample],
            "keyword queries from section text": [(question_from_text(d.text, rng), d.id) for d in sample],
        }
        for question, _ in question_sets["questions from section titles"][:10]:  # warm-up
            reopened.search_sync(question, 10)
        for label, questions in question_sets.items():
            print(f"\nqueries: {len(questions)} {label}, k=10, {reopened.count_sync()} passages")
            print_modes(score_modes(reopened, questions, modes))
        print(json.dumps({"sections": len(documents), "ingest_seconds": round(report.seconds, 1)}))


def lexical_at_scale(queries: int) -> None:
    """BM25 over the whole corpus (chunked exactly as ingestion does): build time, latency, quality."""
    from gateway.knowledge.chunking import chunk_document
    from gateway.knowledge.corpus import SourceDocument
    from gateway.knowledge.lexical import LexicalIndex
    from gateway.knowledge.loaders import iter_jsonl

    documents = [r for r in iter_jsonl(DATA, tiers_by_org=TIERS_BY_ORG) if isinstance(r, SourceDocument)]
    started = time.perf_counter()
    chunks = [(d, c) for d in documents for c in chunk_document(d)]
    chunk_seconds = time.perf_counter() - started
    index = LexicalIndex()
    started = time.perf_counter()
    for document, chunk in chunks:
        index.add(
            f"{chunk.id}@x", f"{document.title} {chunk.section} {chunk.text}", document.tier, document.org
        )
    index.search("warm up", 1)
    build_seconds = time.perf_counter() - started
    sample = random.Random(7).sample(documents, min(queries, len(documents)))
    latencies: list[float] = []
    hits5 = 0
    reciprocal = 0.0
    for document in sample:
        started = time.perf_counter()
        hits = index.search(question_from_title(document.title), 30)
        latencies.append((time.perf_counter() - started) * 1000)
        ids = list(dict.fromkeys(h.record_id.rsplit("@", 1)[0].rsplit(":", 1)[0] for h in hits))[:10]
        hits5 += document.id in ids[:5]
        reciprocal += 1 / (ids.index(document.id) + 1) if document.id in ids else 0.0
    print(
        f"BM25 at full size: {len(documents)} sections -> {len(chunks)} passages "
        f"(chunking {chunk_seconds:.1f} s); index build {build_seconds:.1f} s; query median "
        f"{statistics.median(latencies):.2f} ms, p95 {percentile(latencies, 0.95):.2f} ms; "
        f"recall@5 {hits5 / len(sample):.3f}, MRR@10 {reciprocal / len(sample):.3f} "
        f"({len(sample)} questions)",
        flush=True,
    )


if __name__ == "__main__":
    main()
