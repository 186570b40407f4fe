"""The vocabularies (``gateway.vocabulary``): values as ever, unlisted values only where allowed."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from gateway.audit.record import AuditRecord, encode_record, load_record
from gateway.domain import Verdict, VerdictLabel
from gateway.errors import DraftLimitExceeded, UpstreamError
from gateway.metric_labels import (
    ACCESS_AREAS,
    DEPENDENCIES,
    DRAFT_LIMITS,
    MODEL_FAILURES,
    MODEL_STAGES,
    OTHER,
    PIPELINE_STAGES,
    UPSTREAM_ERROR_TYPES,
    VERIFIER_METHODS,
    method_label,
    stage_label,
    upstream_error_label,
)
from gateway.metrics import GatewayMetrics, count_draft_failure, count_verifier_failures
from gateway.verification.checks.results import CheckName
from gateway.vocabulary import (
    AccessArea,
    DraftLimit,
    StageName,
    UpstreamErrorType,
    VerdictCheck,
    VerifierFailure,
    VerifierMethod,
    tolerant_decoding,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "audit"


def test_every_explicit_check_is_a_verdict_check_of_the_same_value() -> None:
    assert {c.value for c in CheckName} <= {c.value for c in VerdictCheck}


def test_an_unknown_value_is_refused_outside_the_audit_decoding() -> None:
    with pytest.raises(ValueError, match="not a valid VerdictCheck"):
        VerdictCheck("quote_found")
    with pytest.raises(msgspec.ValidationError, match="Invalid enum value 'quote_found'"):
        msgspec.json.decode(b'"quote_found"', type=VerdictCheck)


def test_an_unknown_value_decodes_as_written_in_the_audit_decoding() -> None:
    raw = b'{"label": "supported", "score": 1.0, "method": "local", "check": "quote_found"}'
    with tolerant_decoding():
        verdict = msgspec.json.decode(raw, type=Verdict)
        known = msgspec.json.decode(b'"quote_exact"', type=VerdictCheck)
    assert verdict.label is VerdictLabel.SUPPORTED
    assert verdict.check == "quote_found"
    assert isinstance(verdict.check, VerdictCheck)
    assert not verdict.check.listed
    assert known is VerdictCheck.QUOTE_EXACT
    assert known.listed
    assert json.loads(msgspec.json.encode(verdict))["check"] == "quote_found"
    assert json.dumps({"check": verdict.check}) == '{"check": "quote_found"}'
    assert f"{verdict.check}" == str(verdict.check) == "quote_found"


def test_unlisted_is_the_member_when_one_has_the_value() -> None:
    assert VerdictCheck.unlisted("verbatim") is VerdictCheck.VERBATIM
    assert VerdictCheck.unlisted("substring") == "substring"
    assert VerdictCheck.unlisted("substring") not in set(VerdictCheck)


def label_values(metrics: GatewayMetrics, family: str, label: str) -> set[str]:
    """Every value of ``label`` in the series of ``family`` (declared at zero or counted)."""
    return {
        sample.labels[label]
        for metric in metrics.registry.collect()
        if metric.name == family
        for sample in metric.samples
        if label in sample.labels
    }


def test_the_method_labels_are_verifier_methods() -> None:
    assert VERIFIER_METHODS == ("anchoring", "local", "nli", "judge", "web", "cascade", "rewrite")  # as ever
    assert set(VERIFIER_METHODS) <= {m.value for m in VerifierMethod}
    assert set(MODEL_STAGES) <= {m.value for m in VerifierMethod}
    metrics = GatewayMetrics()
    for method in (*VerifierMethod, VerifierMethod.unlisted("substring")):
        metrics.claim_methods.labels(method=method_label(method), verdict="supported").inc()
    assert label_values(metrics, "gateway_claim_verdicts", "method") == {*VERIFIER_METHODS, OTHER}
    assert method_label(VerifierMethod.SOURCE_REWRITE) == OTHER  # as before: not a verifier's name


def test_the_failure_labels_are_verifier_failures() -> None:
    assert MODEL_FAILURES == ("timeout", "error", "invalid_output")  # the values Prometheus rules name
    assert tuple(f.value for f in VerifierFailure) == MODEL_FAILURES
    metrics = GatewayMetrics()
    failed = [
        Verdict(VerdictLabel.UNSUPPORTED, 0.0, method, VerdictCheck.JUDGE_ERROR, failure=failure)
        for method in (VerifierMethod.JUDGE, VerifierMethod.NLI)
        for failure in VerifierFailure
    ]
    count_verifier_failures(failed, metrics)
    assert label_values(metrics, "gateway_verifier_failures", "kind") == set(MODEL_FAILURES)
    assert label_values(metrics, "gateway_verifier_failures", "stage") == set(MODEL_STAGES)


def test_the_stage_labels_are_stage_names() -> None:
    assert PIPELINE_STAGES == (
        "triage",
        "retrieve",
        "draft",
        "split",
        "verify",
        "cleanup",
        "rewrite",
        "badge",
        "record",
    )  # as the Prometheus rules and dashboards name them
    assert tuple(s.value for s in StageName) == PIPELINE_STAGES
    assert {stage_label(s) for s in StageName} == set(PIPELINE_STAGES)
    assert stage_label("") == OTHER


def test_the_draft_limit_upstream_error_and_dependency_labels_are_as_ever() -> None:
    """The values the Prometheus rules, dashboards and ``/readyz`` name, unchanged by the enums."""
    assert DRAFT_LIMITS == ("reply_chars", "line_chars", "repeated_sentences", "statements")
    assert UPSTREAM_ERROR_TYPES == (
        "timeout",
        "connection",
        "rate_limited",
        "http_status",
        "malformed",
        "upstream_error",
        "queue_full",
        "queue_timeout",
    )
    assert DEPENDENCIES == ("knowledge_store", "audit_store", "rate_limiter")
    metrics = GatewayMetrics()
    assert label_values(metrics, "gateway_draft_limit_exceeded", "limit") == set(DRAFT_LIMITS)
    assert label_values(metrics, "gateway_upstream_errors", "type") == set(UPSTREAM_ERROR_TYPES)


def upstream_error_classes() -> list[type[UpstreamError]]:
    found, todo = [], [UpstreamError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_upstream_error_kind_is_an_upstream_error_type_counted_under_its_own_label() -> None:
    metrics = GatewayMetrics()
    for cls in upstream_error_classes():
        assert isinstance(cls.kind, UpstreamErrorType), cls
        assert upstream_error_label(cls.kind) == cls.kind.value
        assert type(upstream_error_label(cls.kind)) is str  # the label is the plain string
    count_draft_failure(DraftLimitExceeded("too long", limit=DraftLimit.LINE_CHARS), metrics)
    counted = {
        (s.name, tuple(sorted(s.labels.items())))
        for m in metrics.registry.collect()
        for s in m.samples
        if s.value and s.name.endswith("_total")
    }
    assert counted == {
        ("gateway_upstream_errors_total", (("type", "malformed"),)),
        ("gateway_draft_limit_exceeded_total", (("limit", "line_chars"),)),
    }


def test_an_old_record_with_an_upstream_error_decodes_to_the_same_error() -> None:
    """The audit record names a failed stage's error by class, message and stage (not its kind or
    limit): a record stored before the enums decodes and encodes back to the same strings."""
    stored = (FIXTURES / "error.json").read_text(encoding="utf-8")
    record = load_record("req", stored)
    assert isinstance(record, AuditRecord)
    assert msgspec.to_builtins(record.error) == json.loads(stored)["error"]
    assert json.loads(encode_record(record))["error"] == {
        "type": "UpstreamHTTPError",
        "message": "the upstream answered HTTP 500",
        "stage": "draft",
    }


def test_the_access_areas_counted_are_as_ever_and_the_open_one_is_not() -> None:
    assert ACCESS_AREAS == ("client", "staff", "metrics")
    assert AccessArea.PUBLIC == "public"
    assert label_values(GatewayMetrics(), "gateway_auth_failures", "area") == set(ACCESS_AREAS)
