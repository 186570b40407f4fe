"""Triage benchmark: emergency recall per category, wrongly flagged health questions (short and long
posts), non-clinical flagged, health questions refused, latency; per source, never pooled.

Run::

    PYTHONPATH=. HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_triage.py --cache /tmp/triage-cache

Sources, each reported on its own:

- ``bench/data/triage_messages.jsonl``: the first labelled set, written beside the exemplar bank
  (emergencies per category, routine and information questions, negations, non-clinical, multi-turn);
- ``bench/data/triage/tune.jsonl`` and ``test.jsonl``: the project's development set in patients' words
  (labels emergency / urgent / routine / non_clinical; styles first person, third person, vignette,
  long post; near misses). ``tune`` is what the rules were tuned on; ``test`` is never looked at
  row by row: only its aggregate figures are printed, even with ``-v``;
- ``bench/data/triage/probe_recall.jsonl``: a recall probe (emergencies in varied patient and clinician
  wording, with near misses), reported as two parts: ``probe tune`` (ids ``probe-tune-*``) and
  ``probe held`` (``probe-held-*``, every third row), whose rows are never printed either;
- ``bench/data/triage/probe_recall2.jsonl``: a second recall probe (#31, written before the second recall
  pass was tuned: NHS / NICE red-flag presentations in lay, parent, carer and clinician wording, with
  look-alikes), reported as ``recall2 tune`` and ``recall2 held`` (its ``part`` field, every second row;
  never printed);
- ``bench/data/triage/probe_long.jsonl``: long multi-paragraph posts (#31 item 6): past emergencies told
  as background before a routine question of now, and emergencies buried after background; reported as
  ``long tune`` (``long-tune-*``) and ``long held`` (``long-held-*``, every third row, never printed);
- ``bench/data/triage/probe_long2.jsonl``: a second set of long posts (#31 item 6, written before the
  second long-post pass was tuned): chronic illness, recovery and carers' updates told with past
  emergencies, medication lists and severity words of the past, of others or of a "what if", beside
  emergencies buried mid-post or in the last line; ``long2 tune`` and ``long2 held`` (every second row,
  never printed);
- ``bench/data/triage/probe.jsonl``: a second untouched split (#31, false alarms), written before the
  fifth pass was tuned: information questions, medication questions, history, near misses and
  emergencies happening now; like ``test``, only its aggregate figures are printed;
- ``bench/data/triage/probe_flag2.jsonl``: non-urgent illness told in general terms (chronic, stable,
  mild, improving, medicines, tests, appointments; lay and clinical, short and long) and emergencies
  played down, written before the sixth pass was tuned; ``flag2 tune`` (``flag2-tune-*``) and
  ``flag2 held`` (``flag2-held-*``, never printed);
- ``bench/data/triage/probe_recall3.jsonl``: a third recall probe (#31, written before the third recall
  pass: terse, misspelled, non-native, elderly and carer wording, emergencies buried mid-post, vitals
  alone, signs told as a lost function, and look-alikes of each), ``recall3 tune`` and ``recall3 held``
  (never printed);
- ``bench/data/triage/probe_flag3.jsonl``: healed scars and positional numbness, information questions
  beside a mild complaint of now, medication questions, and emergencies told without their usual
  words, written before the seventh pass (#31); ``flag3 tune`` and ``flag3 held`` (never printed);
- ``bench/data/triage/probe_recall4.jsonl``: a fourth recall probe (#31, written before the fourth recall
  pass: clinicians' notes shorthand, carers of a child or an elderly parent, vitals alone, trajectories,
  two moderate signs together, and look-alikes), ``recall4 tune`` and ``recall4 held`` (never printed);
- ``bench/data/triage/probe_recall5.jsonl``: a fifth recall probe (#31, written before the fifth recall
  pass: text-speak and typos, non-native English, run-on posts with the emergency mid-post, carers,
  recency words that make a past-tense event current, and look-alikes), ``recall5 tune`` and
  ``recall5 held`` (never printed);
- ``bench/data/triage/probe_flag5.jsonl``: everyday requests in bodily idioms, medication information
  questions, waiting-room and admin messages, and emergencies told in the same words (#31, written
  before the ninth false-alarm pass); ``flag5 tune`` and ``flag5 held`` (never printed);
- ``bench/data/triage/probe_acute.jsonl``: an acute change told on a long-standing or past complaint
  (emergencies, first and third person, short and long), the same signs long-standing, resolved or
  historical (not emergencies), other people's news beside a routine question, and someone else's
  emergency happening now told by a bystander (#31 item 6, written before the fourth long-post pass);
  ``acute tune`` and ``acute held`` (never printed);
- ``bench/data/triage/probe_vignette.jsonl``: clinicians' third-person vignettes ("68M", "3yo girl",
  "presents with", "on examination", terse signs and vitals) of emergencies across organ systems, and
  routine and urgent vignettes in the same register (#31 item 4, written before the vignette pass);
  ``vignette tune`` and ``vignette held`` (never printed);
- ``bench/data/triage/probe_order.jsonl``: emergencies whose signs are told in predicate order, passive,
  split across clauses or with the body part far from its state, beside look-alikes in the same words
  (#31 items 2 and 4, written before the word-order pass); ``order tune`` and ``order held`` (never printed);
- ``bench/data/triage/probe_unbound.jsonl``: emergencies told by what they do to the person in lay words
  the sign lists may not know (doubled over, can't keep anything down, went grey), and guards in the
  same words (#31 item 2, written before the fourth unbound pass); ``unbound tune`` and ``unbound held``
  (never printed);
- ``bench/data/triage/probe_blind.jsonl``: a blind probe (#31 item 7) written by someone who never read
  the rules, the exemplar banks or any other probe's rows; every row is held (``blind held``, never
  printed, never tuned on); its per-style emergency recall is printed too;
- ``bench/data/triage/probe_blind2.jsonl``: a second blind probe, long forum posts above all, with a tune
  half (``blind2 tune``) and a held half (``blind2 held``, never printed);
- ``bench/data/triage/probe_bystander.jsonl``: deficits that stayed after a dated event, numbness with a
  local cause, jaw clenching from stress, other people's news beside a routine question, and their
  emergency twins (a new or changed deficit, a bystander's emergency now, acute on chronic) (#31 items 2
  and 6, written before the bystander pass); ``bystander tune`` and ``bystander held`` (never printed);
- ``bench/data/triage/probe_coverage.jsonl``: one lay (first person or carer) and one clinician's message
  for each of 72 emergency presentations a published triage source names (``coverage.yaml``), whole
  presentations alternating between the parts, and look-alikes in the same words (#31 items 2 and 4,
  written before the coverage pass); ``coverage tune`` and ``coverage held`` (never printed);
- ``../shared/eval/triage/`` held-out split (``bench/triage_data.split_of``: the 30% of rows the
  classifier was not trained on): clinical.jsonl, non_clinical.jsonl, suicide_risk.jsonl; its errors
  are never printed. When the folder is absent they are skipped, and a line on stderr says so.
  ``--shared-split train`` reads the other 70% instead (errors printed): the classifier was fit on it,
  so its figures flatter the classifier, but it is a fair tune set for rules and exemplar banks, which
  were not (#31, s58).

"Health questions" are the rows labelled routine or urgent (or ``clinical``): flagged = given the
emergency message, refused = declined as non-clinical. Accuracy runs the production decision
(``gateway.triage.decision.decide``) on embeddings encoded in bulk (cached under ``--cache``).
Latency is measured one request at a time as the gateway does it (plan, one ``encode`` call, score,
decide), next to the baseline of the rule layer alone. Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from bench.serving_encoder import add_serving_encoder_arguments
from bench.triage_data import EVAL, ROOT, encode_cached, shared_rows
from gateway.domain import ChatRequest, Scope, Triage, TriageLayer
from gateway.knowledge.query import load_planner
from gateway.models.embedding import Embedder
from gateway.policies import load_policy
from gateway.testing.conversations import conversation
from gateway.triage.contexts import OperatingContext
from gateway.triage.decision import decide, decide_by_evidence
from gateway.triage.emergency import RuleReadings, evidence_reader
from gateway.triage.planning import TriagePlan, plan, split_questions
from gateway.triage.semantic import SemanticTriage
from gateway.triage.triager import LayeredTriager, spelling_corrector

DATA = ROOT / "bench" / "data" / "triage_messages.jsonl"
DEV = ROOT / "bench" / "data" / "triage"


def one_by_one(encoder: Embedder) -> bool:
    """An encoder with ONNX Runtime (``--onnx-cache``) stands for the serving path: each text alone."""
    return encoder.runtime.startswith("onnx")


def request_of(turns: list[str]) -> ChatRequest:
    return conversation(*turns, model="bench")


def triage_all(
    requests: list[ChatRequest],
    context: OperatingContext,
    model: SemanticTriage,
    cache: Path | None,
    name: str,
) -> list[Triage]:
    correct = spelling_corrector(model)
    reader = evidence_reader(model.policy)  # built once, as the triage component does
    plans: list[TriagePlan] = [plan(r, context, model.policy, reader, correct) for r in requests]
    texts = [t for p in plans for t in model.encoded(p.texts)]
    vectors = encode_cached(model.encoder, texts, cache, name, one_by_one=one_by_one(model.encoder))  # type: ignore[arg-type]
    scores = model.score(vectors)
    results, start = [], 0
    for p in plans:
        n = len(p.texts)
        readings = RuleReadings.of(p, context, model.policy, reader)
        results.append(decide(p, scores[start : start + n], context, model.policy, readings))
        start += n
    return results


def rate(hits: int, total: int) -> str:
    return f"{hits / total:.3f} ({hits}/{total})" if total else "n/a"


@dataclass(frozen=True)
class Row:
    """One benchmark message, whatever its source."""

    id: str
    turns: tuple[str, ...]
    label: str
    """emergency, urgent, routine, clinical (a health question of unknown urgency), non_clinical,
    or depression (suicide_risk.jsonl's r/depression rows: reported as flagged, not as errors)."""
    category: str = ""
    long: bool = False
    kind: str = ""


HEALTH = ("urgent", "routine", "clinical")


def long_post(text: str) -> bool:
    return len(text.split()) >= LONG_WORDS


LONG_WORDS = 120
"""A message of at least this many words counts as a long post when the source does not say."""


def project_rows(path: Path) -> list[Row]:
    rows = []
    for line in path.open(encoding="utf-8"):
        if not line.strip():
            continue
        data = json.loads(line)
        rows.append(
            Row(
                data["id"],
                (data["text"],),
                data["label"],
                data.get("category") or "",
                data.get("length") == "long",
                data.get("style", ""),
            )
        )
    return rows


def first_set_rows() -> list[Row]:
    rows = []
    for line in DATA.open(encoding="utf-8"):
        data = json.loads(line)
        label = {"clinical": "clinical"}.get(data["label"], data["label"])
        turns = tuple(data["turns"])
        rows.append(
            Row(data["id"], turns, label, data.get("category", ""), long_post(turns[-1]), data["kind"])
        )
    return rows


def shared_set_rows(name: str, split: str = "test") -> list[Row]:
    rows = []
    for r in shared_rows(name, split):
        if name == "suicide_risk":
            label, category = ("emergency", "suicide") if r.label == "suicide" else ("depression", "")
        else:
            label, category = ("clinical", "") if name == "clinical" else ("non_clinical", "")
        rows.append(Row(r.id, (r.text,), label, category, long_post(r.text), name))
    return rows


def layer_of(result: Triage) -> str:
    """The deciding layer; a semantic layer (exemplar, classifier) is marked ``/unbound`` when the red
    flag it raised has none of its own signs in the message (no evidence: raised by nearness alone)."""
    layer = result.layer.value
    semantic = result.layer in (TriageLayer.EXEMPLAR, TriageLayer.CLASSIFIER)
    return f"{layer}/unbound" if semantic and not result.evidence else layer


SMALLEST_HELD_CATEGORY = 3
"""An untouched source's categories with fewer emergencies are printed pooled: the recall of a category
of one or two messages would tell each message's outcome, which is what never looking at a row means."""


def pool_small(per_category: dict[str, list[bool]]) -> dict[str, list[bool]]:
    """``per_category`` with the categories of fewer than ``SMALLEST_HELD_CATEGORY`` results pooled under
    one line."""
    pooled: dict[str, list[bool]] = {}
    for category, values in per_category.items():
        key = (
            category
            if len(values) >= SMALLEST_HELD_CATEGORY
            else f"(pooled: < {SMALLEST_HELD_CATEGORY} each)"
        )
        pooled.setdefault(key, []).extend(values)
    return pooled


def report(name: str, rows: list[Row], results: list[Triage], verbose: bool) -> None:
    """Print one source's figures (and, with ``verbose``, its errors unless the source is held out)."""
    per_category: dict[str, list[bool]] = defaultdict(list)
    per_style: dict[str, list[bool]] = defaultdict(list)
    style_flagged: dict[str, list[bool]] = defaultdict(list)
    layers: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    flagged: dict[str, list[bool]] = defaultdict(list)
    refused: list[bool] = []
    non_clinical: list[bool] = []
    accepted: list[bool] = []
    depression: list[bool] = []
    errors: list[tuple[str, ...]] = []
    for row, result in zip(rows, results, strict=True):
        emergency = result.scope is Scope.EMERGENCY
        wrong = False
        if row.label == "emergency":
            per_category[row.category or "-"].append(emergency)
            per_style[row.kind or "-"].append(emergency)
            if emergency:
                layers[layer_of(result)] += 1
            else:
                missed[result.scope.value] += 1
            wrong = not emergency
        elif row.label in HEALTH:
            flagged["long" if row.long else "short"].append(emergency)
            flagged[row.label].append(emergency)
            style_flagged[row.kind or "-"].append(emergency)
            refused.append(result.scope is Scope.NON_CLINICAL)
            wrong = emergency or result.scope is Scope.NON_CLINICAL
            if emergency:
                layers[f"false:{layer_of(result)}"] += 1
        elif row.label == "depression":
            depression.append(emergency)
        else:
            non_clinical.append(emergency)
            accepted.append(result.scope is not Scope.NON_CLINICAL)
            wrong = emergency
            if emergency:
                layers[f"false:{layer_of(result)}"] += 1
        if wrong:
            errors.append((row.id, row.label, row.category, result.scope.value, result.layer.value,
                           str(result.rule), row.turns[-1][:160]))  # fmt: skip
    print(f"\n== {name} ({len(rows)} messages) ==")
    hits = [h for v in per_category.values() for h in v]
    if hits:
        print(f"emergency recall                    {rate(sum(hits), len(hits))}   target >= 0.95")
    if layers:
        print(f"  deciding layer                    {dict(sorted(layers.items()))}")
    if missed:
        # a missed emergency declined as no health question is the worse miss: no safety note at all
        print(f"  missed, decided as                {dict(sorted(missed.items()))}")
    for key, title in (("short", "short"), ("long", "long posts")):
        if flagged[key]:
            figure = rate(sum(flagged[key]), len(flagged[key]))
            print(f"health questions flagged ({title:<10}) {figure}   target <= 0.05")
    for key in ("routine", "urgent"):
        if flagged[key] and (flagged["routine"] and flagged["urgent"]):
            print(f"  of which {key:<24} {rate(sum(flagged[key]), len(flagged[key]))}")
    if refused:
        print(f"health questions refused            {rate(sum(refused), len(refused))}   target <= 0.02")
    if non_clinical:
        figure = rate(sum(non_clinical), len(non_clinical))
        print(f"non-clinical flagged emergency      {figure}   target <= 0.002")
        print(f"non-clinical accepted (not declined) {rate(sum(accepted), len(accepted))}")
    if depression:
        print(
            f"depression posts flagged            {rate(sum(depression), len(depression))}   (noisy labels)"
        )
    if held_out(name):
        per_category = pool_small(per_category)
    if len(per_category) > 1:
        print("per category recall:")
        for category, values in sorted(per_category.items()):
            print(f"  {category:<26} {rate(sum(values), len(values))}")
    if len(per_style) > 1:
        print("per style (emergency recall; health questions flagged):")
        for style in sorted(set(per_style) | set(style_flagged)):
            hit, flag = per_style.get(style, []), style_flagged.get(style, [])
            recall = rate(sum(hit), len(hit)) if hit else "-"
            false = rate(sum(flag), len(flag)) if flag else "-"
            print(f"  {style:<26} {recall:<16} {false}")
    if verbose and not held_out(name):
        print("errors:")
        for error in errors:
            print("  ", error)


def held_out(name: str) -> bool:
    """A source whose errors are never printed: the project's untouched splits and the shared sets'
    held-out split (its rows were printed under ``-v`` before s58)."""
    return name.startswith(HELD_OUT_SOURCES) or SHARED_HELD in name


SHARED_HELD = "(held-out split)"
HELD_OUT = ("project test", "project probe")
"""The project's untouched splits, named by source."""
PROBE_FILES = {
    "probe": "probe_recall.jsonl",
    "recall2": "probe_recall2.jsonl",
    "long": "probe_long.jsonl",
    "long2": "probe_long2.jsonl",
    "flag2": "probe_flag2.jsonl",
    "recall3": "probe_recall3.jsonl",
    "flag3": "probe_flag3.jsonl",
    "recall4": "probe_recall4.jsonl",
    "flag4": "probe_flag4.jsonl",
    "recall5": "probe_recall5.jsonl",
    "flag5": "probe_flag5.jsonl",
    "acute": "probe_acute.jsonl",
    "vignette": "probe_vignette.jsonl",
    "order": "probe_order.jsonl",
    "unbound": "probe_unbound.jsonl",
    "blind": "probe_blind.jsonl",
    "blind2": "probe_blind2.jsonl",
    "bystander": "probe_bystander.jsonl",
    "coverage": "probe_coverage.jsonl",
    "negation": "probe_negation.jsonl",
    "mind": "probe_mind.jsonl",
    "crisis": "probe_crisis.jsonl",
    "crisis2": "probe_crisis2.jsonl",
    "nonclin": "probe_nonclin.jsonl",
}
"""The probe files of ``DEV`` by source key (the key is the id prefix: ``<key>-tune-*``, ``<key>-held-*``)."""
PROBES = tuple((key, DEV / file, f"{key} held") for key, file in PROBE_FILES.items())
"""The probe files: (source key and id prefix, path, name of the held part). Each is read as two parts,
``<key> tune`` (ids ``<key>-tune-*``) and ``<key> held`` (``<key>-held-*``, never printed); a part with
no rows (``blind`` has no tune part) is skipped."""
HELD_OUT_SOURCES = (*HELD_OUT, *(held for _, _, held in PROBES))
"""Sources whose rows are never printed, even with ``-v`` (only their aggregate figures)."""


def run_source(
    name: str,
    rows: list[Row],
    context: OperatingContext,
    model: SemanticTriage,
    cache: Path | None,
    verbose: bool,
    cache_name: str = "",
) -> list[ChatRequest]:
    requests = [request_of(list(r.turns)) for r in rows]
    key = cache_name or name.split(" (")[0].replace(" ", "_").replace("/", "_")
    results = triage_all(requests, context, model, cache, key)
    report(name, rows, results, verbose)
    return requests


def bench_latency(
    requests: list[ChatRequest],
    context: OperatingContext,
    model: SemanticTriage,
    repeat: int,
    early_exit: bool = True,
) -> None:
    """Per request, as the gateway does it (``LayeredTriager.run`` on one event loop: plan, the rule
    layers' early decision, else the encode off the loop, score, decide); with
    ``early_exit`` off, one step after the other and always encoding (the baseline of
    ``decide_by_evidence``); vs rules alone. Process CPU time counts every thread's."""
    full: list[float] = []
    cpu: list[float] = []
    reader = evidence_reader(model.policy)  # built once, as the triage component does
    rules: list[float] = []
    decision: list[float] = []
    skipped = 0
    triager = LayeredTriager(context, model, model)
    loop = asyncio.new_event_loop()
    for _ in range(repeat):
        for request in requests:
            started = time.perf_counter()
            split_questions(request.question, context, model.policy.settings.negation)
            rules.append(time.perf_counter() - started)
            if early_exit:
                started, cpu_started = time.perf_counter(), time.process_time()
                loop.run_until_complete(triager.run(request))
                full.append(time.perf_counter() - started)
                cpu.append(time.process_time() - cpu_started)
                p = plan(request, context, model.policy, reader, spelling_corrector(model))
                early = decide_by_evidence(
                    p, context, model.policy, RuleReadings.of(p, context, model.policy, reader)
                )
                skipped += early is not None
                continue
            started, cpu_started = time.perf_counter(), time.process_time()
            p = plan(request, context, model.policy, reader, spelling_corrector(model))
            readings = RuleReadings.of(p, context, model.policy, reader)
            vectors = model.encode(model.encoded(p.texts))
            encoded = time.perf_counter()
            decide(p, model.score(vectors), context, model.policy, readings)
            done = time.perf_counter()
            full.append(done - started)
            cpu.append(time.process_time() - cpu_started)
            decision.append(done - encoded)
    loop.close()

    def p95(values: list[float]) -> float:
        return sorted(values)[int(0.95 * (len(values) - 1))]

    load = os.getloadavg()
    loads = " ".join(f"{x:.2f}" for x in load)
    threads = torch.get_num_threads()
    exits = f"{skipped} decided by the rule layers without encoding" if early_exit else "early exit off"
    print(f"\n== latency per request ({len(full)} runs, {threads} torch thread(s), {exits}; load {loads}) ==")
    print(f"{'':<28}{'median ms':>10}{'p95 ms':>10}")
    print(f"{'rules only (baseline)':<28}{statistics.median(rules) * 1e3:>10.2f}{p95(rules) * 1e3:>10.2f}")
    print(f"{'layered triage':<28}{statistics.median(full) * 1e3:>10.2f}{p95(full) * 1e3:>10.2f}")
    print(f"{'  process CPU time':<28}{statistics.median(cpu) * 1e3:>10.2f}{p95(cpu) * 1e3:>10.2f}")
    if decision:
        decided = f"{statistics.median(decision) * 1e3:>10.2f}{p95(decision) * 1e3:>10.2f}"
        print(f"{'  of which score + decide':<28}{decided}")
    ratio_median = statistics.median(full) / statistics.median(rules)
    print(f"{'ratio':<28}{ratio_median:>10.1f}{p95(full) / p95(rules):>10.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=None, help="scratch directory for embeddings")
    parser.add_argument("--context", default="general")
    parser.add_argument(
        "--dev", type=Path, default=DEV, help="folder of the project's tune.jsonl and test.jsonl"
    )
    parser.add_argument("--latency", type=int, default=200, help="messages timed one by one (0: skip)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-shared", action="store_true")
    parser.add_argument(
        "--shared-split",
        choices=("test", "train"),
        default="test",
        help="which split of ../shared/eval/triage/ to read: test (held out: report it) or train (the"
        " classifier was fit on it, so its classifier figures flatter; a fair tune set for rules and"
        " exemplars)",
    )
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated sources: first, tune, test, " + ", ".join(PROBE_FILES) + ", shared",
    )
    parser.add_argument("--no-spelling", action="store_true", help="read messages as written (baseline)")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="list every error (never the test split's)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="torch threads for encoding (1: as one serving worker; 0: torch's)",
    )
    parser.add_argument(
        "--no-early-exit", action="store_true", help="always encode (the baseline of decide_by_evidence)"
    )
    parser.add_argument(
        "--encode-max-words",
        type=int,
        default=None,
        help="override triage.yaml encode_max_words (0: encode texts whole)",
    )
    parser.add_argument(
        "--encode-max-tokens",
        type=int,
        default=None,
        help="override triage.yaml encode_max_tokens (0: encode texts whole)",
    )
    add_serving_encoder_arguments(parser, "each text alone")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    only = set(filter(None, args.only.split(","))) or {"first", "tune", "test", *PROBE_FILES, "shared"}

    policy = load_policy(ROOT / "policies", args.context)
    overrides = {
        name: value
        for name, value in (
            ("encode_max_words", args.encode_max_words),
            ("encode_max_tokens", args.encode_max_tokens),
        )
        if value is not None
    }
    if overrides:
        settings = replace(policy.triage.settings, **overrides)
        policy = replace(policy, triage=replace(policy.triage, settings=settings))
    settings = policy.triage.settings
    print(f"encode_max_words: {settings.encode_max_words}, encode_max_tokens: {settings.encode_max_tokens}")
    embedder = Embedder()
    if args.onnx_cache is not None:
        embedder = Embedder(cache_size=0, onnx_dir=args.onnx_cache, onnx_weights=args.onnx_weights)
    print(f"MiniLM: {embedder.runtime}{', one text per call' if one_by_one(embedder) else ''}")
    spelling = None if args.no_spelling else load_planner(ROOT / "policies").words
    model = SemanticTriage(policy.triage, embedder, spelling)
    context = policy.context
    timed: list[ChatRequest] = []
    if "first" in only:
        timed += run_source(
            "bench/data/triage_messages.jsonl", first_set_rows(), context, model, args.cache, args.verbose
        )
    for split, name in (("tune", "project tune"), ("test", HELD_OUT[0]), ("probe", HELD_OUT[1])):
        path = args.dev / f"{split}.jsonl"
        if split in only and path.is_file():
            timed += run_source(
                f"{name} ({path})", project_rows(path), context, model, args.cache, args.verbose
            )
        elif split in only:
            print(f"\n({path} absent: skipped)")
    for key, path, _ in PROBES:
        if key not in only or not path.is_file():
            continue
        rows = project_rows(path)
        for part in ("tune", "held"):  # "<key> held" is in HELD_OUT_SOURCES: never printed
            chosen = [r for r in rows if r.id.startswith(f"{key}-{part}-")]
            if not chosen:
                continue
            run_source(f"{key} {part} ({path.name})", chosen, context, model, args.cache, args.verbose)
    if "shared" in only and not args.no_shared:
        if not EVAL.is_dir():
            print("\n(../shared/eval/triage absent: shared sets skipped)")
            print(f"bench_triage: shared sets SKIPPED: no folder at {EVAL}", file=sys.stderr)
        for shared in ("non_clinical", "clinical", "suicide_risk") if EVAL.is_dir() else ():
            held = args.shared_split == "test"
            run_source(
                f"shared {shared}.jsonl {SHARED_HELD if held else '(training split)'}",
                shared_set_rows(shared, args.shared_split),
                context,
                model,
                args.cache,
                args.verbose,
            )
    if args.latency and timed:
        step = max(1, len(timed) // args.latency)
        bench_latency(timed[::step][: args.latency], context, model, args.repeat, not args.no_early_exit)


if __name__ == "__main__":
    main()
