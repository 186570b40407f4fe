"""Calibrate the context-relevance gate (``retrieval.min_relevance``) on the bundled corpus.

Indexes the bundled knowledge base into a temporary Chroma store, retrieves for the questions of
``bench/relevance_questions.yaml`` (covered by the corpus vs not covered), and prints the best-passage
relevance of each group and, per candidate threshold, how many covered questions would be refused and
how many uncovered ones let through. The store searches as the gateway does (question focus,
vocabulary, question matching); ``--plain`` searches the questions as written.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/calibrate_relevance.py [--plain]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

from gateway.bootstrap import open_store

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.serving_encoder import add_serving_encoder_arguments  # noqa: E402

QUESTIONS = REPO / "bench" / "relevance_questions.yaml"
CANDIDATES = (0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60)
TOP_K = 5


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--plain", action="store_true", help="no question focus, vocabulary or title matching"
    )
    add_serving_encoder_arguments(parser, "the queries (small calls)")
    args = parser.parse_args()

    from gateway.knowledge.loaders import load_manifest
    from gateway.knowledge.query import load_planner
    from gateway.knowledge.search_options import SearchOptions
    from gateway.models.embedding import Embedder
    from gateway.policies import load_policy
    from gateway.resources import bundled
    from gateway.settings import Settings

    questions = yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))
    embedder = Embedder(onnx_dir=args.onnx_cache, onnx_weights=args.onnx_weights)
    print(f"MiniLM: {embedder.runtime}")
    options = SearchOptions(focus=not args.plain, question_matching=not args.plain)
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(
            Settings(data_dir=Path(tmp)), embedder, options=options, planner=load_planner(bundled("policies"))
        )
        store.upsert_documents(load_manifest(bundled("knowledge")))
        best = {
            group: [(max((p.score for p in store.search_sync(q, TOP_K)), default=0.0), q) for q in qs]
            for group, qs in questions.items()
        }
    current = load_policy(bundled("policies"), "general").thresholds.retrieval.min_relevance
    for group, scored in best.items():
        values = [s for s, _ in scored]
        print(
            f"{group:12s} n={len(values):3d} min={min(values):.3f} "
            f"median={statistics.median(values):.3f} max={max(values):.3f}"
        )
    print(f"\nthreshold  covered_refused  uncovered_answered   (policy now: {current})")
    for threshold in CANDIDATES:
        refused = sum(1 for s, _ in best["covered"] if s < threshold)
        leaked = sum(1 for s, _ in best["not_covered"] if s >= threshold)
        print(
            f"{threshold:9.2f}  {refused:3d}/{len(best['covered'])}"
            f"          {leaked:3d}/{len(best['not_covered'])}"
        )
    print("\nclosest calls:")
    for s, q in sorted(best["covered"])[:5]:
        print(f"  covered     {s:.3f}  {q}")
    for s, q in sorted(best["not_covered"], reverse=True)[:5]:
        print(f"  not covered {s:.3f}  {q}")


if __name__ == "__main__":
    main()
