"""The pipeline driven directly (no HTTP): extractive default, refusals, audit and metrics."""

from __future__ import annotations

import pytest

from gateway.domain import ChatRequest, ClaimOutcome, Message, RefusalReason, Role, Scope
from gateway.pipeline.run import answer


def ask(question: str) -> ChatRequest:
    return ChatRequest(messages=(Message(Role.USER, question),), model="m")


async def test_extractive_default_answers_with_verified_citations(make_services) -> None:  # type: ignore[no-untyped-def]
    services = make_services()
    result = await answer(ask("How much paracetamol can an adult take in a day?"), services.answer_parts)
    assert services.drafter.name == "extractive"
    assert not result.outcome.refused
    assert result.report.summary.claims >= 1
    assert all(c.outcome is ClaimOutcome.VERIFIED for c in result.outcome.claims)
    cited = {
        result.passages[n - 1].document_id for c in result.outcome.claims for n in c.statement.source_numbers
    }
    assert "paracetamol" in cited
    for claim in result.report.claims:
        assert claim.span is not None
        assert result.answer[claim.span.start : claim.span.end].startswith(claim.text.rstrip("."))


async def test_audit_record_is_written_before_answer_returns(make_services) -> None:  # type: ignore[no-untyped-def]
    services = make_services()
    result = await answer(ask("How much paracetamol can an adult take?"), services.answer_parts)
    record = services.audit.get(result.request_id)
    assert record is not None
    assert record["answer"] == result.answer
    assert record["passages"]
    assert record["trust"]["summary"]["claims"] == result.report.summary.claims
    assert record["user"] is None


async def test_emergency_never_reaches_the_model(make_services) -> None:  # type: ignore[no-untyped-def]
    services = make_services()
    result = await answer(
        ask("I have crushing chest pain and I can't catch my breath"), services.answer_parts
    )
    assert result.triage.scope is Scope.EMERGENCY
    assert result.outcome.refusal_reason is RefusalReason.EMERGENCY
    assert result.draft is None
    assert "emergency" in result.answer.lower()


async def test_irrelevant_clinical_question_is_refused_by_the_relevance_gate(make_services) -> None:  # type: ignore[no-untyped-def]
    services = make_services()
    result = await answer(
        ask("What is the treatment for a torn rotator cuff in the shoulder?"), services.answer_parts
    )
    assert result.outcome.refusal_reason is RefusalReason.NO_RELEVANT_CONTEXT
    assert result.draft is None


@pytest.mark.parametrize("question", ["Who won the football last night?", "Write me a python script"])
async def test_non_clinical_requests_are_declined(make_services, question: str) -> None:  # type: ignore[no-untyped-def]
    result = await answer(ask(question), make_services().answer_parts)
    assert result.outcome.refusal_reason is RefusalReason.NON_CLINICAL


async def test_metrics_count_outcomes_and_claims(make_services) -> None:  # type: ignore[no-untyped-def]
    services = make_services()
    await answer(ask("How much paracetamol can an adult take?"), services.answer_parts)
    await answer(ask("Who won the football last night?"), services.answer_parts)
    text = services.metrics.render().decode()
    assert 'gateway_requests_total{outcome="answered"} 1.0' in text
    assert 'gateway_requests_total{outcome="refused"} 1.0' in text
    assert 'gateway_refusals_total{reason="non_clinical"} 1.0' in text
    assert 'gateway_claims_total{verdict="supported"}' in text
