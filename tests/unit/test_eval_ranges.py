"""Evaluation harness: support as ranges from known statuses, the harness against human labels, the
labelled replay format, the operating point's digest and the range chart."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gateway.errors import ConfigurationError
from gateway.evaluation.agreement import Call, agreement_report, labelled_claims
from gateway.evaluation.intervals import BootstrapSpec
from gateway.evaluation.metrics import MetricContext, counts, support_ranges, system_metrics
from gateway.evaluation.records import (
    AnswerCheck,
    EvalRecord,
    HumanLabel,
    Question,
    RecordLog,
    StatementCheck,
    SystemAnswer,
)
from gateway.evaluation.report import fmt_range, range_chart
from gateway.evaluation.scoring import policy_digest
from gateway.evaluation.systems import load_replay
from gateway.verification.policy import VerificationPolicy

SPEC = BootstrapSpec(resamples=300, seed=5)
CTX = MetricContext(relevance_gate=0.5)


def claim(status: str, start: int = 0, end: int = 0, sentence: int = 0) -> StatementCheck:
    verdict = status if status in ("supported", "contradicted") else "unsupported"
    return StatementCheck("c", "claim", sentence, (1,), verdict, None, "", "", status, start, end)


def record(qid: str, *statements: StatementCheck, labels: tuple[HumanLabel, ...] = ()) -> EvalRecord:
    answer = SystemAnswer("replay", qid, "text", human_labels=labels)
    return EvalRecord(Question(qid, f"{qid}?"), answer, AnswerCheck(True, statements))


# ---- ranges ----------------------------------------------------------------------------------------


def known_records() -> list[EvalRecord]:
    return [
        record("a", claim("supported"), claim("supported")),  # verified
        record("b", claim("supported"), claim("not_verified")),  # undecided answer
        record("c", claim("not_verified"), claim("contradicted")),  # rejected answer
        record("d", claim("unsupported"), StatementCheck("Thanks.", "acknowledgement", 1)),  # rejected
    ]


def test_support_ranges_from_known_statuses() -> None:
    metrics = system_metrics(known_records(), CTX, SPEC)
    value = {k: v.value for k, v in metrics.items()}
    # 7 claims: 3 supported, 2 not_verified, 1 contradicted, 1 unsupported
    assert value["statement_support"] == pytest.approx(3 / 7)
    assert value["statement_support_possible"] == pytest.approx(5 / 7)
    assert value["statement_undecided"] == pytest.approx(2 / 7)
    # 4 answers: a verified; b possible (supported + undecided); c, d have a decided rejection
    assert value["response_support"] == pytest.approx(1 / 4)
    assert value["response_support_possible"] == pytest.approx(2 / 4)
    assert value["response_undecided"] == pytest.approx(1 / 4)
    ranges = support_ranges(metrics)
    assert ranges["statement_support"] == {"low": 0.4286, "high": 0.7143, "undecided": 0.2857}
    assert ranges["response_support"] == {"low": 0.25, "high": 0.5, "undecided": 0.25}
    for metric in ("statement_support_possible", "statement_undecided", "response_support_possible"):
        estimate = metrics[metric]
        assert estimate.low is not None
        assert estimate.high is not None
        assert estimate.low <= estimate.value <= estimate.high, metric  # type: ignore[operator]
    assert counts(known_records())["claims_by_status"] == {
        "supported": 3,
        "contradicted": 1,
        "unsupported": 1,
        "not_verified": 2,
    }


def test_a_decided_run_has_a_point_range() -> None:
    records = [record("a", claim("supported")), record("b", claim("unsupported"))]
    ranges = support_ranges(system_metrics(records, CTX, SPEC))
    assert ranges["statement_support"] == {"low": 0.5, "high": 0.5, "undecided": 0.0}
    assert fmt_range(ranges["statement_support"]) == "50.0% (none undecided)"
    assert fmt_range({"low": 0.25, "high": 0.75, "undecided": 0.5}) == "25.0%–75.0% (50.0% undecided)"
    assert fmt_range({"low": None, "high": None, "undecided": None}) == "n/a"


def test_records_written_before_statuses_read_their_verdicts_as_decided(tmp_path: Path) -> None:
    old = {
        "scored": True,
        "statements": [
            {"text": "x", "kind": "claim", "sentence_index": 0, "verdict": "supported"},
            {"text": "y", "kind": "claim", "sentence_index": 1, "verdict": "unsupported"},
        ],
    }
    line = {
        "question": {"id": "q", "question": "?"},
        "answer": {"system": "s", "question_id": "q", "answer": "x y"},
    }
    (tmp_path / "records.jsonl").write_text(json.dumps({**line, "check": old}) + "\n", encoding="utf-8")
    [record] = RecordLog.open(tmp_path / "records.jsonl").read()
    check = record.check
    assert [c.outcome for c in check.claims] == ["supported", "unsupported"]
    assert check.undecided_claims == 0
    assert check.response_possibly_supported is False


# ---- agreement with human labels ---------------------------------------------------------------------


def test_labelled_claims_take_the_call_of_the_statements_they_overlap() -> None:
    labels = (
        HumanLabel(0, 10, True),  # two statements: supported + not_verified -> undecided
        HumanLabel(11, 20, False),  # supported + contradicted -> contradicted
        HumanLabel(21, 30, True),  # nothing checked there (conversational) -> not a claim
        HumanLabel(31, 40, True),  # one supported statement that slightly overlaps the previous label
    )
    statements = (
        claim("supported", 0, 5),
        claim("not_verified", 5, 10),
        claim("supported", 11, 15),
        claim("contradicted", 15, 20),
        StatementCheck("ok.", "acknowledgement", 2, (), None, None, "", "", None, 21, 30),
        claim("supported", 29, 40),
    )
    calls = [c.call for c in labelled_claims([record("q", *statements, labels=labels)])]
    assert calls == [Call.NOT_VERIFIED, Call.CONTRADICTED, Call.NOT_A_CLAIM, Call.SUPPORTED]


def test_agreement_is_reported_where_the_harness_decides_and_forced() -> None:
    labels = tuple(
        HumanLabel(10 * i, 10 * i + 9, supported)
        for i, supported in enumerate([True, True, True, False, False, False, True, False])
    )
    calls = ["supported", "supported", "contradicted", "contradicted", "unsupported", "supported",
             "not_verified", "not_verified"]  # fmt: skip
    statements = tuple(claim(status, 10 * i, 10 * i + 9) for i, status in enumerate(calls))
    records = [
        record("q1", *statements[:4], labels=labels[:4]),
        record("q2", *statements[4:], labels=labels[4:]),
    ]
    ranges = support_ranges(system_metrics(records, CTX, SPEC))
    report = agreement_report(records, ranges)
    assert report is not None
    # decided: 6 claims; human-supported ones: yes, yes, no; not-supported ones: no, no, yes
    decided = report["where_decided"]
    assert decided["claims"] == 6
    assert decided["agreement"] == pytest.approx(4 / 6, abs=1e-4)
    assert decided["supported_recall"] == pytest.approx(2 / 3, abs=1e-4)
    assert decided["not_supported_recall"] == pytest.approx(2 / 3, abs=1e-4)
    assert decided["balanced_accuracy"] == pytest.approx(2 / 3, abs=1e-4)
    assert report["decided_share"] == 0.75
    assert report["precision"] == {
        "supported": pytest.approx(2 / 3, abs=1e-4),
        "contradicted": 0.5,
        "unsupported": 1.0,
    }
    # forced: the two undecided read as "no": the human-supported one is missed, the other is right
    forced = report["forced"]
    assert forced["claims"] == 8
    assert forced["agreement"] == pytest.approx(5 / 8)
    assert forced["supported_recall"] == pytest.approx(2 / 4)
    assert forced["balanced_accuracy"] == pytest.approx((2 / 4 + 3 / 4) / 2, abs=1e-4)
    # people: 4/8 supported, no answer fully supported; the harness: 3/8 .. 5/8, answers 0 .. 0
    assert report["human_statement_support"] == 0.5
    assert report["statement_support_inside_range"] is True
    assert report["human_response_support"] == 0.0
    assert report["response_support_inside_range"] is True
    assert agreement_report([record("q", claim("supported"))], ranges) is None


def test_human_support_outside_the_range_is_reported() -> None:
    labels = (HumanLabel(0, 9, False), HumanLabel(10, 19, False))
    records = [record("q", claim("supported", 0, 9), claim("supported", 10, 19), labels=labels)]
    report = agreement_report(records, support_ranges(system_metrics(records, CTX, SPEC)))
    assert report is not None
    assert report["statement_support_inside_range"] is False
    assert report["where_decided"]["balanced_accuracy"] is None  # one class only


# ---- labelled replay files ---------------------------------------------------------------------------


def write(path: Path, *rows: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def row(**extra: Any) -> dict[str, Any]:
    return {
        "question": "q?",
        "answer": "Flu lasts a week [1]. Flu lasts a week [1].",
        "sources": ["t"],
        **extra,
    }


async def test_replay_human_labels_locate_each_claim_after_the_previous_one(tmp_path: Path) -> None:
    labels = [
        {"claim": "Flu lasts a week", "supported": True},
        {"claim": "Flu lasts a week", "supported": False},
    ]
    questions, replay = load_replay(write(tmp_path / "r.jsonl", row(id="a", human_labels=labels)))
    recorded = await replay.ask(questions[0])
    assert recorded.human_labels == (HumanLabel(0, 16, True), HumanLabel(22, 38, False))
    assert recorded.answer[22:38] == "Flu lasts a week"


@pytest.mark.parametrize(
    ("labels", "field"),
    [
        ("yes", "human_labels"),
        (["x"], "human_labels[0]"),
        ([{"claim": "", "supported": True}], "human_labels[0].claim"),
        ([{"claim": "Flu lasts a week", "supported": "yes"}], "human_labels[0].supported"),
        ([{"claim": "Colds last a week", "supported": True}], "human_labels[0].claim"),
    ],
)
def test_replay_human_label_errors_name_the_line_and_field(tmp_path: Path, labels: Any, field: str) -> None:
    path = write(tmp_path / "r.jsonl", row(human_labels=labels))
    with pytest.raises(ConfigurationError, match=re.escape(f"line 1.{field}")):
        load_replay(path)


# ---- operating point and chart -----------------------------------------------------------------------


def test_policy_digest_changes_with_any_threshold() -> None:
    base = VerificationPolicy()
    assert policy_digest(base) == policy_digest(VerificationPolicy())
    assert len(policy_digest(base)) == 12
    assert policy_digest(replace(base, check_support_probability=0.9)) != policy_digest(base)


def test_range_chart_draws_verified_undecided_and_rejected_in_proportion() -> None:
    results = {
        "systems": {
            "replay": {
                "support_ranges": {
                    "statement_support": {"low": 0.25, "high": 0.75, "undecided": 0.5},
                    "response_support": {"low": 0.0, "high": 1.0, "undecided": 1.0},
                },
                "agreement": {"human_statement_support": 0.5, "human_response_support": None},
            },
            "gateway": {
                "support_ranges": {
                    "statement_support": {"low": 1.0, "high": 1.0, "undecided": 0.0},
                    "response_support": {"low": None, "high": None, "undecided": None},
                }
            },
        }
    }
    svg = str(range_chart(results, ["replay", "gateway"]))
    widths = {
        (m.group(1), m.group(2)): float(m.group(3))
        for m in re.finditer(r'data-part="(\w+)" x="[\d.]+" y="([\d.]+)" width="([\d.]+)"', svg)
    }
    statement_row = [w for (part, y), w in widths.items() if y == "3"]
    verified, undecided, rejected = statement_row
    assert undecided == pytest.approx(2 * verified, abs=0.2)
    assert rejected == pytest.approx(verified, abs=0.2)
    assert svg.count('data-part="human"') == 1  # only where the people's figure is known
    assert "replay: 25.0%–75.0% (50.0% undecided)" in svg
    assert "gateway: 100.0% (none undecided)" in svg
    assert "gateway: n/a" in svg


@pytest.mark.slow  # loads MiniLM, Chroma or the services
def test_checker_choices_build_the_product_verifier_at_their_operating_point(embedder: Any) -> None:
    from gateway.evaluation.command import checker_verifier
    from gateway.models import ModelPool
    from gateway.policies import load_policy
    from gateway.resources import bundled
    from gateway.settings import Secret, Settings

    policy = load_policy(bundled("policies"), "general")
    with_judge = Settings(judge_base_url="http://127.0.0.1:9/v1", judge_api_key=Secret("k"))
    models = ModelPool(with_judge)
    points = {
        choice: checker_verifier(choice, policy, embedder, None, with_judge, models)[1]
        for choice in ("local", "judge", "gateway")
    }
    # local never uses the judge, even when one is configured; judge and gateway do
    assert points["local"].verifier.startswith("cascade[local] ")
    assert not points["local"].judge
    for choice in ("judge", "gateway"):
        assert points[choice].verifier.startswith("cascade[local+judge] "), choice
        assert points[choice].judge, choice
    digests = {point.policy_digest for point in points.values()}
    assert digests == {policy_digest(policy.thresholds.verification)}
    assert points["local"].describe().endswith(f"verification policy sha256:{digests.pop()}")
