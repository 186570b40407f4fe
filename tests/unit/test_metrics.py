"""Metrics are recorded with the right semantics: requests run through the real pipeline
(``make_services``: fixture knowledge store, real verifier and cleanup), then the registry is read."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gateway.domain import ChatRequest, Message, Passage, Role
from gateway.errors import AuditError, StoreError, UpstreamHTTPError, UpstreamTimeout, UpstreamUnavailable
from gateway.metrics import (
    OTHER,
    GatewayMetrics,
    bounded,
    method_label,
    tier_label,
)
from gateway.pipeline.run import answer
from gateway.testing import ScriptedDrafts, ScriptedVerifier, contract_answer

PARACETAMOL_DOSE = "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours."
PARACETAMOL_MAX = "Do not take more than 4 g of paracetamol in 24 hours."
FABRICATED = "Paracetamol cures migraines within ten minutes."
QUESTION = "How much paracetamol can an adult take?"
EMERGENCY = "I have crushing chest pain and my left arm is numb"
NON_CLINICAL = "Who won the football match last night?"
NO_CONTEXT = "Can a pregnancy test be wrong?"


def supported_reply() -> str:
    return contract_answer(
        f"{PARACETAMOL_DOSE[:-1]} [1]. {PARACETAMOL_MAX[:-1]} [1].",
        [(PARACETAMOL_DOSE, [1], PARACETAMOL_DOSE), (PARACETAMOL_MAX, [1], PARACETAMOL_MAX)],
    )


def partly_supported_reply() -> str:
    return contract_answer(
        f"{PARACETAMOL_DOSE[:-1]} [1]. {PARACETAMOL_MAX[:-1]} [1]. {FABRICATED[:-1]} [1].",
        [
            (PARACETAMOL_DOSE, [1], PARACETAMOL_DOSE),
            (PARACETAMOL_MAX, [1], PARACETAMOL_MAX),
            (FABRICATED, [1], "paracetamol cures migraines within ten minutes"),
        ],
    )


class BrokenStore:
    async def search(self, query: str, k: int) -> list[Passage]:
        raise StoreError("the store is down")

    async def count(self) -> int:
        return 0


def ask(question: str = QUESTION) -> ChatRequest:
    return ChatRequest(messages=(Message(Role.USER, question),), model="clinic-bot")


def value(metrics: GatewayMetrics, name: str, **labels: str) -> float:
    found = metrics.registry.get_sample_value(name, labels)
    return 0.0 if found is None else float(found)


def total(metrics: GatewayMetrics, name: str) -> float:
    """Sum of every series of ``name`` (e.g. all verdicts of gateway_claims_total)."""
    return sum(s.value for family in metrics.registry.collect() for s in family.samples if s.name == name)


@pytest.fixture
def services(make_services):  # type: ignore[no-untyped-def]
    return make_services()


async def test_supported_answer(services) -> None:  # type: ignore[no-untyped-def]
    services.upstream = ScriptedDrafts(supported_reply())
    result = await answer(ask(), services)
    m = services.metrics
    assert not result.outcome.refused
    assert value(m, "gateway_requests_total", outcome="answered") == 1
    assert total(m, "gateway_requests_total") == 1
    assert value(m, "gateway_claims_total", verdict="supported") == 2
    assert total(m, "gateway_claims_total") == 2
    assert total(m, "gateway_claim_verdicts_total") == 2
    method = method_label(result.verdicts[0].method)
    assert method != OTHER
    assert value(m, "gateway_claim_verdicts_total", method=method, verdict="supported") == 2
    assert value(m, "gateway_statements_total", kind="claim") == 2
    assert value(m, "gateway_checked_responses_total", fully_supported="true") == 1
    assert value(m, "gateway_checked_responses_total", fully_supported="false") == 0
    assert value(m, "gateway_informative_sentences_total", grounded="true") == 2
    assert value(m, "gateway_claim_outcomes_total", outcome="verified") == 2
    # the fixture's paracetamol leaflet is declared clinical_reference in the manifest
    assert value(m, "gateway_claim_evidence_total", tier="clinical_reference") == 2
    assert total(m, "gateway_claim_evidence_total") == 2
    assert value(m, "gateway_context_relevance_checks_total", relevant="true") == 1
    assert value(m, "gateway_context_relevance_score_count") == 1
    assert value(m, "gateway_context_relevance_score_sum") == pytest.approx(result.best_relevance)
    for histogram in ("request", "upstream", "added", "retrieval", "verification"):
        assert value(m, f"gateway_{histogram}_duration_seconds_count") == 1, histogram
    assert value(m, "gateway_refusals_total", reason="emergency") == 0
    assert total(m, "gateway_refusals_total") == 0
    assert total(m, "gateway_upstream_errors_total") == 0


async def test_partly_supported_answer_counts_statement_and_response_support(services) -> None:  # type: ignore[no-untyped-def]
    services.upstream = ScriptedDrafts(partly_supported_reply(), supported_reply())
    first = await answer(ask(), services)
    await answer(ask(), services)
    m = services.metrics
    assert not first.outcome.refused
    assert value(m, "gateway_requests_total", outcome="rewritten") == 1
    assert value(m, "gateway_requests_total", outcome="answered") == 1
    # statement-level support: 4 of 5 claims; response-level support: 1 of 2 responses
    assert value(m, "gateway_claims_total", verdict="supported") == 4
    assert total(m, "gateway_claims_total") == 5
    assert value(m, "gateway_checked_responses_total", fully_supported="true") == 1
    assert value(m, "gateway_checked_responses_total", fully_supported="false") == 1
    # conversational faithfulness: the fabricated sentence is the one ungrounded informative sentence
    assert value(m, "gateway_informative_sentences_total", grounded="false") == 1
    assert value(m, "gateway_informative_sentences_total", grounded="true") == 4
    assert value(m, "gateway_claim_outcomes_total", outcome="verified") == 4
    failed = value(m, "gateway_claim_outcomes_total", outcome="removed") + value(
        m, "gateway_claim_outcomes_total", outcome="rewritten"
    )
    assert failed == 1
    # only what reached the patient counts toward the evidence tiers
    delivered = sum(1 for c in first.report.claims if c.outcome.value != "removed")
    assert total(m, "gateway_claim_evidence_total") == delivered + 2
    assert value(m, "gateway_verification_duration_seconds_count") == 2


@pytest.mark.parametrize(
    ("question", "outcome", "reason"),
    [
        (EMERGENCY, "emergency", "emergency"),
        (NON_CLINICAL, "refused", "non_clinical"),
        (NO_CONTEXT, "refused", "no_relevant_context"),
    ],
)
async def test_refusals_by_reason_never_reach_the_upstream(services, question, outcome, reason) -> None:  # type: ignore[no-untyped-def]
    upstream = ScriptedDrafts()
    services.upstream = upstream
    result = await answer(ask(question), services)
    m = services.metrics
    assert result.outcome.refusal_reason is not None
    assert result.outcome.refusal_reason.value == reason
    assert upstream.calls == 0
    assert value(m, "gateway_requests_total", outcome=outcome) == 1
    assert value(m, "gateway_refusals_total", reason=reason) == 1
    assert total(m, "gateway_refusals_total") == 1
    assert total(m, "gateway_claims_total") == 0
    assert value(m, "gateway_upstream_duration_seconds_count") == 0
    assert value(m, "gateway_verification_duration_seconds_count") == 0
    assert value(m, "gateway_request_duration_seconds_count") == 1
    relevance_refused = value(m, "gateway_context_relevance_checks_total", relevant="false")
    assert relevance_refused == (1 if reason == "no_relevant_context" else 0)


@pytest.mark.parametrize(
    ("error", "error_type"),
    [
        (UpstreamTimeout("timed out"), "timeout"),
        (UpstreamUnavailable("refused"), "connection"),
        (UpstreamHTTPError("boom", status_code=502), "http_status"),
    ],
)
async def test_upstream_errors_by_type(services, error, error_type) -> None:  # type: ignore[no-untyped-def]
    services.upstream = ScriptedDrafts(error)
    result = await answer(ask(), services)
    m = services.metrics
    assert result.outcome.refused
    assert value(m, "gateway_requests_total", outcome="error") == 1
    assert value(m, "gateway_refusals_total", reason="upstream_error") == 1
    assert value(m, "gateway_upstream_errors_total", type=error_type) == 1
    assert total(m, "gateway_upstream_errors_total") == 1
    assert value(m, "gateway_stage_errors_total", stage="draft") == 1
    # a failed upstream call is still an upstream call: it counts toward latency and error rate
    assert value(m, "gateway_upstream_duration_seconds_count") == 1


async def test_malformed_draft_is_an_upstream_error_of_type_malformed(services) -> None:  # type: ignore[no-untyped-def]
    services.upstream = ScriptedDrafts('{"answer": 3}')
    await answer(ask(), services)
    m = services.metrics
    assert value(m, "gateway_upstream_errors_total", type="malformed") == 1
    assert value(m, "gateway_refusals_total", reason="malformed_output") == 1


async def test_store_failure_is_counted_at_the_retrieve_stage(services) -> None:  # type: ignore[no-untyped-def]
    services.store = BrokenStore()
    services.upstream = ScriptedDrafts()
    await answer(ask(), services)
    m = services.metrics
    assert value(m, "gateway_requests_total", outcome="error") == 1
    assert value(m, "gateway_stage_errors_total", stage="retrieve") == 1
    assert value(m, "gateway_refusals_total", reason="store_error") == 1
    assert total(m, "gateway_upstream_errors_total") == 0
    assert value(m, "gateway_upstream_duration_seconds_count") == 0
    assert value(m, "gateway_retrieval_duration_seconds_count") == 0


@pytest.mark.parametrize(
    ("verifier_name", "label"),
    [("judge", "judge"), ("cascade:judge", "cascade"), ("Local", "local"), ("claim 42 by Dr Who", OTHER)],
)
async def test_method_label_is_bounded(services, verifier_name, label) -> None:  # type: ignore[no-untyped-def]
    services.upstream = ScriptedDrafts(supported_reply())
    services.verifier = ScriptedVerifier.supporting(verifier_name)
    await answer(ask(), services)
    m = services.metrics
    assert value(m, "gateway_claim_verdicts_total", method=label, verdict="supported") == 2
    assert all(
        s.labels["method"] in {"anchoring", "local", "nli", "judge", "web", "cascade", "rewrite", OTHER}
        for family in m.registry.collect()
        for s in family.samples
        if s.name == "gateway_claim_verdicts_total"
    )


def test_bounded_labels() -> None:
    assert bounded("  JUDGE ", ["judge"]) == "judge"
    assert bounded("judge-v2", ["judge"]) == "judge"
    assert bounded("", ["judge"]) == OTHER
    assert tier_label("guideline", ["guideline", "unknown"]) == "guideline"
    assert tier_label("what the patient typed", ["guideline"]) == OTHER


def test_tiers_of_the_policy_exist_at_zero(services) -> None:  # type: ignore[no-untyped-def]
    m = services.metrics
    tiers = {t.id for t in services.policy.tiers.tiers}
    exported = {
        s.labels["tier"]
        for family in m.registry.collect()
        for s in family.samples
        if s.name == "gateway_claim_evidence_total"
    }
    assert exported == tiers


def test_cited_url_validity() -> None:
    m = GatewayMetrics()
    m.record_cited_url(True)
    m.record_cited_url(False, "blocked_address")
    m.record_cited_url(False, "https://evil.example/?q=patient+name")
    assert value(m, "gateway_cited_urls_total", valid="true") == 1
    assert value(m, "gateway_cited_urls_total", valid="false") == 2
    assert value(m, "gateway_cited_url_failures_total", reason="blocked_address") == 1
    assert value(m, "gateway_cited_url_failures_total", reason=OTHER) == 1


async def test_audit_failure_is_counted_as_an_error_and_raised(services) -> None:  # type: ignore[no-untyped-def]
    class FailingAudit:
        async def write(self, row: Any, record: Any) -> None:
            raise OSError("disk full")

        def close(self) -> None:
            return None

    services.upstream = ScriptedDrafts(supported_reply())
    services.audit = FailingAudit()
    with pytest.raises(AuditError, match="disk full"):
        await answer(ask(), services)
    m = services.metrics
    assert value(m, "gateway_requests_total", outcome="error") == 1
    assert value(m, "gateway_requests_total", outcome="answered") == 0
    assert value(m, "gateway_stage_errors_total", stage="record") == 1
    assert value(m, "gateway_audit_errors_total", operation="begin") == 1
    assert services.upstream.calls == 0  # refused before any work: the model was never asked


SNAKE = re.compile(r"^gateway_[a-z0-9_]+$")


def test_names_follow_prometheus_conventions() -> None:
    m = GatewayMetrics()
    for family in m.registry.collect():
        assert SNAKE.match(family.name), family.name
        assert family.documentation.strip(), family.name
        if family.type == "counter":
            assert not family.name.endswith("_total"), family.name  # the client appends _total
        if family.type == "histogram":
            assert family.name.endswith(("_seconds", "_score")), family.name
        for sample in family.samples:
            assert "id" not in sample.labels, family.name
    names = m.names()
    assert "gateway_claims_total" in names
    assert "gateway_verification_duration_seconds_bucket" in names
    assert "gateway_ready" in names


RECORDED_OUTSIDE_THE_PIPELINE = {
    "gateway_time_to_first_verified_token_seconds": "gateway/pipeline/run.py, streamed answers only",
    "gateway_cited_urls": "gateway/checkonly/service.py count_report (test_verify_api.py)",
    "gateway_verifier_failures": "gateway/pipeline/record.py and gateway/checkonly/service.py count_report, "
    "only when a judge or entailment model fails (test_model_failures_are_counted)",
    "gateway_cited_url_failures": "gateway/checkonly/service.py count_report (test_verify_api.py)",
    "gateway_auth_failures": "gateway/web/auth.py",
    "gateway_rate_limited": "gateway/web/auth.py",
    "gateway_upstream_in_flight": "gateway/models/limits.py (a gauge, 0 at rest)",
    "gateway_upstream_waiting": "gateway/models/limits.py (a gauge, 0 at rest)",
    "gateway_rate_limiter_errors": "gateway/web/rate_limits.py build_rate_limiter (Redis did not answer)",
    "gateway_dependency_up": "gateway/web/ops.py readyz",
    "gateway_auth_throttled": "gateway/web/auth.py and clinician_auth.py (tests/security/test_hardening.py)",
    "gateway_rejected_requests": "gateway/web/errors.py counted_rejections (4xx before the pipeline)",
    "gateway_audit_errors": "gateway/pipeline/record.py and gateway/health.py, when the store fails",
    "gateway_model_calls": "gateway/models/metered.py MeteredModel (test_model_boundary.py)",
    "gateway_rewrites_skipped": "gateway/pipeline/run.py, rewrite cap or deadline reached",
    "gateway_draft_limit_exceeded": "gateway/pipeline/record.py, DraftLimitExceeded",
}
"""Every metric not moved by a non-streamed request names where it is recorded. A new metric must be
recorded by the pipeline or be listed here with its place."""


async def test_every_metric_is_recorded_by_the_pipeline(make_services) -> None:  # type: ignore[no-untyped-def]
    """Drive the scenarios above through one registry; every collector must have moved, except those
    recorded outside the request pipeline (named above, each with the place that records it)."""
    services = make_services()
    services.upstream = ScriptedDrafts(partly_supported_reply(), UpstreamTimeout("slow"), supported_reply())
    for question in (QUESTION, QUESTION, EMERGENCY, NO_CONTEXT, QUESTION):
        await answer(ask(question), services)
    m = services.metrics
    never = [
        family.name
        for family in m.registry.collect()
        if family.name not in RECORDED_OUTSIDE_THE_PIPELINE
        and not any(s.value > 0 for s in family.samples if not s.name.endswith("_created"))
    ]
    assert never == [], f"never recorded: {never}"
    registered = {family.name for family in m.registry.collect()}
    assert set(RECORDED_OUTSIDE_THE_PIPELINE) <= registered


def test_every_metric_is_documented_in_the_operations_guide() -> None:
    """docs/operations.md has a row for every metric the gateway exports (counters with ``_total``)."""
    guide = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")
    undocumented = []
    for family in GatewayMetrics().registry.collect():
        exported = f"{family.name}_total" if family.type == "counter" else family.name
        if f"`{exported}`" not in guide:
            undocumented.append(exported)
    assert undocumented == []
