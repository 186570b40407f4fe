"""How far the evaluation harness can be believed: its calls against human support labels, per claim.

Run: ``.venv/bin/python bench/bench_eval_harness.py [--sets kqa_dev,checkcovid_dev] [--checker local]``
     ``.venv/bin/python bench/bench_eval_harness.py --replay LABELLED.jsonl`` (a held-out replay)

From each claim set of ``--eval`` (``../shared/eval/claims``) the bench builds labelled replay files
(``trust-gateway eval --replay`` input with ``human_labels``) and scores them with the harness's own
code: ``load_replay``, the ``StatementChecker`` over the product verifier at the ``--checker``
operating point (``gateway.evaluation.command.checker_verifier``, the construction ``trust-gateway
eval`` uses), ``collect`` and ``summarise``. Nothing is re-implemented here.

How a replay is built from a set (``build_replays``):

- the set's rows are split as ``bench_verifier.py`` splits them: ``tune`` (crc32 of the row id even:
  the verifier's thresholds were chosen there) and ``held`` (odd: never tuned on). A replay never
  mixes the two, and each split is reported on its own line;
- a set with a ``question`` field (K-QA) gives one answer per question and split: its claims in row
  order, each ending ``[1]``, checked against the row's evidence as source 1 (K-QA: one evidence text,
  a model's answer, per question);
- any other set gives answers of ``--claims-per-answer`` rows (in a fixed order by row id), each claim
  citing its own evidence as source ``[k]``;
- a claim's human label is ``supported`` vs everything else (``refuted``, ``nei``);
- a claim's own citation markers (Citation-Integrity's citing sentences carry "[13]") are removed: the
  replay's sources are numbered by the bench, and a marker naming no source is decided unsupported.

Printed per set and split (and per ``--replay`` file): answers and claims, the decided share, where the
harness decides its agreement with the people and balanced accuracy (with the precision of its
supported / contradicted calls), the same if undecided counted as "no" (forced), the human
statement-level support against the range the harness reports (low = verified share, high =
verified-or-undecided share) and whether it lies inside, the same at response level, and the median
and p95 seconds to check one answer. Targets (issue #35): agreement where it decides >= 85%; the
human statement-level support inside the reported range. Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.evaluation.agreement import Call, labelled_claims
from gateway.evaluation.command import checker_verifier
from gateway.evaluation.intervals import BootstrapSpec
from gateway.evaluation.metrics import MetricContext
from gateway.evaluation.records import AnswerCheck, EvalRecord, Question, SystemAnswer
from gateway.evaluation.runner import RunPaths, collect, open_run, records_by_system, summarise
from gateway.evaluation.scoring import KnowledgeBaseFirst, StatementChecker
from gateway.evaluation.systems import load_replay
from gateway.fetching.fetcher import SafeFetcher
from gateway.models import ModelPool
from gateway.models.embedding import Embedder
from gateway.policies import load_configured_policy
from gateway.settings import Settings
from gateway.text import strip_markers

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval" / "claims"
if not EVAL.is_dir():
    EVAL = Path("/work/shared/eval/claims")
DEFAULT_SETS = "kqa_dev,checkcovid_dev"
SPLITS = ("tune", "held")


def split_of(row_id: str) -> str:
    """``tune`` or ``held``, exactly as ``bench_verifier.split_of`` (crc32 of the row id)."""
    return "tune" if zlib.crc32(str(row_id).encode("utf-8")) % 2 == 0 else "held"


def _claim_text(claim: str) -> str:
    """The claim as one sentence of the replayed answer: its own citation markers removed (a citing
    sentence's "[13]" would name a source the replay does not have), end punctuation dropped."""
    return strip_markers(" ".join(claim.split())).rstrip(" .;:,")


def _answer(claims: list[tuple[str, bool, int]]) -> tuple[str, list[dict[str, Any]]]:
    """(claim, supported, source number) -> the answer text with markers, and its human labels."""
    parts, labels = [], []
    for text, supported, number in claims:
        parts.append(f"{text} [{number}].")
        labels.append({"claim": text, "supported": supported})
    return " ".join(parts), labels


def build_replays(
    rows: list[dict[str, Any]], set_name: str, per_answer: int
) -> dict[str, list[dict[str, Any]]]:
    """Labelled replay lines per split (see the module docstring)."""
    replays: dict[str, list[dict[str, Any]]] = {split: [] for split in SPLITS}
    usable = [r for r in rows if _claim_text(str(r["claim"])) and str(r["evidence"]).strip()]
    for split in SPLITS:
        mine = [r for r in usable if split_of(r["id"]) == split]
        if all(r.get("question") for r in mine):
            groups: dict[str, list[dict[str, Any]]] = {}
            for row in mine:
                groups.setdefault(str(row["question"]), []).append(row)
            for number, (question, group) in enumerate(groups.items(), start=1):
                evidence = {str(r["evidence"]) for r in group}
                sources = sorted(evidence)
                claims = [
                    (
                        _claim_text(str(r["claim"])),
                        r["label"] == "supported",
                        sources.index(str(r["evidence"])) + 1,
                    )
                    for r in group
                ]
                answer, labels = _answer(claims)
                replays[split].append(
                    {
                        "id": f"{set_name}-{split}-{number}",
                        "question": question,
                        "answer": answer,
                        "sources": [{"id": i, "text": t} for i, t in enumerate(sources, start=1)],
                        "refused": False,
                        "human_labels": labels,
                    }
                )
            continue
        ordered = sorted(mine, key=lambda r: zlib.crc32(f"order:{r['id']}".encode()))
        for start in range(0, len(ordered), per_answer):
            group = ordered[start : start + per_answer]
            claims = [
                (_claim_text(str(r["claim"])), r["label"] == "supported", k) for k, r in enumerate(group, 1)
            ]
            answer, labels = _answer(claims)
            replays[split].append(
                {
                    "id": f"{set_name}-{split}-{start // per_answer + 1}",
                    "question": f"Replayed claims {start // per_answer + 1} of {set_name}",
                    "answer": answer,
                    "sources": [{"id": k, "text": str(r["evidence"])} for k, r in enumerate(group, 1)],
                    "refused": False,
                    "human_labels": labels,
                }
            )
    return replays


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, lines: Iterable[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")


class TimedChecker:
    """The harness's checker, timing each answer's check (wall clock)."""

    def __init__(self, checker: StatementChecker) -> None:
        self._checker = checker
        self.name = checker.name
        self.operating_point = checker.operating_point
        self.seconds: list[float] = []

    async def check(self, question: Question, answer: SystemAnswer) -> AnswerCheck:
        started = time.perf_counter()
        result = await self._checker.check(question, answer)
        self.seconds.append(time.perf_counter() - started)
        return result


def disagreements(records: list[EvalRecord]) -> list[str]:
    """One line per labelled claim the harness decided against the people: what it said and why (the
    matching and calls of ``gateway.evaluation.agreement.labelled_claims``)."""
    answers = {r.question.id: r.answer.answer for r in records}
    lines = []
    for claim in labelled_claims(records):
        if not claim.call.decided or (claim.call is Call.SUPPORTED) == claim.human_supported:
            continue
        why = "; ".join(f"{s.outcome}/{s.check}: {s.reason[:90]}" for s in claim.statements)
        human = "supported" if claim.human_supported else "not supported"
        span = claim.label
        text = answers[claim.question_id][span.start : span.end] if span else ""
        lines.append(f"  {claim.question_id}: people: {human}; harness: {why}\n    {text[:160]}")
    return lines


async def score(
    replay: Path, checker: StatementChecker, work: Path
) -> tuple[dict[str, Any], list[float], list[EvalRecord]]:
    """The harness over one labelled replay file: the system's results (with ``agreement``), the
    seconds per answer, and the records."""
    questions, system = load_replay(replay)
    timed = TimedChecker(checker)
    paths = RunPaths(work / replay.stem)
    log = open_run(paths, questions, timed)
    await collect(questions, [system], timed, log, progress=False)
    grouped = records_by_system(log, questions, [system.name])
    results = summarise(grouped, MetricContext(0.0), BootstrapSpec(resamples=200, seed=1), {})
    return results["systems"][system.name], timed.seconds, grouped[system.name]


def _pct(value: float | None) -> str:
    return "   n/a" if value is None else f"{value:6.1%}"


def _num(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:5.3f}"


HEADER = (
    f"{'set':<16} {'split':<6}{'ans':>5}{'claims':>7}{'decided (n)':>12}{'agree':>7}{'bal':>6}{'P(sup)':>7}"
    f"{'P(con)':>7}{'forced':>7}{'fbal':>6}  {'human':>6} {'range (statement)':<16}{'in':>4}"
    f"  {'human':>6} {'range (response)':<16}{'in':>4}{'med s':>7}{'p95 s':>7}"
)


def row(set_name: str, split: str, system: dict[str, Any], seconds: list[float]) -> str:
    a = system["agreement"]
    decided, forced = a["where_decided"], a["forced"]
    st, rs = system["support_ranges"]["statement_support"], system["support_ranges"]["response_support"]
    inside = {True: "yes", False: "NO", None: "n/a"}
    p95 = statistics.quantiles(seconds, n=20)[-1] if len(seconds) >= 2 else (seconds[0] if seconds else 0.0)
    return (
        f"{set_name:<16} {split:<6}{a['labelled_answers']:>5}{a['labelled_claims']:>7}"
        f"{_pct(a['decided_share']):>7}{decided['claims']:>5}"
        f"{_pct(decided['agreement']):>7}{_num(decided['balanced_accuracy']):>6}"
        f"{_pct(a['precision']['supported']):>7}{_pct(a['precision']['contradicted']):>7}"
        f"{_pct(forced['agreement']):>7}{_num(forced['balanced_accuracy']):>6}  "
        f"{_pct(a['human_statement_support'])} {_pct(st['low'])}-{_pct(st['high']).strip():<8}"
        f"{inside[a['statement_support_inside_range']]:>4}  "
        f"{_pct(a['human_response_support'])} {_pct(rs['low'])}-{_pct(rs['high']).strip():<8}"
        f"{inside[a['response_support_inside_range']]:>4}"
        f"{statistics.median(seconds) if seconds else 0.0:>7.3f}{p95:>7.3f}"
    )


async def main(args: argparse.Namespace) -> int:
    settings = Settings()
    policy = load_configured_policy(settings)
    embedder = Embedder.from_settings(settings, bulk=True)
    models = ModelPool(settings)
    verifier, point = checker_verifier(args.checker, policy, embedder, None, settings, models)
    fetcher = SafeFetcher.from_policy(policy.thresholds.verification, settings)
    checker = StatementChecker(verifier, KnowledgeBaseFirst([], fetcher), point)
    print(f"checker {checker.name} ({point.checker}); operating point: {point.describe()}")
    print("splits: tune = crc32(row id) even (the verifier was tuned there), held = odd (never tuned on)")
    print(
        "agree/bal: where the harness decides (supported, contradicted, unsupported); forced/fbal: undecided "
        "read as 'not supported'; P(sup)/P(con): precision of its supported/contradicted calls"
    )
    print(HEADER)
    out = args.write_replays
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            jobs: list[tuple[str, str, Path]] = []
            if args.replay:
                jobs = [(path.stem, "all", path) for path in args.replay]
            else:
                for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
                    rows = _read(args.eval / f"{name}.jsonl")
                    for split, lines in build_replays(rows, name, args.claims_per_answer).items():
                        lines = lines[: args.answers] if args.answers else lines
                        target = (out or work) / f"{name}-{split}.jsonl"
                        target.parent.mkdir(parents=True, exist_ok=True)
                        _write(target, lines)
                        jobs.append((name, split, target))
            for name, split, path in jobs:
                system, seconds, records = await score(path, checker, work)
                if "agreement" not in system:
                    print(f"{name:<16}{split:<6} no human_labels in {path}")
                    continue
                print(row(name, split, system, seconds), flush=True)
                if args.show_disagreements:
                    print("\n".join(disagreements(records)), flush=True)
    finally:
        await models.aclose()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval", type=Path, default=EVAL, help="directory of the claim sets")
    parser.add_argument("--sets", default=DEFAULT_SETS, help="comma-separated set names (files of --eval)")
    parser.add_argument(
        "--claims-per-answer", type=int, default=4, help="sets without questions: claims per answer"
    )
    parser.add_argument("--answers", type=int, default=0, help="answers per set and split (0: all)")
    parser.add_argument("--checker", choices=("local", "judge", "gateway"), default="local")
    parser.add_argument("--replay", type=Path, nargs="*", help="score these labelled replay files instead")
    parser.add_argument("--write-replays", type=Path, help="keep the built replay files in this directory")
    parser.add_argument(
        "--show-disagreements", action="store_true", help="list the decided claims the people disagree with"
    )
    sys.exit(asyncio.run(main(parser.parse_args())))
