"""Evaluation harness: metric definitions, bootstrap intervals, the record log, parsers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gateway.errors import ConfigurationError
from gateway.evaluation.intervals import (
    BootstrapSpec,
    bootstrap_paired_difference,
    bootstrap_ratio,
    bootstrap_statistic,
    median,
    p95,
)
from gateway.evaluation.metrics import MetricContext, compare, system_metrics
from gateway.evaluation.questions import load_questions, parse_generated
from gateway.evaluation.records import (
    AnswerCheck,
    EvalRecord,
    ExpectedScope,
    Question,
    RecordLog,
    SourceRef,
    StatementCheck,
    SystemAnswer,
    UrlCheck,
    UrlStatus,
)
from gateway.evaluation.rows import question_id
from gateway.evaluation.scoring import directs_to_emergency, looks_like_refusal, normalise_url
from gateway.evaluation.systems import load_replay, parse_raw_answer

SPEC = BootstrapSpec(resamples=2000, seed=7)


# ---- bootstrap ------------------------------------------------------------------------------------


def test_ratio_is_pooled_over_units_not_averaged_per_unit() -> None:
    # per-unit means would be (1/1 + 1/3) / 2 = 0.667; pooled is 2/4
    estimate = bootstrap_ratio([(1, 1), (1, 3)], SPEC)
    assert estimate.value == pytest.approx(0.5)
    assert (estimate.numerator, estimate.denominator, estimate.units) == (2.0, 4.0, 2)


def test_ratio_interval_brackets_the_value_and_is_reproducible() -> None:
    pairs = [(1.0, 1.0)] * 30 + [(0.0, 1.0)] * 10
    first, second = bootstrap_ratio(pairs, SPEC), bootstrap_ratio(pairs, SPEC)
    assert first == second
    assert first.value == pytest.approx(0.75)
    assert first.low is not None
    assert first.high is not None
    assert first.low < 0.75 < first.high
    # the normal approximation gives about +-0.134 for n=40, p=0.75
    assert 0.55 < first.low < 0.66
    assert 0.84 < first.high < 0.93
    other_seed = bootstrap_ratio(pairs, BootstrapSpec(resamples=2000, seed=8))
    assert other_seed.value == first.value
    assert (other_seed.low, other_seed.high) != (first.low, first.high)


def test_two_units_interval_spans_all_resample_outcomes() -> None:
    # resamples of {1/1, 0/1} give 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4
    estimate = bootstrap_ratio([(1, 1), (0, 1)], SPEC)
    assert (estimate.value, estimate.low, estimate.high) == (0.5, 0.0, 1.0)


def test_constant_sample_has_a_degenerate_interval_and_empty_is_none() -> None:
    estimate = bootstrap_ratio([(1, 1)] * 5, SPEC)
    assert (estimate.value, estimate.low, estimate.high) == (1.0, 1.0, 1.0)
    empty = bootstrap_ratio([(0, 0), (1, 0)], SPEC)
    assert empty.value is None
    assert empty.units == 0


def test_latency_statistics_match_numpy() -> None:
    values = [0.1, 0.2, 0.3, 0.4, 10.0]
    med = bootstrap_statistic(values, median, SPEC)
    tail = bootstrap_statistic(values, p95, SPEC)
    assert med.value == pytest.approx(0.3)
    assert tail.value == pytest.approx(float(np.percentile(values, 95)))
    assert med.low is not None
    assert med.high is not None
    assert med.low <= 0.3 <= med.high
    assert bootstrap_statistic([], median, SPEC).value is None


def test_paired_difference_of_identical_systems_is_exactly_zero() -> None:
    pairs = [(1.0, 2.0), (0.0, 1.0), (3.0, 3.0)]
    diff = bootstrap_paired_difference(pairs, pairs, SPEC)
    assert (diff.value, diff.low, diff.high) == (0.0, 0.0, 0.0)
    better = bootstrap_paired_difference([(1.0, 1.0)] * 3, [(0.0, 1.0)] * 3, SPEC)
    assert (better.value, better.low, better.high) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        bootstrap_paired_difference(pairs, pairs[:2], SPEC)


# ---- metric definitions on hand-built records ----------------------------------------------------------


def claim(verdict: str, sentence: int, sources: tuple[int, ...] = (1,)) -> StatementCheck:
    return StatementCheck(
        "a claim", "claim", sentence, sources, verdict, 1.0 if verdict == "supported" else 0.0
    )


def record(
    qid: str,
    scope: ExpectedScope,
    statements: tuple[StatementCheck, ...] = (),
    urls: tuple[UrlCheck, ...] = (),
    refused: bool = False,
    reason: str | None = None,
    relevance: float | None = None,
    retrieved: tuple[str, ...] = (),
    document: str | None = None,
    emergency: bool = False,
    error: str | None = None,
    latency: float = 1.0,
) -> EvalRecord:
    question = Question(qid, f"question {qid}?", scope, document)
    answer = SystemAnswer("sys", qid, "text", (), refused, reason, latency, relevance, retrieved, error)
    scored = not refused and error is None
    return EvalRecord(question, answer, AnswerCheck(scored, statements if scored else (), urls, emergency))


VALID = UrlCheck("https://a.example/1", UrlStatus.FETCHED)
KB = UrlCheck("https://kb.example/1", UrlStatus.KNOWLEDGE_BASE)
INVALID = UrlCheck("https://a.example/404", UrlStatus.INVALID, "http_status")
CTX = MetricContext(relevance_gate=0.5)


def hand_records() -> list[EvalRecord]:
    return [
        # q1: two sentences, both claims supported; cites 2 URLs, 1 valid (KB)
        record(
            "q1",
            ExpectedScope.IN_SCOPE,
            (claim("supported", 0), claim("supported", 1)),
            (KB, INVALID),
            relevance=0.8,
            retrieved=("doc1",),
            document="doc1",
            latency=1.0,
        ),
        # q2: sentence 0 has two claims (one unsupported), sentence 1 is conversational, sentence 2 supported
        record(
            "q2",
            ExpectedScope.IN_SCOPE,
            (
                claim("supported", 0),
                claim("contradicted", 0),
                StatementCheck("Thanks!", "acknowledgement", 1),
                claim("supported", 2),
            ),
            (VALID,),
            relevance=0.6,
            retrieved=("doc9",),
            document="doc2",
            latency=2.0,
        ),
        # q3: in scope but refused for lack of context (relevance below the gate)
        record(
            "q3",
            ExpectedScope.IN_SCOPE,
            refused=True,
            reason="no_relevant_context",
            relevance=0.3,
            retrieved=("doc3",),
            document="doc3",
            latency=3.0,
        ),
        # q4: emergency: gateway-style refusal with reason emergency
        record("q4", ExpectedScope.EMERGENCY, refused=True, reason="emergency", latency=4.0),
        # q5: emergency answered without any direction to emergency care: wrong
        record("q5", ExpectedScope.EMERGENCY, (claim("unsupported", 0, ()),), latency=5.0),
        # q6: non-clinical, declined
        record("q6", ExpectedScope.NON_CLINICAL, refused=True, reason="non_clinical", latency=6.0),
        # q7: out of scope, system failed: not a correct refusal, excluded from refusal rate
        record("q7", ExpectedScope.OUT_OF_SCOPE, error="UpstreamTimeout: slow", latency=7.0),
    ]


def test_metrics_match_hand_computed_values() -> None:
    m = system_metrics(hand_records(), CTX, SPEC)
    value = {k: v.value for k, v in m.items()}
    assert value["url_validity"] == pytest.approx(2 / 3)  # KB + VALID of KB, INVALID, VALID
    assert value["statement_support"] == pytest.approx(4 / 6)  # q1 2/2, q2 2/3, q5 0/1
    assert value["response_support"] == pytest.approx(1 / 3)  # q1 yes; q2, q5 no
    assert value["conversational_faithfulness"] == pytest.approx(3 / 5)  # q1 2/2, q2 1/2, q5 0/1
    assert value["refusal_accuracy"] == pytest.approx(2 / 4)  # q4 ok, q5 no, q6 ok, q7 error
    assert value["refusal_accuracy_emergency"] == pytest.approx(1 / 2)
    assert value["refusal_accuracy_out_of_scope"] == pytest.approx(1 / 2)
    assert value["context_relevance"] == pytest.approx(2 / 3)  # 0.8, 0.6 pass; 0.3 fails
    assert value["retrieval_hit"] == pytest.approx(2 / 3)  # q1, q3 hit; q2 retrieved the wrong doc
    assert value["supported_answer_rate"] == pytest.approx(1 / 3)  # in scope: q1 only
    assert value["refusal_rate"] == pytest.approx(3 / 6)  # q3, q4, q6 of q1..q6
    assert value["in_scope_refusal_rate"] == pytest.approx(1 / 3)
    assert value["error_rate"] == pytest.approx(1 / 7)
    assert value["latency_median"] == pytest.approx(4.0)
    assert value["latency_p95"] == pytest.approx(float(np.percentile([1, 2, 3, 4, 5, 6, 7], 95)))


def test_emergency_direction_in_free_text_counts_as_correct() -> None:
    answered = record("q5", ExpectedScope.EMERGENCY, (claim("unsupported", 0, ()),), emergency=True)
    m = system_metrics([answered], CTX, SPEC)
    assert m["refusal_accuracy"].value == 1.0


def test_metrics_without_applicable_questions_are_none() -> None:
    m = system_metrics([record("q6", ExpectedScope.NON_CLINICAL, refused=True)], CTX, SPEC)
    for metric in ("url_validity", "statement_support", "context_relevance", "supported_answer_rate"):
        assert m[metric].value is None, metric
    assert m["refusal_accuracy"].value == 1.0


def test_compare_pairs_questions_and_treats_missing_units_as_empty() -> None:
    a = [
        record("q1", ExpectedScope.IN_SCOPE, (claim("supported", 0),)),
        record("q2", ExpectedScope.IN_SCOPE, refused=True),
    ]
    b = [
        record("q1", ExpectedScope.IN_SCOPE, (claim("unsupported", 0),)),
        record("q2", ExpectedScope.IN_SCOPE, (claim("supported", 0), claim("unsupported", 1))),
    ]
    diff = compare(a, b, CTX, SPEC)
    assert diff["statement_support"].value == pytest.approx(1.0 - 1 / 3)
    assert diff["in_scope_refusal_rate"].value == pytest.approx(0.5)


# ---- record log ----------------------------------------------------------------------------------------


def test_record_log_round_trips_and_refuses_duplicates(tmp_path: Path) -> None:
    log = RecordLog.open(tmp_path / "records.jsonl")
    original = hand_records()[1]
    log.append(original)
    with pytest.raises(ValueError):
        log.append(original)
    reopened = RecordLog.open(tmp_path / "records.jsonl")
    assert ("sys", "q2") in reopened
    assert list(reopened.read()) == [original]


def test_a_record_that_does_not_fit_names_its_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    RecordLog.open(path).append(hand_records()[0])
    line = json.loads(path.read_text(encoding="utf-8"))
    line["question"]["id"] = "q2"
    line["check"]["urls"] = [{"url": "https://x.test", "status": "lost"}]
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
    with pytest.raises(ConfigurationError) as raised:
        RecordLog.open(path)
    assert (raised.value.source, raised.value.key) == (str(path), "line 2.check.urls[0].status")


def test_record_log_drops_a_half_written_last_line(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    log = RecordLog.open(path)
    log.append(hand_records()[0])
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"system": "sys", "question_id": "q2", "quest')
    reopened = RecordLog.open(path)
    assert ("sys", "q2") not in reopened
    assert path.read_text(encoding="utf-8").endswith("\n")
    reopened.append(hand_records()[1])
    assert [r.question.id for r in reopened.read()] == ["q1", "q2"]


# ---- parsers --------------------------------------------------------------------------------------------


def test_raw_answer_json_and_free_text_forms() -> None:
    answer, sources = parse_raw_answer(
        '```json\n{"answer": "Take 1 g [1].", '
        '"sources": [{"id": 1, "url": "https://nhs.uk/p", "title": "P"}]}\n```'
    )
    assert answer == "Take 1 g [1]."
    assert sources == (SourceRef(1, "https://nhs.uk/p", "P"),)
    text = "Take 1 g [1]. Rest [2].\n\nSources:\n[1] https://nhs.uk/p\n2. See https://cdc.gov/x."
    answer, sources = parse_raw_answer(text)
    assert answer == "Take 1 g [1]. Rest [2]."
    assert [(s.number, s.url) for s in sources] == [(1, "https://nhs.uk/p"), (2, "https://cdc.gov/x")]
    answer, sources = parse_raw_answer("See https://nhs.uk/a for details.")
    assert [(s.number, s.url) for s in sources] == [(1, "https://nhs.uk/a")]


def test_refusal_and_emergency_detectors() -> None:
    assert looks_like_refusal("I'm sorry, but I can't help with questions about restaurants.")
    assert looks_like_refusal("That is outside my scope as a health assistant.")
    assert not looks_like_refusal("Adults can take up to 4 g of paracetamol a day [1].")
    assert directs_to_emergency("Please call 999 now or go to A&E.")
    assert directs_to_emergency("Call your local emergency number immediately.")
    assert not directs_to_emergency("See your GP if the cough lasts more than 3 weeks.")


def test_generated_questions_must_be_strict_json_and_self_contained() -> None:
    assert parse_generated('{"question": "How much paracetamol can adults take in a day?"}').startswith("How")
    for bad, reason in [
        ("not json", "not JSON"),
        ('{"question": "What dose?", "extra": 1}', "exactly"),
        ('{"question": "What does the document say about doses?"}', "refers to the document"),
        ('{"question": "Paracetamol dose"}', "question mark"),
    ]:
        with pytest.raises(ValueError, match=reason):
            parse_generated(bad)


def test_question_sets_validate_fields(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        json.dumps({"question": "What is gout?", "scope": "in-scope"})
        + "\n"
        + json.dumps({"id": "x", "question": "Capital of France?", "scope": "non_clinical"})
        + "\n",
        encoding="utf-8",
    )
    questions = load_questions(path)
    assert questions[0].id == question_id("What is gout?")
    assert questions[0].scope is ExpectedScope.IN_SCOPE
    assert questions[1].scope is ExpectedScope.NON_CLINICAL
    path.write_text(json.dumps({"question": "Q?", "scope": "urgent"}) + "\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"line 1\.scope"):
        load_questions(path)


def test_bundled_question_set_is_valid_and_balanced() -> None:
    from gateway.evaluation.questions import BUNDLED_QUESTIONS
    from gateway.knowledge.loaders import load_manifest
    from gateway.resources import bundled

    questions = load_questions(BUNDLED_QUESTIONS)
    by_scope = {s: sum(1 for q in questions if q.scope is s) for s in ExpectedScope}
    assert by_scope[ExpectedScope.IN_SCOPE] >= 40
    assert by_scope[ExpectedScope.EMERGENCY] >= 10
    assert by_scope[ExpectedScope.OUT_OF_SCOPE] + by_scope[ExpectedScope.NON_CLINICAL] >= 10
    documents = {d.id for d in load_manifest(bundled("knowledge"))}
    assert {q.document_id for q in questions if q.document_id} <= documents


def test_replay_file_errors_name_the_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "replay.jsonl"
    path.write_text(
        json.dumps(
            {"id": "a", "question": "Q?", "answer": "A [1].", "sources": ["https://x.org/1", "some text"]}
        )
        + "\n"
        + json.dumps({"question": "Q2?", "answer": "A", "sources": [{"title": "no url or text"}]})
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigurationError, match=r"line 2\.sources\[0\]"):
        load_replay(path)


def test_normalise_url_ignores_case_www_slash_and_fragment() -> None:
    assert (
        normalise_url("HTTPS://www.NHS.uk/medicines/paracetamol/#dose")
        == "https://nhs.uk/medicines/paracetamol"
    )
