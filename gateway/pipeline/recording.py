"""Stage 8: record the outcome: Prometheus metrics, one structured log line, and the audit record.

Every request that reaches the pipeline has exactly one audit row. ``record_start`` writes it
provisionally (outcome ``incomplete``) before any work or any text; if that fails the request is
refused before anything is sent. ``record`` completes the same row (an upsert by request id) before
the final response leaves; a request interrupted by a client disconnect or a server stop completes it
with outcome ``client_disconnected`` / ``cancelled`` and the text that had been sent. A row still
``incomplete`` means the process died (or the store failed) before anything was sent.

A streamed answer leaves piece by piece, so its row is written ahead of the text
(``gateway.pipeline.delivery``):
before each released piece leaves, the row is committed with everything sent so far plus that piece
(outcome ``delivering``); the whole record, still ``delivering``, before the final chunk; and the final
outcome only once the final chunk and ``[DONE]`` were written to the connection. A write that fails
stops the stream there: nothing leaves that its row does not hold.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import msgspec
import structlog
from msgspec import UNSET

from gateway.audit.provenance import (
    PassageVersion,
    RecordProvenance,
    passage_version,
)
from gateway.audit.record import (
    DELIVERING,
    INCOMPLETE,
    AuditRecord,
    ErrorRecord,
    PassageRecord,
    TimingsRecord,
    ToolCallsRecord,
    TrustRecord,
    encode_record,
    scrub,
)
from gateway.audit.trail import AuditTrail
from gateway.domain import ChatRequest, ClaimOutcome, ClaimResult, RefusalReason, VerificationStatus
from gateway.errors import AuditError, StageError, UpstreamError
from gateway.logs import PATIENT_TEXT_OPT_IN
from gateway.metric_labels import TRIAGE_LAYERS, bounded, flag, method_label, stage_label, tier_label
from gateway.metrics import count_verifier_failures
from gateway.pipeline.result import PipelineResult
from gateway.telemetry.ids import current_trace_id
from gateway.vocabulary import (
    AuditOperation,
    CleanupResult,
    RequestOutcome,
    StageName,
    VerdictCheck,
    VerifierMethod,
)

log = structlog.get_logger("gateway.request")


def request_outcome(result: PipelineResult) -> RequestOutcome:
    """The request's outcome: its interruption when it was stopped from outside, else what became of it."""
    if result.interruption is not None:
        return result.interruption
    outcome = result.outcome
    if outcome.refusal_reason is RefusalReason.EMERGENCY:
        return RequestOutcome.EMERGENCY
    if result.error is not None:
        return RequestOutcome.ERROR
    if outcome.ended_early:
        return RequestOutcome.ENDED_EARLY
    if outcome.refused:
        return RequestOutcome.REFUSED
    if any(c.outcome is not ClaimOutcome.VERIFIED for c in outcome.claims):
        return RequestOutcome.REWRITTEN
    return RequestOutcome.ANSWERED


def _count_metrics(result: PipelineResult, trail: AuditTrail) -> None:
    """Count one request. Every label value is bounded (see ``gateway.metric_labels``)."""
    m = trail.metrics
    outcome = result.outcome
    m.requests.labels(outcome=request_outcome(result)).inc()
    triage = result.triage
    m.triage_decisions.labels(
        scope=triage.scope.value, layer=bounded(triage.layer.value, TRIAGE_LAYERS)
    ).inc()
    if outcome.refused and outcome.refusal_reason is not None:
        m.refusals.labels(reason=outcome.refusal_reason.value).inc()
    if outcome.ended_early and outcome.refusal_reason is not None:
        m.ended_early.labels(reason=outcome.refusal_reason.value).inc()
    # a failed stage was counted when it failed: ``StageRunner`` and ``metrics.count_draft_failure``
    if result.best_relevance is not None:
        m.context_relevance.observe(result.best_relevance)
        relevant = outcome.refusal_reason is not RefusalReason.NO_RELEVANT_CONTEXT
        m.context_relevance_checks.labels(relevant=flag(relevant)).inc()
    for statement in result.statements:
        m.statements.labels(kind=statement.kind.value).inc()
    for verdict in result.verdicts:
        m.claims.labels(verdict=verdict.label.value).inc()
        m.claim_methods.labels(method=method_label(verdict.method), verdict=verdict.label.value).inc()
    count_verifier_failures(result.verdicts, m)
    if result.verdicts:
        m.responses_checked.labels(fully_supported=flag(all(v.supported for v in result.verdicts))).inc()
        for grounded in _grounded_sentences(result).values():
            m.informative_sentences.labels(grounded=flag(grounded)).inc()
    for claim in outcome.claims:
        status, cleaned = claim_labels(claim)
        m.claim_results.labels(status=status, outcome=cleaned).inc()
    if not outcome.refused:
        tier_ids = list(trail.tier_ids)
        for report in result.report.claims:
            if report.outcome is not ClaimOutcome.REMOVED and report.badges:
                # badges are ordered evidence first, then by trust: the first is the supporting source
                m.supported_by_tier.labels(tier=tier_label(report.badges[0].tier, tier_ids)).inc()
    _observe_timings(result, trail)


