"""Run an evaluation: ask every system every question, check each answer, log it, summarise.

The output directory holds:

- ``run.json``: the question set's fingerprint, the checker and its operating point, so a resume cannot
  mix two runs (or two verifier operating points);
- ``records.jsonl``: one fsync'd line per (system, question id): the answer and its check;
- ``results.json``: the metrics with bootstrap intervals (recomputed from the records every time);
- ``report.html``: the same, as a side-by-side report with charts.

A run that stops (crash, Ctrl-C) is continued by running the same command again: records already in
the log are skipped, so nothing is asked or checked twice and nothing recorded is lost.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from gateway.evaluation.agreement import agreement_report
from gateway.evaluation.intervals import BootstrapSpec
from gateway.evaluation.metrics import (
    LATENCY_METRICS,
    RATIO_METRICS,
    MetricContext,
    compare,
    counts,
    support_ranges,
    system_metrics,
)
from gateway.evaluation.questions import questions_digest
from gateway.evaluation.records import EvalRecord, Question, RecordLog
from gateway.evaluation.scoring import AnswerChecker
from gateway.evaluation.systems import System
from gateway.validation import refuse


@dataclass(frozen=True)
class RunPaths:
    out_dir: Path

    @property
    def manifest(self) -> Path:
        return self.out_dir / "run.json"

    @property
    def records(self) -> Path:
        return self.out_dir / "records.jsonl"

    @property
    def results(self) -> Path:
        return self.out_dir / "results.json"

    @property
    def report(self) -> Path:
        return self.out_dir / "report.html"


def open_run(paths: RunPaths, questions: Sequence[Question], checker: AnswerChecker) -> RecordLog:
    """Open (or start) the run in ``paths.out_dir``; refuses to resume a run of other questions."""
    paths.out_dir.mkdir(parents=True, exist_ok=True)
    manifest = {"questions_digest": questions_digest(questions), "checker": checker.name}
    if checker.operating_point is not None:
        manifest["operating_point"] = checker.operating_point.describe()
    if paths.manifest.exists():
        previous = json.loads(paths.manifest.read_text(encoding="utf-8"))
        for key, value in manifest.items():
            if previous.get(key) != value:
                refuse(
                    str(paths.manifest),
                    key,
                    f"this directory holds a run with {key}={previous.get(key)!r}, not {value!r}; "
                    "use another --out directory (or delete this one) to start a new run",
                )
    else:
        paths.manifest.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return RecordLog.open(paths.records)


async def collect(
    questions: Sequence[Question],
    systems: Sequence[System],
    checker: AnswerChecker,
    log: RecordLog,
    progress: bool = True,
) -> int:
    """Ask and check every (system, question) not yet in ``log``; returns how many were computed."""
    computed = 0
    for system in systems:
        todo = [q for q in questions if (system.name, q.id) not in log]
        with tqdm(
            total=len(questions),
            initial=len(questions) - len(todo),
            desc=f"eval {system.name}",
            unit="q",
            disable=not progress,
        ) as bar:
            for question in todo:
                answer = await system.ask(question)
                check = await checker.check(question, answer)
                log.append(EvalRecord(question, answer, check))
                computed += 1
                bar.update(1)
    return computed


def records_by_system(
    log: RecordLog, questions: Sequence[Question], systems: Sequence[str]
) -> dict[str, list[EvalRecord]]:
    """The logged records of this question set, per system, in question-set order."""
    order = {q.id: i for i, q in enumerate(questions)}
    grouped: dict[str, list[EvalRecord]] = {name: [] for name in systems}
    for record in log.read():
        if record.answer.system in grouped and record.question.id in order:
            grouped[record.answer.system].append(record)
    for records in grouped.values():
        records.sort(key=lambda r: order[r.question.id])
    return grouped


def summarise(
    grouped: dict[str, list[EvalRecord]],
    ctx: MetricContext,
    spec: BootstrapSpec,
    run: dict[str, Any],
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The results document: per-system metrics, paired comparisons, definitions and notes."""
    systems: dict[str, Any] = {}
    for name, records in grouped.items():
        metrics = system_metrics(records, ctx, spec)
        ranges = support_ranges(metrics)
        systems[name] = {
            "metrics": {k: v.to_json() for k, v in metrics.items()},
            "support_ranges": ranges,
            "counts": counts(records),
        }
        measured = agreement_report(records, ranges)
        if measured is not None:
            systems[name]["agreement"] = measured
    names = list(grouped)
    comparisons = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            diff = compare(grouped[b], grouped[a], ctx, spec)
            comparisons.append({"a": b, "b": a, "metrics": {k: v.to_json() for k, v in diff.items()}})
    definitions: dict[str, Any] = {
        m.id: {
            "label": m.label,
            "family": m.family,
            "definition": m.definition,
            "higher_is_better": m.higher_is_better,
        }
        for m in RATIO_METRICS
    }
    for metric_id, label, _ in LATENCY_METRICS:
        definitions[metric_id] = {
            "label": label,
            "family": "harness",
            "definition": "Wall-clock seconds from question to complete answer, per question.",
            "higher_is_better": False,
        }
    return {
        "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "run": run,
        "bootstrap": {"resamples": spec.resamples, "seed": spec.seed, "level": spec.level},
        "relevance_gate": ctx.relevance_gate,
        "definitions": definitions,
        "systems": systems,
        "comparisons": comparisons,
        "notes": list(notes),
    }


def write_results(paths: RunPaths, results: dict[str, Any]) -> None:
    tmp = paths.results.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    tmp.replace(paths.results)
