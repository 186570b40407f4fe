"""Triage benchmark: emergency recall, wrong flags, refused health questions, accepted non-clinical.

Run::

    PYTHONPATH=. HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_triage.py --cache /tmp/triage-cache

Sets:

- ``bench/data/triage_messages.jsonl``: the project's labelled set (written in patients' words,
  separately from the exemplar bank): emergencies per category, routine and information questions,
  negated symptoms and near misses, non-clinical requests, multi-turn and multi-question messages;
- ``../shared/eval/triage/`` held-out split (``bench/triage_data.split_of``: the 30% of rows the
  classifier was not trained on): clinical.jsonl refused, non_clinical.jsonl accepted, suicide rows
  recalled, depression rows flagged. Skipped when the folder is absent.

Accuracy runs the production decision (``gateway.pipeline.triage.decide``) on embeddings encoded in
bulk (cached under ``--cache``). Latency is measured separately, one request at a time as the gateway
does it (plan, one ``encode`` call, score, decide), next to the baseline of the rule layer alone.
Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.serving_encoder import add_serving_encoder_arguments
from bench.triage_data import EVAL, ROOT, encode_cached, shared_rows
from gateway.domain import ChatRequest, Message, Role, Scope, Triage
from gateway.knowledge.embedding import Embedder
from gateway.knowledge.query import load_planner
from gateway.pipeline.semantic_triage import SemanticTriage
from gateway.pipeline.triage import TriagePlan, decide, plan, spelling_corrector, split_questions
from gateway.policy.contexts import OperatingContext
from gateway.policy.loader import load_policy

DATA = ROOT / "bench" / "data" / "triage_messages.jsonl"


def one_by_one(encoder: Embedder) -> bool:
    """An encoder with ONNX Runtime (``--onnx-cache``) stands for the serving path: each text alone."""
    return encoder.runtime.startswith("onnx")


def request_of(turns: list[str]) -> ChatRequest:
    messages: list[Message] = []
    for turn in turns:
        if messages:
            messages.append(Message(Role.ASSISTANT, "(an earlier answer)"))
        messages.append(Message(Role.USER, turn))
    return ChatRequest(messages=tuple(messages), model="bench")


def triage_all(
    requests: list[ChatRequest],
    context: OperatingContext,
    model: SemanticTriage,
    cache: Path | None,
    name: str,
) -> list[Triage]:
    correct = spelling_corrector(model)
    plans: list[TriagePlan] = [plan(r, context, model.policy, correct) for r in requests]
    texts = [t for p in plans for t in p.texts]
    vectors = encode_cached(model.encoder, texts, cache, name, one_by_one=one_by_one(model.encoder))  # type: ignore[arg-type]
    scores = model.score(vectors)
    results, start = [], 0
    for p in plans:
        n = len(p.texts)
        results.append(decide(p, scores[start : start + n], context, model.policy))
        start += n
    return results


def rate(hits: int, total: int) -> str:
    return f"{hits / total:.3f} ({hits}/{total})" if total else "n/a"


def bench_set(
    context: OperatingContext, model: SemanticTriage, cache: Path | None, verbose: bool
) -> list[ChatRequest]:
    rows = [json.loads(line) for line in DATA.open(encoding="utf-8")]
    requests = [request_of(r["turns"]) for r in rows]
    results = triage_all(requests, context, model, cache, "bench")
    per_category: dict[str, list[bool]] = defaultdict(list)
    layers: Counter[str] = Counter()
    flagged = refused = clinical = non_clinical = accepted = 0
    misses: list[tuple[str, ...]] = []
    for row, result in zip(rows, results, strict=True):
        emergency = result.scope is Scope.EMERGENCY
        if row["label"] == "emergency":
            per_category[row["category"]].append(emergency)
            if emergency:
                layers[result.layer.value] += 1
            else:
                misses.append(
                    (row["id"], row["category"], result.scope.value, result.layer.value, row["turns"][-1])
                )
        elif row["label"] == "clinical":
            clinical += 1
            flagged += emergency
            refused += result.scope is Scope.NON_CLINICAL
            if emergency or result.scope is Scope.NON_CLINICAL:
                misses.append(
                    (row["id"], row["kind"], result.scope.value, result.layer.value, row["turns"][-1])
                )
        else:
            non_clinical += 1
            accepted += result.scope is not Scope.NON_CLINICAL
            if result.scope is not Scope.NON_CLINICAL:
                misses.append(
                    (row["id"], row["kind"], result.scope.value, result.layer.value, row["turns"][-1])
                )
    caught = sum(sum(v) for v in per_category.values())
    total = sum(len(v) for v in per_category.values())
    print(f"\n== bench/data/triage_messages.jsonl ({len(rows)} messages, context {context.name}) ==")
    print(f"emergency recall            {rate(caught, total)}   target >= 0.97")
    print(f"  deciding layer            {dict(layers)}")
    print(f"routine flagged emergency   {rate(flagged, clinical)}   target <= 0.05")
    print(f"health questions refused    {rate(refused, clinical)}   target <= 0.02")
    print(f"non-clinical accepted       {rate(accepted, non_clinical)}   target <= 0.05")
    print("per category recall:")
    for category, hits in sorted(per_category.items()):
        print(f"  {category:<24} {rate(sum(hits), len(hits))}")
    if verbose:
        print("errors:")
        for miss in misses:
            print("  ", miss)
    return requests


def bench_shared(context: OperatingContext, model: SemanticTriage, cache: Path | None) -> None:
    if not EVAL.is_dir():
        print("\n(../shared/eval/triage absent: shared sets skipped)")
        return
    print("\n== ../shared/eval/triage/ held-out split (rows not used for training) ==")
    for name in ("clinical", "non_clinical", "suicide_risk"):
        rows = shared_rows(name, "test")
        results = triage_all([request_of([r.text]) for r in rows], context, model, cache, f"{name}_test")
        if name == "clinical":
            refused = sum(r.scope is Scope.NON_CLINICAL for r in results)
            flagged = sum(r.scope is Scope.EMERGENCY for r in results)
            print(f"clinical.jsonl refused              {rate(refused, len(rows))}")
            print(f"clinical.jsonl flagged emergency    {rate(flagged, len(rows))}")
        elif name == "non_clinical":
            accepted = sum(r.scope is not Scope.NON_CLINICAL for r in results)
            flagged = sum(r.scope is Scope.EMERGENCY for r in results)
            print(f"non_clinical.jsonl accepted         {rate(accepted, len(rows))}")
            print(f"non_clinical.jsonl flagged emergency {rate(flagged, len(rows))}")
        else:
            for label in ("suicide", "depression"):
                hits = [
                    res.scope is Scope.EMERGENCY
                    for row, res in zip(rows, results, strict=True)
                    if row.label == label
                ]
                print(f"suicide_risk {label:<10} flagged    {rate(sum(hits), len(hits))}")


def bench_latency(
    requests: list[ChatRequest], context: OperatingContext, model: SemanticTriage, repeat: int
) -> None:
    """Per request, as the gateway does it: plan, one encode batch, score, decide; vs rules alone."""
    full: list[float] = []
    rules: list[float] = []
    decision: list[float] = []
    for _ in range(repeat):
        for request in requests:
            started = time.perf_counter()
            split_questions(request.question, context, model.policy.settings.negation)
            rules.append(time.perf_counter() - started)
            started = time.perf_counter()
            p = plan(request, context, model.policy, spelling_corrector(model))
            vectors = model.encode(p.texts)
            encoded = time.perf_counter()
            decide(p, model.score(vectors), context, model.policy)
            done = time.perf_counter()
            full.append(done - started)
            decision.append(done - encoded)

    def p95(values: list[float]) -> float:
        return sorted(values)[int(0.95 * (len(values) - 1))]

    load = os.getloadavg()
    loads = " ".join(f"{x:.2f}" for x in load)
    print(f"\n== latency per request ({len(full)} runs; load average {loads}) ==")
    print(f"{'':<28}{'median ms':>10}{'p95 ms':>10}")
    print(f"{'rules only (baseline)':<28}{statistics.median(rules) * 1e3:>10.2f}{p95(rules) * 1e3:>10.2f}")
    print(f"{'layered triage':<28}{statistics.median(full) * 1e3:>10.2f}{p95(full) * 1e3:>10.2f}")
    decided = f"{statistics.median(decision) * 1e3:>10.2f}{p95(decision) * 1e3:>10.2f}"
    print(f"{'  of which score + decide':<28}{decided}")
    ratio_median = statistics.median(full) / statistics.median(rules)
    print(f"{'ratio':<28}{ratio_median:>10.1f}{p95(full) / p95(rules):>10.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=None, help="scratch directory for embeddings")
    parser.add_argument("--context", default="general")
    parser.add_argument("--latency", type=int, default=200, help="messages timed one by one (0: skip)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-shared", action="store_true")
    parser.add_argument("--no-spelling", action="store_true", help="read messages as written (baseline)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every error")
    add_serving_encoder_arguments(parser, "each text alone")
    args = parser.parse_args()

    policy = load_policy(ROOT / "policies", args.context)
    embedder = Embedder()
    if args.onnx_cache is not None:
        embedder = Embedder(cache_size=0, onnx_dir=args.onnx_cache, onnx_weights=args.onnx_weights)
    print(f"MiniLM: {embedder.runtime}{', one text per call' if one_by_one(embedder) else ''}")
    spelling = None if args.no_spelling else load_planner(ROOT / "policies").words
    model = SemanticTriage(policy.triage, embedder, spelling)
    requests = bench_set(policy.context, model, args.cache, args.verbose)
    if not args.no_shared:
        bench_shared(policy.context, model, args.cache)
    if args.latency:
        bench_latency(requests[: args.latency], policy.context, model, args.repeat)


if __name__ == "__main__":
    main()