def claim_labels(claim: ClaimResult) -> tuple[str, CleanupResult]:
    """``(status, outcome)`` of ``gateway_claim_results_total``: what verification found and what
    SourceCleanup did (``metric_labels.CLAIM_STATUSES`` x ``metric_labels.CLAIM_RESULTS``).

    ``unanchored``: the chat contract's quote is missing or not in the cited passage, and nothing later
    (entailment model, judge) supported the claim. A claim resting on a planted instruction is decided
    ``unsupported``. ``rewritten_source`` is a rewrite to the source's own sentence (``source_rewrite``),
    ``rewritten_model`` one by the model rewriter."""
    verdict = claim.verdict
    if verdict.check == VerdictCheck.NO_ANCHORED_QUOTE and not verdict.supported:
        status = "unanchored"
    elif verdict.check == VerdictCheck.PLANTED_INSTRUCTION:
        status = VerificationStatus.UNSUPPORTED.value
    else:
        status = verdict.status.value
    if claim.outcome is ClaimOutcome.VERIFIED:
        return status, CleanupResult.KEPT
    if claim.outcome is ClaimOutcome.REMOVED:
        return status, CleanupResult.REMOVED
    rewrite = claim.rewrite_verdict
    if rewrite and rewrite.method == VerifierMethod.SOURCE_REWRITE:
        return status, CleanupResult.REWRITTEN_SOURCE
    return status, CleanupResult.REWRITTEN_MODEL


def _observe_timings(result: PipelineResult, trail: AuditTrail) -> None:
    m = trail.metrics
    timings = result.timings
    m.request_latency.observe(timings.total)
    m.added_latency.observe(timings.added)
    if result.best_relevance is not None:
        m.retrieval_latency.observe(timings.retrieval)
    if result.draft is not None or isinstance(result.error, UpstreamError):
        m.upstream_latency.observe(timings.upstream)
    if result.verdicts:
        m.verification_latency.observe(timings.verification)


def _grounded_sentences(result: PipelineResult) -> dict[int, bool]:
    """Per informative sentence of the draft: grounded when every claim in it was supported. A run that
    ended while a part was being verified (a later stage failed, the client left) has claims without
    verdicts: parts are judged in order and whole, so the judged claims come first and only their
    sentences are counted."""
    grounded: dict[int, bool] = {}
    claims = [s for s in result.statements if s.is_claim][: len(result.verdicts)]
    for statement, verdict in zip(claims, result.verdicts, strict=True):
        grounded[statement.sentence_index] = (
            grounded.get(statement.sentence_index, True) and verdict.supported
        )
    return grounded


def _row(result: PipelineResult) -> dict[str, Any]:
    summary = result.report.summary
    return {
        "id": result.request_id,
        "created_at": result.created_at.isoformat(),
        "outcome": request_outcome(result).value,
        "scope": result.triage.scope.value,
        "refused": int(result.outcome.refused),
        "reason": result.outcome.refusal_reason.value if result.outcome.refusal_reason else None,
        "claims": summary.claims,
        "rewritten": summary.rewritten,
        "removed": summary.removed,
        "question": result.request.question,
        "answer": result.outcome.answer,
    }


