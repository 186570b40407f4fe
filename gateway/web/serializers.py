"""The JSON shapes the API returns: OpenAI's chat completion (and chunks) plus the ``trust`` object.

Field names here are a public contract (the ``trust`` object is documented field by field in
docs/api-trust.md); change them only with a CHANGELOG entry.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gateway.domain import Badge, ClaimOutcome, ClaimReport, Evidence, Passage, SourceTier, Span, TrustReport
from gateway.pipeline.result import PipelineResult
from gateway.tool_calls import ToolCallDelta
from gateway.triage.model_read import read_json
from gateway.trust.policy import TierPolicy
from gateway.trust.tiers import source_tier

REMOVED_PLACEHOLDER = "[removed claim]"
"""Stands for a removed claim's text wherever the client-facing trust object would quote it."""


def span_json(span: Span | None) -> dict[str, int] | None:
    return {"start": span.start, "end": span.end} if span else None


def evidence_json(evidence: Evidence | None) -> dict[str, Any] | None:
    if evidence is None:
        return None
    return {
        "source_id": str(evidence.source_number),
        "passage_id": evidence.passage_id,
        "text": evidence.text,
        "span": span_json(evidence.span),
    }


def badge_json(badge: Badge) -> dict[str, Any]:
    return {
        "source_id": str(badge.source_number),
        "tier": badge.tier,
        "tier_label": badge.tier_label,
        "trust_score": badge.trust_score,
        "title": badge.title,
        "org": badge.org,
        "url": badge.url,
        "reviewed_on": badge.reviewed_on.isoformat() if badge.reviewed_on else None,
        "evidence_quote": badge.evidence_quote,
    }


def claim_json(
    claim: ClaimReport, include_removed_text: bool = True, unverified: list[str] | None = None
) -> dict[str, Any]:
    """One claim. Without ``include_removed_text`` no unverified text rides on it: a removed claim's
    ``text``, ``original_text``, ``reason``, ``evidence`` and badges are null/empty, a rewritten claim's
    ``original_text`` is null and its ``reason`` has the unverified texts replaced (the audit record and
    the clinician view keep everything)."""
    fields = _claim_fields(claim)
    if include_removed_text:
        return fields
    if claim.outcome is not ClaimOutcome.VERIFIED:  # a verified claim's original is its text
        fields["original_text"] = None
    fields["reason"] = redact(claim.reason, unverified or [])
    if claim.outcome is ClaimOutcome.REMOVED:
        fields.update(text=None, reason=None, evidence=None, badge=None, badges=[])
    return fields


def _claim_fields(claim: ClaimReport) -> dict[str, Any]:
    return {
        "text": claim.text,
        "span": span_json(claim.span),
        "source_ids": [str(n) for n in claim.source_numbers],
        "verdict": claim.verdict.value,
        "original_verdict": (claim.original_verdict or claim.verdict).value,
        "score": claim.score,
        "method": claim.method,
        "check": claim.check,
        "outcome": claim.outcome.value,
        "reason": claim.reason,
        "original_text": claim.original_text,
        "evidence": evidence_json(claim.evidence),
        "badge": badge_json(claim.badges[0]) if claim.badges else None,
        "badges": [badge_json(b) for b in claim.badges],
    }


def source_json(
    number: int, passage: Passage, tiers: TierPolicy, today: dt.date, resolved: SourceTier | None = None
) -> dict[str, Any]:
    """One source; its tier is the one resolved at badge time (``resolved``), see ``tiers.source_tier``."""
    tier = source_tier(passage, resolved, today, tiers)
    return {
        "id": str(number),
        "passage_id": passage.id,
        "document_id": passage.document_id,
        "title": passage.title,
        "url": passage.url,
        "org": passage.org,
        "tier": tier.tier,
        "tier_label": tier.tier_label,
        "trust_score": tier.trust_score,
        "reviewed_on": passage.reviewed_on.isoformat() if passage.reviewed_on else None,
        "doc_type": passage.doc_type,
        "relevance": round(passage.score, 4),
        "text": passage.text,
    }


def _unverified_texts(report: TrustReport) -> list[str]:
    """The model's text that did not reach the patient: removed claims and rewritten originals."""
    texts: set[str] = set()
    for claim in report.claims:
        if claim.outcome is ClaimOutcome.REMOVED:
            texts.update(t for t in (claim.text, claim.original_text) if t and t.strip())
        elif claim.outcome is ClaimOutcome.REWRITTEN and claim.original_text.strip():
            texts.add(claim.original_text)
    return sorted(texts, key=len, reverse=True)


