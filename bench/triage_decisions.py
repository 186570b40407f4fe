"""Dump every triage decision of every bench source, to compare two revisions of the rule layers.

Run (from the revision's root, with a copy of a bench cache so that nothing is encoded again)::

    PYTHONPATH=. HF_HUB_OFFLINE=1 .venv/bin/python bench/triage_decisions.py --cache DIR --out a.jsonl
    PYTHONPATH=. .venv/bin/python bench/triage_decisions.py --compare a.jsonl b.jsonl

One line per message: source, index, id, and the decision as the gateway makes it
(``LayeredTriager``: the rule layers' early decision, else the layered decision) and as
``bench_triage.py`` scores it (``decide`` alone): scope, category or rule, layer, evidence. For the
untouched sources (``bench_triage.held_out``: the probes' held parts and the shared sets' held-out
split) neither ids nor evidence words are written (a digest of the evidence only),
and ``--compare`` names their differences by index alone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_triage import (
    DEV,
    HELD_OUT,
    PROBES,
    SHARED_HELD,
    Row,
    first_set_rows,
    held_out,
    one_by_one,
    project_rows,
    request_of,
    shared_set_rows,
)
from bench.triage_data import EVAL, ROOT, encode_cached
from gateway.domain import Triage
from gateway.knowledge.query import load_planner
from gateway.models.embedding import Embedder
from gateway.policies import load_policy
from gateway.triage.decision import decide, decide_by_evidence
from gateway.triage.emergency import RuleReadings, evidence_reader
from gateway.triage.planning import plan
from gateway.triage.semantic import SemanticTriage
from gateway.triage.triager import spelling_corrector


def sources() -> list[tuple[str, str, list[Row]]]:
    """(name, cache key, rows) of every bench source, named as ``bench_triage.py`` names them."""
    found = [("first", "bench_data_triage_messages.jsonl", first_set_rows())]
    for split, name in (("tune", "project tune"), ("test", HELD_OUT[0]), ("probe", HELD_OUT[1])):
        path = DEV / f"{split}.jsonl"
        if path.is_file():
            found.append((name, name.replace(" ", "_"), project_rows(path)))
    for prefix, path, parts in PROBES:
        if path.is_file():
            rows = project_rows(path)
            for part, name in (("tune", f"{prefix} tune"), ("held", parts)):
                chosen = [r for r in rows if r.id.startswith(f"{prefix}-{part}-")]
                if not chosen:  # a probe with one part only (``blind`` is all held)
                    continue
                found.append((name, name.replace(" ", "_"), chosen))
    if not EVAL.is_dir():
        print(f"triage_decisions: shared sets SKIPPED: no folder at {EVAL}", file=sys.stderr)
    for shared in ("non_clinical", "clinical", "suicide_risk") if EVAL.is_dir() else ():
        found.append((f"shared {shared} {SHARED_HELD}", f"shared_{shared}.jsonl", shared_set_rows(shared)))
    return found


def outcome(triage: Triage, held: bool) -> dict[str, object]:
    evidence = [f"{e.kind}:{e.text.lower()}" for e in triage.evidence]
    shown: object = hashlib.sha256("|".join(evidence).encode()).hexdigest()[:12] if held else evidence
    return {
        "scope": triage.scope.value,
        "rule": triage.rule,
        "recognised": triage.recognised,
        "layer": triage.layer.value,
        "evidence": shown,
        "questions": [(q.scope.value, q.rule, q.layer.value) for q in triage.questions],
    }


def dump(cache: Path, out: Path, only: str = "") -> None:
    policy = load_policy(ROOT / "policies", "general")
    model = SemanticTriage(policy.triage, Embedder(), load_planner(ROOT / "policies").words)
    context, correct = policy.context, spelling_corrector(model)
    reader = evidence_reader(model.policy)  # built once, as the triage component does
    with out.open("w", encoding="utf-8") as sink:
        for name, key, rows in sources():
            if only and not name.startswith(tuple(only.split(","))):
                continue
            held = held_out(name)
            plans = [plan(request_of(list(r.turns)), context, model.policy, reader, correct) for r in rows]
            texts = [t for p in plans for t in p.texts]
            vectors = encode_cached(model.encoder, texts, cache, key, one_by_one=one_by_one(model.encoder))  # type: ignore[arg-type]
            scores = model.score(vectors)
            start = 0
            for index, (row, p) in enumerate(zip(rows, plans, strict=True)):
                n = len(p.texts)
                readings = RuleReadings.of(p, context, model.policy, reader)
                scored = decide(p, scores[start : start + n], context, model.policy, readings)
                start += n
                early = decide_by_evidence(
                    p, context, model.policy, RuleReadings.of(p, context, model.policy, reader)
                )
                served = early if early is not None else scored
                line = {
                    "source": name,
                    "index": index,
                    "id": None if held else row.id,
                    "served": outcome(served, held),
                    "bench": outcome(scored, held),
                    "early": early is not None,
                }
                sink.write(json.dumps(line) + "\n")
            print(f"{name}: {len(rows)}", file=sys.stderr)


def compare(before: Path, after: Path) -> int:
    """Print every decision that differs on the messages both dumps hold, then, per source, how many
    messages became or stopped being emergencies (sources only one dump holds are named, not compared).
    Exit 1 when anything differs."""

    def load(path: Path) -> dict[tuple[str, int], dict[str, object]]:
        lines = (json.loads(line) for line in path.open(encoding="utf-8"))
        return {(d["source"], d["index"]): d for d in lines}

    a, b = load(before), load(after)
    for name, only in (("before", a.keys() - b.keys()), ("after", b.keys() - a.keys())):
        sources = Counter(source for source, _ in only)
        if sources:
            print(f"only {name}: " + ", ".join(f"{s} ({n})" for s, n in sorted(sources.items())))
    changed = 0
    raised: Counter[str] = Counter()
    lowered: Counter[str] = Counter()
    for key in sorted(a.keys() & b.keys()):
        for view in ("served", "bench"):
            if a[key][view] != b[key][view]:
                changed += 1
                source, index = key
                label = f"{source}#{index}" + ("" if a[key]["id"] is None else f" {a[key]['id']}")
                print(f"{label} [{view}]: {a[key][view]} -> {b[key][view]}")
        was, now = (_is_emergency(d["served"]) for d in (a[key], b[key]))
        if now and not was:
            raised[key[0]] += 1
        if was and not now:
            lowered[key[0]] += 1
    for source in sorted(raised.keys() | lowered.keys()):
        print(f"served, {source}: not -> emergency {raised[source]}, emergency -> not {lowered[source]}")
    print(f"{len(a.keys() & b.keys())} messages in both, {changed} differences")
    return 1 if changed else 0


def _is_emergency(decision: object) -> bool:
    return isinstance(decision, dict) and decision.get("scope") == "emergency"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, help="bench cache of embeddings (bench_triage.py --cache)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--only", default="", help="comma-separated source name prefixes")
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if args.cache is None or args.out is None:
        parser.error("--cache and --out, or --compare")
    dump(args.cache, args.out, args.only)


if __name__ == "__main__":
    main()