def audit_record(result: PipelineResult, trail: AuditTrail) -> tuple[dict[str, Any], AuditRecord]:
    """The row's summary columns and the completed record (``gateway.audit.record``)."""
    request = result.request
    keep_identifiers = trail.keep_identifiers
    record = AuditRecord(
        request_id=result.request_id,
        created_at=result.created_at.isoformat(),
        question=request.question,
        messages=request.messages,
        model=request.model,
        user=request.user if keep_identifiers else None,
        metadata=dict(request.metadata) if keep_identifiers else None,
        triage=result.triage,
        passages=tuple(PassageRecord.of(p) for p in result.passages),
        best_relevance=result.best_relevance,
        draft=result.draft,
        statements=result.statements,
        verdicts=result.verdicts,
        cleanup=result.outcome.claims,
        answer=result.outcome.answer,
        trust=TrustRecord.of(result.report),
        timings=msgspec.convert(result.timings, type=TimingsRecord, from_attributes=True),
        error=_error_record(result.error),
        interruption=result.interruption,
        sent=result.sent,
        upstream=result.upstream,
        verifier=trail.verifier,
        context=trail.context,
        provenance=RecordProvenance(
            gateway_version=trail.gateway_version,
            policy_hash=trail.policy_hash,
            passages=tuple(
                PassageVersion(id=p.id, document_id=p.document_id, version=passage_version(p.text))
                for p in result.passages
            ),
        ),
        trace_id=current_trace_id() or UNSET,
        tool_calls=ToolCallsRecord(calls=result.tool_calls, returned=result.tool_calls_returned)
        if result.tool_calls
        else UNSET,
    )
    return scrub(_row(result)), record


def _error_record(error: StageError | None) -> ErrorRecord | None:
    """The failed stage's error: type, message and the stage it failed in."""
    if error is None:
        return None
    return ErrorRecord(type=type(error).__name__, message=str(error), stage=stage_label(error.stage))


def provisional_record(
    request_id: str, created_at: dt.datetime, request: ChatRequest, trail: AuditTrail
) -> tuple[dict[str, Any], AuditRecord]:
    """The row written when a request starts: enough to find it if it never completes."""
    keep_identifiers = trail.keep_identifiers
    row = {
        "id": request_id,
        "created_at": created_at.isoformat(),
        "outcome": INCOMPLETE,
        "scope": "pending",
        "refused": 0,
        "reason": None,
        "claims": 0,
        "rewritten": 0,
        "removed": 0,
        "question": request.question,
        "answer": "",
    }
    record = AuditRecord(
        request_id=request_id,
        created_at=created_at.isoformat(),
        status=INCOMPLETE,
        question=request.question,
        messages=request.messages,
        model=request.model,
        stream=request.stream,
        user=request.user if keep_identifiers else None,
        metadata=dict(request.metadata) if keep_identifiers else None,
        trace_id=current_trace_id() or UNSET,
    )
    return scrub(row), record


async def record_start(
    request_id: str, created_at: dt.datetime, request: ChatRequest, trail: AuditTrail
) -> None:
    """Write the provisional row. AuditError (counted, logged) when it fails: refuse, send nothing."""
    row, provisional = provisional_record(request_id, created_at, request, trail)
    try:
        await trail.store.write(row, encode_record(provisional))
    except Exception as err:
        trail.metrics.audit_errors.labels(operation=AuditOperation.BEGIN).inc()
        trail.metrics.requests.labels(outcome=RequestOutcome.ERROR).inc()
        trail.metrics.stage_errors.labels(stage=StageName.RECORD).inc()
        log.error(
            LOG_EVENT,
            request_id=request_id,
            outcome=RequestOutcome.ERROR,
            error_type=type(err).__name__,
            error_stage=StageName.RECORD,
            detail="the provisional audit row could not be written; nothing was processed or sent",
        )
        if isinstance(err, AuditError):
            raise
        raise AuditError(f"cannot write the audit record: {type(err).__name__}: {err}") from err


LOG_EVENT = "chat_request"
"""The event name of the one log line written per chat request."""