def redact(text: str, removed: list[str]) -> str:
    """``text`` with every removed claim's text (and its repr) replaced by a placeholder."""
    for piece in removed:
        text = text.replace(repr(piece), REMOVED_PLACEHOLDER).replace(piece, REMOVED_PLACEHOLDER)
    return text


@dataclass(frozen=True)
class TrustView:
    """How a reply's trust object is drawn: the tiers policy, the clock its sources are dated by, and
    whether removed claims keep their text (``GATEWAY_TRUST_INCLUDE_REMOVED_TEXT``)."""

    tiers: TierPolicy
    today: Callable[[], dt.date]
    include_removed_text: bool = False

    def json(self, result: PipelineResult) -> dict[str, Any]:
        """``trust_json`` of ``result``, its sources' tiers as of today."""
        return trust_json(result, self.tiers, self.today(), self.include_removed_text)


def trust_json(
    result: PipelineResult, tiers: TierPolicy, today: dt.date, include_removed_text: bool = False
) -> dict[str, Any]:
    """The client-facing trust object. Unverified text never rides on it: removed claims lose their
    text (unless ``include_removed_text``, ``GATEWAY_TRUST_INCLUDE_REMOVED_TEXT``, for clinician-facing
    clients) and the summary's ``detail`` has it replaced by a placeholder. ``operating_point`` names
    the verifier and thresholds that checked the claims: the string ``/v1/verify`` gives for the same
    gateway (``TrustReport.operating_point``)."""
    report: TrustReport = result.report
    s = report.summary
    include = include_removed_text
    removed = [] if include else _unverified_texts(report)
    return {
        "request_id": result.request_id,
        "scope": result.triage.scope.value,
        "model_urgency": read_json(result.draft.urgency if result.draft else None),
        "claims": [claim_json(c, include, removed) for c in report.claims],
        "summary": {
            "claims": s.claims,
            "supported": s.supported,
            "rewritten": s.rewritten,
            "removed": s.removed,
            "conversational": s.conversational,
            "refused": s.refused,
            "ended_early": s.ended_early,
            "reason": s.reason.value if s.reason else None,
            "detail": redact(s.detail, removed),
            "trust_score": s.trust_score,
            "statement_support": s.statement_support,
            "response_supported": s.response_supported,
        },
        "sources": [
            source_json(n, p, tiers, today, _resolved(report, n))
            for n, p in enumerate(report.sources, start=1)
        ],
        "operating_point": report.operating_point,
    }


def _resolved(report: TrustReport, number: int) -> SourceTier | None:
    return report.source_tiers[number - 1] if len(report.source_tiers) >= number else None


def completion_json(result: PipelineResult, model: str, trust: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{result.request_id}",
        "object": "chat.completion",
        "created": int(result.created_at.timestamp()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": _message(result),
                "finish_reason": finish_reason(result),
                "logprobs": None,
            }
        ],
        "system_fingerprint": None,
        "trust": trust,
    }


def _message(result: PipelineResult) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": result.answer, "refusal": None}
    if result.tool_calls_returned:  # unchanged, as the model made them (docs/integrator.md, "Tools")
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in result.tool_calls
        ]
    return message


def finish_reason(result: PipelineResult) -> str:
    """``tool_calls`` when the reply hands the client tool calls, else ``stop``."""
    return "tool_calls" if result.tool_calls_returned else "stop"


def tool_call_delta(delta: ToolCallDelta) -> dict[str, Any]:
    """A chunk's ``delta`` carrying one tool-call fragment, in OpenAI's shape (id and name when given)."""
    call: dict[str, Any] = {"index": delta.index, "function": {"arguments": delta.arguments}}
    if delta.id is not None:
        call["id"], call["type"] = delta.id, "function"
    if delta.name is not None:
        call["function"]["name"] = delta.name
    return {"tool_calls": [call]}


def chunk_json(
    result: PipelineResult, model: str, delta: dict[str, Any], finish: str | None
) -> dict[str, Any]:
    return chunk_payload(result.request_id, int(result.created_at.timestamp()), model, delta, finish)


def chunk_payload(
    request_id: str, created: int, model: str, delta: dict[str, Any], finish: str | None
) -> dict[str, Any]:
    """One chat.completion.chunk; usable before the pipeline has a result (verified streaming)."""
    return {
        "id": f"chatcmpl-{request_id}",
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }
