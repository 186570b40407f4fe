"""Retrieval on patients' questions: recall, MRR, the relevance gate and latency, per configuration.

Question sets (bench/data/README.md), all written for this project in patients' words:

* ``own``: ``bench/data/patient_questions.jsonl``, 298 covered + 30 uncovered questions (#15), the set
  the query planner was first built on;
* ``tune`` and ``test``: the two halves of ``bench/data/patient_questions_dev.jsonl`` (#32), 343
  questions on topics the ``own`` set does not use (long posts with the question buried, third person,
  misspellings, lay words). ``tune`` is the half retrieval work may look at; ``test`` is never tuned
  on: only its aggregates are printed (``--misses`` lists ``own`` and ``tune`` misses only).

Knowledge base: ../shared/eval/kb/medquad_kb.jsonl, MedQuAD (Ben Abacha & Demner-Fushman 2019,
CC BY 4.0).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_patient_questions.py --data-dir /tmp/kb16k
    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_patient_questions.py --subset 2000 --data-dir /tmp/kb2k
    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_patient_questions.py --data-dir /tmp/kb16k --modes

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_patient_questions.py --data-dir /tmp/kb16k --latency
    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_patient_questions.py --bm25-full

``--latency`` times the configurations taking turns on every question (a shared machine's load then
falls on each alike) and prints median, p95 and the p95 ratio to the baseline. ``--bm25-full`` needs
no index: BM25 alone over the whole knowledge base (chunked as ingestion does, about a minute),
baseline and current planner, the one full-size figure when the 16k dense index cannot be built.
With ``--data-dir`` an index already built there (``bench_retrieval.py --data-dir``) is used as it
is; ``--subset N`` first ingests (idempotently) every answering section plus random others up to N.
By default two configurations are compared on each set, side by side: ``baseline`` (the serving
defaults as they were before #32: the query policies of git revision ``--baseline-rev`` and the #32
search features off) and ``current`` (the serving defaults now). ``--modes`` adds the retriever
ablations (dense, BM25, hybrid, with and without focus and question matching) on the ``own`` set.
Prints, per set and configuration: recall@5, recall@10 and MRR@10 at section level (a question is
found when any of its answering sections is), latency median / p95 (planning, encoding and search),
and through the relevance gate (``retrieval.min_relevance`` of the policy) how many covered
questions would be answered and how many uncovered ones would be let through.
"""

from __future__ import annotations

import argparse
import dataclasses
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
DEV_QUESTIONS = REPO / "bench" / "data" / "patient_questions_dev.jsonl"
BASELINE_REV = "b3210d3"
"""The last commit before #32: its query policies are the baseline's."""
THRESHOLDS = (0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60)
SETS = ("own", "tune", "test")
REPORTED_ONLY = frozenset({"test"})
"""Sets never looked at question by question: no misses, no per-question output."""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def load_sets(names: list[str]) -> dict[str, list[dict[str, Any]]]:
    own = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line]
    dev = [json.loads(line) for line in DEV_QUESTIONS.read_text(encoding="utf-8").splitlines() if line]
    found = {"own": own, "tune": [q for q in dev if q["split"] == "tune"]}
    found["test"] = [q for q in dev if q["split"] == "test"]
    return {name: found[name] for name in names}


def baseline_planner(rev: str) -> Any:
    """The query planner with the policies of git revision ``rev`` (``git show``), or None."""
    import subprocess
    import tempfile

    from gateway.knowledge.query import load_planner

    directory = Path(tempfile.mkdtemp(prefix="baseline-policies-"))
    for name in ("query.yaml", "vocabulary.yaml"):
        shown = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{rev}:policies/{name}"],
            capture_output=True,
            text=True,
            check=False,
        )
        if shown.returncode != 0:
            print(f"baseline: cannot read policies/{name} at {rev}: {shown.stderr.strip()}", flush=True)
            return None
        (directory / name).write_text(shown.stdout, encoding="utf-8")
    return load_planner(directory)


def baseline_options() -> Any:
    """The serving defaults before #32: the same retrievers, with the search features #32 added off."""
    from gateway.knowledge.search_options import SearchOptions

    return SearchOptions()


def modes() -> dict[str, Any]:
    from gateway.knowledge.search_options import SearchOptions

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
    covered = max(1, sum(1 for q in questions if q["relevant"]))
    return {
        "latencies": latencies,
        "recall5": found5 / covered,
        "recall10": found10 / covered,
        "mrr10": reciprocal / covered,
        "multi10": multi_found / max(1, multi),
        "multi": multi,
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


def open_store(args: argparse.Namespace, questions: list[dict[str, Any]]) -> tuple[Any, Any]:
    from bench.bench_retrieval import DATA, TIERS_BY_ORG
    from gateway import bootstrap
    from gateway.knowledge.corpus import SourceDocument
    from gateway.knowledge.ingest import Ingestor
    from gateway.knowledge.loaders import iter_jsonl
    from gateway.knowledge.query import load_planner
    from gateway.models.embedding import Embedder
    from gateway.resources import bundled
    from gateway.settings import Settings

    # no text cache: a configuration must not find its query encoded by the one run before it
    embedder = Embedder(onnx_dir=args.onnx_cache, onnx_weights=args.onnx_weights, cache_size=0)
    print(f"MiniLM: {embedder.runtime}", flush=True)
    planner = load_planner(args.policies or bundled("policies"))
    store = bootstrap.open_store(Settings(data_dir=args.data_dir), embedder, planner=planner)
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
    return store, embedder


HEADER = (
    f"{'set':<6}{'configuration':<30}{'n':>5}{'R@5':>7}{'R@10':>7}{'MRR@10':>8}{'p50 ms':>8}{'p95 ms':>8}"
    f"{'answered':>10}{'leaked':>8}{'2q both@10':>11}"
)


def row(set_name: str, name: str, result: dict[str, Any], n: int, threshold: float) -> str:
    answered, leaked = gate_rates(result["best"], threshold)
    both = f"{result['multi10']:>11.3f}" if result["multi"] else f"{'-':>11}"
    return (
        f"{set_name:<6}{name:<30}{n:>5}{result['recall5']:>7.3f}{result['recall10']:>7.3f}"
        f"{result['mrr10']:>8.3f}{statistics.median(result['latencies']):>8.1f}"
        f"{percentile(result['latencies'], 0.95):>8.1f}{answered:>10.3f}{leaked:>8.3f}{both}"
    )


def full_bm25_index(title_weight: int, cache: Path | None) -> Any:
    """BM25 over the whole knowledge base, chunked and indexed as ingestion does (about a minute),
    or loaded from ``cache`` when it was saved there for this file and analyzer (stemmer, title weight)."""
    from bench.bench_retrieval import DATA, TIERS_BY_ORG
    from gateway.knowledge.chunking import chunk_document
    from gateway.knowledge.corpus import SourceDocument
    from gateway.knowledge.lexical import LexicalIndex
    from gateway.knowledge.loaders import iter_jsonl
    from gateway.knowledge.records import lexical_text

    stat = DATA.stat()
    version = f"{DATA.name}:{stat.st_size}:{stat.st_mtime_ns}"
    path = cache / f"medquad-title{title_weight}.bm25.npz" if cache is not None else None
    index = LexicalIndex.load(path, version, title_weight) if path is not None else None
    if index is not None:
        return index
    index = LexicalIndex(title_weight)
    for document in iter_jsonl(DATA, tiers_by_org=TIERS_BY_ORG):
        if isinstance(document, SourceDocument):
            for chunk in chunk_document(document):
                text = lexical_text(chunk.section, chunk.text)
                index.add(chunk.id, text, document.tier, document.org, document.title)
    if path is not None:
        index.save(path, version)
    return index


def bm25_full(
    sets: dict[str, list[dict[str, Any]]], planners: list[tuple[str, Any]], cache: Path | None
) -> None:
    """BM25 alone over the whole knowledge base (no MiniLM): each planned query's BM25 list, fused,
    at section level. The one full-size figure a shared two-core machine can afford when building
    the 16k dense index is not. Each planner searches an index built with its own title weight."""
    from gateway.knowledge.query import model_words
    from gateway.knowledge.records import document_of_chunk
    from gateway.models.embedding import default_model_path

    indexes = {
        p.words.bm25_title_weight: full_bm25_index(p.words.bm25_title_weight, cache) for _, p in planners
    }
    dictionary = model_words(default_model_path())
    some = next(iter(indexes.values()))
    print(f"\nBM25 alone, full size: {len(some)} passages; title weights {sorted(indexes)}")
    head = f"{'set':<6}{'configuration':<30}{'n':>5}{'R@5':>7}{'R@10':>7}{'MRR@10':>8}"
    print(f"{head}{'p50 ms':>8}{'p95 ms':>8}")
    for set_name, questions in sets.items():
        covered = [q for q in questions if q["relevant"]]
        for name, planner in planners:
            index = indexes[planner.words.bm25_title_weight]
            lexicon = planner.lexicon(index.vocabulary(), dictionary)
            found5 = found10 = 0
            reciprocal = 0.0
            times: list[float] = []
            for item in covered:
                started = time.perf_counter()
                plans = planner.plan(item["question"], lexicon)
                fused = planner.order(
                    plans, [[h.record_id for h in index.search(p.lexical, 30)] for p in plans], index.title
                )
                times.append((time.perf_counter() - started) * 1000)
                sections = list(dict.fromkeys(document_of_chunk(rid) for rid in fused))[:10]
                ranks = [i for i, sid in enumerate(sections) if sid in set(item["relevant"])]
                if ranks:
                    found10 += 1
                    found5 += ranks[0] < 5
                    reciprocal += 1 / (ranks[0] + 1)
            n = max(1, len(covered))
            print(
                f"{set_name:<6}{name:<30}{len(covered):>5}{found5 / n:>7.3f}{found10 / n:>7.3f}"
                f"{reciprocal / n:>8.3f}{statistics.median(times):>8.1f}{percentile(times, 0.95):>8.1f}",
                flush=True,
            )


def interleaved_latency(questions: list[dict[str, Any]], configurations: list[Any]) -> None:
    """Search latency of each configuration, the configurations taking turns on every question (in
    alternating order), so a shared machine's changing load falls on all of them alike."""
    times: dict[str, list[float]] = {name: [] for name, _, _ in configurations}
    for number, item in enumerate(questions):
        turn = configurations if number % 2 == 0 else configurations[::-1]
        for name, store, options in turn:
            started = time.perf_counter()
            store.search_sync(item["question"], 10, options=options)
            times[name].append((time.perf_counter() - started) * 1000)
    first = next(iter(times))
    print(f"\nlatency, configurations interleaved per question ({len(questions)} questions, k = 10)")
    for name, values in times.items():
        p50, p95 = statistics.median(values), percentile(values, 0.95)
        ratio = p95 / percentile(times[first], 0.95)
        print(f"  {name:<30} median {p50:7.1f} ms   p95 {p95:7.1f} ms   p95 x {first}: {ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, help="index directory (kept); required but with --bm25-full")
    parser.add_argument("--subset", type=int, default=0, help="ingest answering sections + others up to N")
    parser.add_argument("--policies", type=Path, help="policy directory (default: the bundled one)")
    parser.add_argument("--sets", nargs="*", choices=SETS, default=list(SETS), help="question sets to run")
    parser.add_argument("--baseline-rev", default=BASELINE_REV, help="git revision of the baseline policies")
    parser.add_argument("--no-baseline", action="store_true", help="run the current configuration only")
    parser.add_argument("--modes", action="store_true", help="also the retriever ablations on the own set")
    parser.add_argument("--misses", action="store_true", help="print what the current configuration missed")
    parser.add_argument(
        "--latency", action="store_true", help="only the configurations' latency, interleaved per question"
    )
    parser.add_argument(
        "--bm25-full", action="store_true", help="only BM25 over the whole knowledge base (no index needed)"
    )
    parser.add_argument(
        "--bm25-cache",
        type=Path,
        default=Path("/tmp/bench-bm25-full"),
        help="where --bm25-full keeps its BM25 indexes ('-': none; rebuilt when data or analyzer change)",
    )
    parser.add_argument(
        "--heading-weights",
        nargs="*",
        type=float,
        default=[],
        help="with --bm25-full: also the current planner with each section-kind boost (extractive.yaml)",
    )
    add_serving_encoder_arguments(parser, "the queries (small calls)")
    args = parser.parse_args()
    if args.data_dir is None and not args.bm25_full:
        parser.error("--data-dir is required (except with --bm25-full)")

    from gateway.knowledge.search_options import SearchOptions
    from gateway.policies import load_policy
    from gateway.resources import bundled

    sets = load_sets(args.sets)
    if args.bm25_full:
        from gateway.knowledge.query import QueryPlanner, load_planner

        current = load_planner(args.policies or bundled("policies"))
        old = None if args.no_baseline else baseline_planner(args.baseline_rev)
        planners = ([(f"baseline ({args.baseline_rev})", old)] if old is not None else []) + [
            ("current", current)
        ]
        for weight in args.heading_weights:  # the section-kind boost swept (answer_kinds.py)
            kinds = dataclasses.replace(current.kinds, heading_weight=weight)
            swept = QueryPlanner(current.words, current.synonyms, kinds)
            planners.append((f"heading_weight {weight:g}", swept))
        bm25_full(sets, planners, None if args.bm25_cache == Path("-") else args.bm25_cache)
        return
    store, embedder = open_store(args, [q for questions in sets.values() for q in questions])
    policy = load_policy(args.policies or bundled("policies"), "general").thresholds.retrieval
    print(
        f"MedQuAD (Ben Abacha & Demner-Fushman 2019, CC BY 4.0): {store.count_sync()} passages; "
        + "; ".join(
            f"{name}: {sum(1 for q in qs if q['relevant'])} covered + "
            f"{sum(1 for q in qs if not q['relevant'])} uncovered"
            for name, qs in sets.items()
        )
        + f"; gate min_relevance {policy.min_relevance}; load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    old_planner = None if args.no_baseline else baseline_planner(args.baseline_rev)
    configurations: list[tuple[str, Any, Any]] = []
    if old_planner is not None:  # a store of its own: the planner's lexicon is cached per store
        from gateway import bootstrap
        from gateway.settings import Settings

        old_store = bootstrap.open_store(Settings(data_dir=args.data_dir), embedder, planner=old_planner)
        configurations.append((f"baseline ({args.baseline_rev})", old_store, baseline_options()))
    configurations.append(("current", store, SearchOptions()))
    for question in next(iter(sets.values()))[:5]:  # warm-up: model, vectors, lexicon
        for _, searched, _ in configurations:
            searched.search_sync(question["question"], 10)
    if args.latency:
        interleaved_latency([q for qs in sets.values() for q in qs], configurations)
        return
    print(f"\n{HEADER}")
    summary: dict[str, dict[str, float]] = {}
    last: dict[str, dict[str, Any]] = {}
    for set_name, questions in sets.items():
        covered = sum(1 for q in questions if q["relevant"])
        runs = list(configurations)
        if args.modes and set_name == "own":
            runs += [(name, store, options) for name, options in modes().items()]
        for name, searched, options in runs:
            result = evaluate(searched, questions, options)
            print(row(set_name, name, result, covered, policy.min_relevance), flush=True)
            summary[f"{set_name}/{name}"] = {
                "recall5": round(result["recall5"], 3),
                "recall10": round(result["recall10"], 3),
                "mrr10": round(result["mrr10"], 3),
            }
            if name == "current":
                last[set_name] = result
    if "own" in last:
        print("\nrelevance gate, own set, current: threshold, covered answered, uncovered answered")
        for threshold in THRESHOLDS:
            answered, leaked = gate_rates(last["own"]["best"], threshold)
            print(f"  {threshold:.2f}  {answered:.3f}  {leaked:.3f}")
    if args.misses:
        by_id = {q["id"]: q for qs in sets.values() for q in qs}
        for set_name, result in last.items():
            if set_name in REPORTED_ONLY:
                continue
            for qid in result["misses"]:
                item = by_id[qid]
                print(f"  missed {set_name} {qid}: {item['question'][:150]}  -> {item['answers']}")
                print(f"     plan: {[p.text[:110] for p in store.plan(by_id[qid]['question'])]}")
                top = store.search_sync(by_id[qid]["question"], 3)
                print(f"     top: {[p.document_id for p in top]}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