def log_fields(result: PipelineResult, trail: AuditTrail) -> dict[str, Any]:
    """The fields of the request's log line: ids, outcome, counts and timings; text only if enabled."""
    summary = result.report.summary
    timings = result.timings
    fields: dict[str, Any] = {
        "request_id": result.request_id,
        "outcome": request_outcome(result).value,
        "scope": result.triage.scope.value,
        "triage_layer": result.triage.layer.value,
        "triage_rule": result.triage.rule,
        "triage_unbound_dropped": [q.rule for q in result.triage.dropped],
        "reason": summary.reason.value if summary.reason else None,
        "stream": result.request.stream,
        "passages": len(result.passages),
        "best_relevance": None if result.best_relevance is None else round(result.best_relevance, 4),
        "statements": len(result.statements),
        "conversational": summary.conversational,
        "claims": summary.claims,
        "supported": summary.supported,
        "rewritten": summary.rewritten,
        "removed": summary.removed,
        "response_supported": summary.response_supported,
        "trust_score": summary.trust_score,
        "total_ms": _ms(timings.total),
        "retrieval_ms": _ms(timings.retrieval),
        "upstream_ms": _ms(timings.upstream),
        "verification_ms": _ms(timings.verification),
        "added_ms": _ms(timings.added),
        "upstream": result.upstream,
        "verifier": trail.verifier,
    }
    if result.interruption is not None:
        fields["sent_chars"] = len(result.sent)
    if result.error is not None:
        fields["error_type"] = type(result.error).__name__
        fields["error_stage"] = stage_label(result.error.stage)
    if trail.log_patient_text:
        fields["question"] = result.request.question
        fields["answer"] = result.outcome.answer
        fields[PATIENT_TEXT_OPT_IN] = True
    return fields


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def _log(result: PipelineResult, trail: AuditTrail) -> None:
    log.info(LOG_EVENT, **log_fields(result, trail))


async def record(
    result: PipelineResult, trail: AuditTrail, *, blocking: bool = False, delivering: bool = False
) -> None:
    """Audit first (the response must not leave without a trace), then metrics and the log line.

    When the audit record cannot be completed the request is counted and logged as an error at the
    ``record`` stage and an AuditError propagates, so the client gets an error, not the answer (the
    stage runner counts it in ``gateway_stage_errors_total{stage="record"}``). A failure after the
    write (counting, the log line) is counted there too but does not fail the request: the record
    already says what the patient is sent, and withholding the answer would make it false.
    ``blocking`` writes on the calling thread: for an interrupted run, whose task may be cancelled
    again (a server stop) while a worker-thread write waits, which would lose the record.
    ``delivering`` writes the whole record of a streamed answer before its final chunk, as outcome
    ``delivering``; it is counted and logged when ``delivery.Delivery`` writes its final outcome.
    """
    row, completed = audit_record(result, trail)
    if delivering:
        row["outcome"] = DELIVERING
        completed = msgspec.structs.replace(completed, status=DELIVERING)
    try:
        record_json = encode_record(completed)
        if blocking:
            trail.store.write_sync(row, record_json)
        else:
            await trail.store.write(row, record_json)
    except Exception as err:
        trail.metrics.audit_errors.labels(operation=AuditOperation.COMPLETE).inc()
        trail.metrics.requests.labels(outcome=RequestOutcome.ERROR).inc()
        fields = log_fields(result, trail)
        fields.update(
            outcome=RequestOutcome.ERROR, error_type=type(err).__name__, error_stage=StageName.RECORD
        )
        log.error(LOG_EVENT, **fields)
        if isinstance(err, AuditError):
            raise
        raise AuditError(f"cannot write the audit record: {type(err).__name__}: {err}") from err
    if delivering:
        return
    try:
        _count_metrics(result, trail)
        _log(result, trail)
    except Exception as err:  # the record is written and true: a counting bug must not withhold the answer
        trail.metrics.stage_errors.labels(stage=StageName.RECORD).inc()
        log.error(
            "metrics_failed", request_id=result.request_id, error_type=type(err).__name__, error=str(err)
        )
