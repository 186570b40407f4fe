"""Stage 8: record the outcome: Prometheus metrics, one structured log line, and the audit record.

The audit record is written (committed) before the response leaves the gateway; if it cannot be
written the request fails with an error rather than answering without a trace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import structlog

from gateway.domain import ClaimOutcome, RefusalReason
from gateway.serialize import to_jsonable

if TYPE_CHECKING:
    from gateway.pipeline.run import PipelineResult
    from gateway.services import Services

log = structlog.get_logger("gateway.request")


def request_outcome(result: PipelineResult) -> str:
    """Bounded label: answered, rewritten, refused, emergency or error."""
    outcome = result.outcome
    if outcome.refusal_reason is RefusalReason.EMERGENCY:
        return "emergency"
    if result.error is not None:
        return "error"
    if outcome.refused:
        return "refused"
    if any(c.outcome is not ClaimOutcome.VERIFIED for c in outcome.claims):
        return "rewritten"
    return "answered"


def _count_metrics(result: PipelineResult, services: Services) -> None:
    m = services.metrics
    label = request_outcome(result)
    m.requests.labels(outcome=label).inc()
    if result.outcome.refused and result.outcome.refusal_reason:
        m.refusals.labels(reason=result.outcome.refusal_reason.value).inc()
    if result.error is not None:
        stage = "upstream" if _is_upstream(result) else (result.error.stage or result.error.kind)
        m.stage_errors.labels(stage=stage).inc()
        if _is_upstream(result):
            m.upstream_errors.labels(type=result.error.kind).inc()
    if result.best_relevance is not None:
        m.context_relevance.observe(result.best_relevance)
    for statement in result.statements:
        m.statements.labels(kind=statement.kind.value).inc()
    for verdict in result.verdicts:
        m.claims.labels(verdict=verdict.label.value).inc()
        m.claim_methods.labels(method=verdict.method, verdict=verdict.label.value).inc()
    if result.verdicts:
        m.responses_checked.labels(
            fully_supported=str(all(v.supported for v in result.verdicts)).lower()
        ).inc()
        grounded = _grounded_sentences(result)
        for ok in grounded.values():
            m.informative_sentences.labels(grounded=str(ok).lower()).inc()
    for claim in result.outcome.claims:
        m.claim_outcomes.labels(outcome=claim.outcome.value).inc()
    if not result.outcome.refused:
        for report in result.report.claims:
            if report.outcome is not ClaimOutcome.REMOVED and report.badges:
                m.supported_by_tier.labels(tier=report.badges[0].tier).inc()
    timings = result.timings
    m.request_latency.observe(timings.total)
    if result.draft is not None or result.error is not None:
        m.upstream_latency.observe(timings.upstream)
    m.added_latency.observe(timings.added)
    if result.verdicts:
        m.verification_latency.observe(timings.verification)


def _is_upstream(result: PipelineResult) -> bool:
    from gateway.errors import UpstreamError

    return isinstance(result.error, UpstreamError)


def _grounded_sentences(result: PipelineResult) -> dict[int, bool]:
    """Per informative sentence of the draft: grounded when every claim in it was supported."""
    grounded: dict[int, bool] = {}
    claims = [s for s in result.statements if s.is_claim]
    for statement, verdict in zip(claims, result.verdicts, strict=True):
        grounded[statement.sentence_index] = (
            grounded.get(statement.sentence_index, True) and verdict.supported
        )
    return grounded


def audit_record(result: PipelineResult, services: Services) -> tuple[dict[str, Any], dict[str, Any]]:
    request = result.request
    keep_identifiers = services.settings.store_patient_identifiers
    summary = result.report.summary
    row = {
        "id": result.request_id,
        "created_at": result.created_at.isoformat(),
        "outcome": request_outcome(result),
        "scope": result.triage.scope.value,
        "refused": int(result.outcome.refused),
        "reason": result.outcome.refusal_reason.value if result.outcome.refusal_reason else None,
        "claims": summary.claims,
        "rewritten": summary.rewritten,
        "removed": summary.removed,
        "question": request.question,
        "answer": result.outcome.answer,
    }
    record = {
        "request_id": result.request_id,
        "created_at": result.created_at.isoformat(),
        "question": request.question,
        "messages": to_jsonable(request.messages),
        "model": request.model,
        "user": request.user if keep_identifiers else None,
        "metadata": dict(request.metadata) if keep_identifiers else None,
        "triage": to_jsonable(result.triage),
        "passages": to_jsonable(result.passages),
        "best_relevance": result.best_relevance,
        "draft": to_jsonable(result.draft),
        "statements": to_jsonable(result.statements),
        "verdicts": to_jsonable(result.verdicts),
        "cleanup": to_jsonable(result.outcome.claims),
        "answer": result.outcome.answer,
        "trust": to_jsonable(result.report),
        "timings": {
            "total": result.timings.total,
            "upstream": result.timings.upstream,
            "retrieval": result.timings.retrieval,
            "verification": result.timings.verification,
        },
        "error": to_jsonable(result.error) if result.error else None,
        "upstream": services.upstream.name,
        "verifier": services.verifier.name,
        "context": services.policy.context.name,
    }
    return row, record


def _log(result: PipelineResult, services: Services) -> None:
    summary = result.report.summary
    fields: dict[str, Any] = {
        "request_id": result.request_id,
        "outcome": request_outcome(result),
        "scope": result.triage.scope.value,
        "reason": summary.reason.value if summary.reason else None,
        "claims": summary.claims,
        "supported": summary.supported,
        "rewritten": summary.rewritten,
        "removed": summary.removed,
        "passages": len(result.passages),
        "total_ms": round(result.timings.total * 1000, 1),
        "upstream_ms": round(result.timings.upstream * 1000, 1),
        "verification_ms": round(result.timings.verification * 1000, 1),
        "added_ms": round(result.timings.added * 1000, 1),
    }
    if result.error is not None:
        fields["error_type"] = type(result.error).__name__
    if services.settings.log_patient_text:
        fields["question"] = result.request.question
        fields["answer"] = result.outcome.answer
    log.info("chat_request", **fields)


async def record(result: PipelineResult, services: Services) -> None:
    _count_metrics(result, services)
    row, record_json = audit_record(result, services)
    await services.audit.write(row, record_json)
    _log(result, services)
