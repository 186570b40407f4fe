"""Retrieval on patients' questions: recall, MRR, the relevance gate and latency, per configuration.

Questions: ``bench/data/patient_questions.jsonl`` (see bench/data/README.md): questions written in
patients' words (greetings, backstory, misspellings, brand names, lay words, some with two
questions), each with the MedQuAD sections that answer it, plus questions the knowledge base does
not cover. Knowledge base: ../shared/eval/kb/medquad_kb.jsonl, MedQuAD (Ben Abacha &
Demner-Fushman 2019, CC BY 4.0).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_patient_questions.py --data-dir /work/kb16k
    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_patient_questions.py --subset 2000 --data-dir /tmp/kb2k

With ``--data-dir`` an index already built there (``bench_retrieval.py --data-dir``) is used as it
is; ``--subset N`` first ingests (idempotently) every answering section plus random others up to N.
Prints, per configuration: recall@5, recall@10 and MRR@10 at section level (a question is found when
any of its answering sections is), latency median / p95 (planning, encoding and search), and through
the relevance gate (``retrieval.min_relevance`` of the policy) how many covered questions would be
answered and how many uncovered ones would be let through; then the same two rates per threshold.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.serving_encoder import add_serving_encoder_arguments  # noqa: E402

QUESTIONS = REPO / "bench" / "data" / "patient_questions.jsonl"
THRESHOLDS = (0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def configurations() -> dict[str, Any]:
    from gateway.knowledge.store import SearchOptions

    plain = {"focus": False, "question_matching": False}
    return {
        "dense": SearchOptions(mode="dense", **plain),
        "bm25": SearchOptions(mode="lexical", **plain),
        "hybrid": SearchOptions(mode="hybrid", **plain),
        "hybrid+focus+vocab": SearchOptions(mode="hybrid", focus=True, question_matching=False),
        "hybrid+questions": SearchOptions(mode="hybrid", focus=False, question_matching=True),
        "hybrid+focus+vocab+questions": SearchOptions(mode="hybrid", focus=True, question_matching=True),
    }


def evaluate(store: Any, questions: list[dict[str, Any]], options: Any, k: int = 10) -> dict[str, Any]:
    latencies: list[float] = []
    found5 = found10 = 0
    multi_found = multi = 0
    reciprocal = 0.0
    best: list[tuple[float, bool]] = []
    misses: list[str] = []
    for item in questions:
        started = time.perf_counter()
        passages = store.search_sync(item["question"], k, options=options)
        latencies.append((time.perf_counter() - started) * 1000)
        top = max((p.score for p in passages[:5]), default=0.0)
        relevant = set(item["relevant"])
        best.append((top, bool(relevant)))
        if not relevant:
            continue
        ranks = [i for i, p in enumerate(passages) if p.document_id in relevant]
        if item.get("two_questions"):  # both questions answered in the top 10
            multi += 1
            found = {p.document_id for p in passages}
            multi_found += all(found & set(ids) for ids in item["relevant_by_question"])
        if ranks:
            found10 += 1
            found5 += ranks[0] < 5
            reciprocal += 1 / (ranks[0] + 1)
        else:
            misses.append(item["id"])
    covered = sum(1 for q in questions if q["relevant"])
    return {
        "latencies": latencies,
        "recall5": found5 / covered,
        "recall10": found10 / covered,
        "mrr10": reciprocal / covered,
        "multi10": multi_found / max(1, multi),
        "best": best,
        "misses": misses,
    }


def gate_rates(best: list[tuple[float, bool]], threshold: float) -> tuple[float, float]:
    """(share of covered questions answered, share of uncovered questions answered)."""
    covered = [s for s, c in best if c]
    uncovered = [s for s, c in best if not c]
    answered = sum(s >= threshold for s in covered) / max(1, len(covered))
    leaked = sum(s >= threshold for s in uncovered) / max(1, len(uncovered))
    return answered, leaked


def open_store(args: argparse.Namespace, questions: list[dict[str, Any]]) -> Any:
    from bench.bench_retrieval import DATA, TIERS_BY_ORG
    from gateway.knowledge.corpus import SourceDocument
    from gateway.knowledge.embedding import Embedder
    from gateway.knowledge.ingest import Ingestor
    from gateway.knowledge.loaders import iter_jsonl
    from gateway.knowledge.query import load_planner
    from gateway.knowledge.store import ChromaStore
    from gateway.resources import bundled
    from gateway.settings import Settings

    embedder = Embedder(onnx_dir=args.onnx_cache, onnx_weights=args.onnx_weights)
    print(f"MiniLM: {embedder.runtime}", flush=True)
    planner = load_planner(args.policies or bundled("policies"))
    store = ChromaStore.open(Settings(data_dir=args.data_dir), embedder, planner=planner)
    if args.subset:
        wanted = {i for q in questions for i in q["relevant"]}
        documents = [r for r in iter_jsonl(DATA, tiers_by_org=TIERS_BY_ORG) if isinstance(r, SourceDocument)]
        chosen = [d for d in documents if d.id in wanted]
        others = [d for d in documents if d.id not in wanted]
        chosen += random.Random(15).sample(others, max(0, args.subset - len(chosen)))
        started = time.perf_counter()
        report = Ingestor(store, embedder, progress=True).run(chosen, total=len(chosen))
        print(
            f"subset: {len(chosen)} sections ({len(wanted)} answering ones); ingest {report.seconds:.1f} s, "
            f"{report.summary.added} added, {report.summary.unchanged} unchanged "
            f"({time.perf_counter() - started:.1f} s)",
            flush=True,
        )
    return store


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, required=True, help="index directory (kept)")
    parser.add_argument("--subset", type=int, default=0, help="ingest answering sections + others up to N")
    parser.add_argument("--policies", type=Path, help="policy directory (default: the bundled one)")
    parser.add_argument("--only", nargs="*", help="configurations to run (default: all)")
    parser.add_argument("--misses", action="store_true", help="print the questions the last one missed")
    add_serving_encoder_arguments(parser, "the queries (small calls)")
    args = parser.parse_args()

    from gateway.policy.loader import load_policy
    from gateway.resources import bundled

    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line]
    store = open_store(args, questions)
    policy = load_policy(args.policies or bundled("policies"), "general").thresholds.retrieval
    covered = sum(1 for q in questions if q["relevant"])
    print(
        f"MedQuAD (Ben Abacha & Demner-Fushman 2019, CC BY 4.0): {store.count_sync()} passages; "
        f"{covered} covered + {len(questions) - covered} uncovered patient questions; "
        f"gate min_relevance {policy.min_relevance}; load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    for question in questions[:5]:  # warm-up: model, HNSW pages, lexicon
        store.search_sync(question["question"], 10)
    results: dict[str, dict[str, Any]] = {}
    print(
        f"\n{'configuration':<30}{'R@5':>7}{'R@10':>7}{'MRR@10':>8}{'p50 ms':>8}{'p95 ms':>8}"
        f"{'x hyb p95':>10}{'answered':>10}{'leaked':>8}{'2q both@10':>11}"
    )
    for name, options in configurations().items():
        if args.only and name not in args.only:
            continue
        result = evaluate(store, questions, options)
        results[name] = result
        answered, leaked = gate_rates(result["best"], policy.min_relevance)
        p95 = percentile(result["latencies"], 0.95)
        base = percentile(results["hybrid"]["latencies"], 0.95) if "hybrid" in results else float("nan")
        print(
            f"{name:<30}{result['recall5']:>7.3f}{result['recall10']:>7.3f}{result['mrr10']:>8.3f}"
            f"{statistics.median(result['latencies']):>8.1f}{p95:>8.1f}{p95 / base:>10.2f}"
            f"{answered:>10.3f}{leaked:>8.3f}{result['multi10']:>11.3f}",
            flush=True,
        )
    last = list(results)[-1]
    print(f"\nrelevance gate, {last}: threshold, covered answered, uncovered answered")
    for threshold in THRESHOLDS:
        answered, leaked = gate_rates(results[last]["best"], threshold)
        print(f"  {threshold:.2f}  {answered:.3f}  {leaked:.3f}")
    if args.misses:
        by_id = {q["id"]: q for q in questions}
        for qid in results[last]["misses"]:
            print(f"  missed {qid}: {by_id[qid]['question'][:110]}  -> {by_id[qid]['answers']}")
            print(f"     plan: {[p.text[:90] for p in store.plan(by_id[qid]['question'])]}")
    print(json.dumps({name: {"recall10": round(r["recall10"], 3)} for name, r in results.items()}))


if __name__ == "__main__":
    main()
