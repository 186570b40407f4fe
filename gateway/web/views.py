"""View models for the clinician and audit pages, built from a stored audit record.

The pages read the audit record (not live pipeline objects), so what a clinician sees is exactly what
was recorded for the request: the typed ``AuditRecord`` (``gateway.audit.record``), tiers included as
resolved at badge time (``tiers.source_tier`` resolves them only for records without). Everything
here is plain data; the templates escape it.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from msgspec import UNSET

from gateway.audit.record import DELIVERING, INCOMPLETE, AuditRecord, PassageRecord, builtins
from gateway.domain import Badge, ClaimReport, Evidence, SourceTier, TriageEvidence, TrustSummary
from gateway.trust.badge import SourceBadge, source_badge
from gateway.trust.policy import TierBadgeTexts, TierPolicy
from gateway.trust.tiers import source_tier
from gateway.vocabulary import RequestOutcome


@dataclass(frozen=True)
class Segment:
    """A piece of the final answer: plain text, or the text of claim ``claim`` (1-based)."""

    text: str
    claim: int | None = None
    outcome: str = ""
    tier: str = ""


@dataclass(frozen=True)
class MarkedPassage:
    """A source passage split around the evidence span, for ``<mark>``."""

    before: str
    marked: str
    after: str


@dataclass(frozen=True)
class SourceView:
    number: int
    passage_id: str
    title: str
    org: str
    url: str
    badge: SourceBadge
    reviewed_on: str | None
    text: str
    relevance: float | None


@dataclass(frozen=True)
class ClaimView:
    number: int
    text: str
    original_text: str
    outcome: str
    verdict: str
    original_verdict: str
    score: float | None
    method: str
    check: str
    reason: str
    source_numbers: tuple[int, ...]
    badge: SourceBadge
    """The badge of the claim's first source (``NO_SOURCE`` when it has none)."""
    badges: tuple[Badge, ...]
    evidence_text: str | None
    passage: SourceView | None
    marked: MarkedPassage | None
    in_answer: bool


@dataclass(frozen=True)
class RequestView:
    request_id: str
    created_at: str
    question: str
    answer: str
    scope: str
    refused: bool
    reason: str | None
    detail: str
    summary: TrustSummary
    triage_layer: str
    """The triage layer that decided the scope (rule, exemplar, classifier, context, default)."""
    triage_rule: str | None
    """The red-flag rule or category recognised (or the rule that declined), if any."""
    triage_evidence: tuple[TriageEvidence, ...]
    """What the deciding triage layer found (signs, severity words, vital signs out of range)."""
    segments: tuple[Segment, ...]
    claims: tuple[ClaimView, ...]
    sources: tuple[SourceView, ...]
    model: str
    upstream: str
    """The upstream, verifier and operating context that served it (empty while incomplete)."""
    verifier: str
    context: str
    operating_point: str
    """The verifier's operating point, its stages and thresholds (``TrustRecord.operating_point``; empty
    while incomplete and in records written before it was recorded)."""
    user: str | None
    metadata: Mapping[str, str] | None
    record: AuditRecord = field(repr=False)
    delivery: str | None = None
    """What happened to a request that did not finish normally (``delivery_note``); None otherwise."""

    @property
    def delivered(self) -> tuple[ClaimView, ...]:
        return tuple(c for c in self.claims if c.in_answer)

    @property
    def not_delivered(self) -> tuple[ClaimView, ...]:
        return tuple(c for c in self.claims if not c.in_answer)


EMPTY_SUMMARY = TrustSummary(0, 0, 0, 0, 0, False, None, "", None, None, False)
"""The summary shown for a provisional record (the request never completed)."""

PIPELINE_PARTS = ("triage", "draft", "statements", "verdicts", "cleanup", "timings", "error")
"""The parts of the record the audit page shows as JSON."""


def source_views(
    passages: Sequence[PassageRecord],
    tiers: TierPolicy,
    today: dt.date,
    texts: TierBadgeTexts,
    resolved: Sequence[SourceTier] = (),
) -> list[SourceView]:
    """One view per source, its badge's text from ``texts``; ``resolved`` are the tiers recorded at badge
    time (see ``tiers.source_tier``)."""
    views = []
    for number, stored in enumerate(passages, start=1):
        passage = stored.passage()
        tier = source_tier(passage, resolved[number - 1] if number <= len(resolved) else None, today, tiers)
        views.append(
            SourceView(
                number=number,
                passage_id=passage.id,
                title=passage.title,
                org=passage.org,
                url=passage.url,
                badge=source_badge(tier, texts),
                reviewed_on=passage.reviewed_on.isoformat() if passage.reviewed_on else None,
                text=passage.text,
                relevance=round(passage.score, 3),
            )
        )
    return views


def mark_evidence(text: str, evidence: Evidence | None) -> MarkedPassage | None:
    """Split the passage around the evidence span (or, failing that, the evidence text)."""
    if evidence is None:
        return None
    quote = evidence.text
    start, end = evidence.span.start, evidence.span.end
    if 0 <= start < end <= len(text) and (not quote or text[start:end].strip() == quote.strip()):
        return MarkedPassage(text[:start], text[start:end], text[end:])
    if quote and quote in text:
        start = text.index(quote)
        return MarkedPassage(text[:start], quote, text[start + len(quote) :])
    return None


def _claim_views(
    claims: Sequence[ClaimReport], sources: Sequence[SourceView], texts: TierBadgeTexts
) -> list[ClaimView]:
    by_passage = {s.passage_id: s for s in sources}
    views = []
    for number, claim in enumerate(claims, start=1):
        first = claim.badges[0] if claim.badges else None
        evidence = claim.evidence
        passage = by_passage.get(evidence.passage_id) if evidence else None
        if passage is None and first is not None:
            passage = by_passage.get(first.passage_id)
        views.append(
            ClaimView(
                number=number,
                text=claim.text,
                original_text=claim.original_text,
                outcome=claim.outcome.value,
                verdict=claim.verdict.value,
                original_verdict=(claim.original_verdict or claim.verdict).value,
                score=claim.score,
                method=claim.method,
                check=claim.check,
                reason=claim.reason,
                source_numbers=claim.source_numbers,
                badge=source_badge(first, texts),
                badges=claim.badges,
                evidence_text=evidence.text if evidence else None,
                passage=passage,
                marked=mark_evidence(passage.text, evidence) if passage else None,
                in_answer=claim.span is not None,
            )
        )
    return views


def _segments(answer: str, claims: Sequence[ClaimReport], views: Sequence[ClaimView]) -> list[Segment]:
    spans = []
    for claim, view in zip(claims, views, strict=True):
        span = claim.span
        if span and 0 <= span.start < span.end <= len(answer):
            spans.append((span.start, span.end, view))
    spans.sort(key=lambda s: s[0])
    segments, position = [], 0
    for start, end, view in spans:
        if start < position:  # overlapping spans: keep the first, show the rest only in the list
            continue
        if start > position:
            segments.append(Segment(answer[position:start]))
        segments.append(Segment(answer[start:end], view.number, view.outcome, view.badge.tier))
        position = end
    if position < len(answer):
        segments.append(Segment(answer[position:]))
    return segments


def request_view(
    record: AuditRecord, tiers: TierPolicy, today: dt.date, texts: TierBadgeTexts
) -> RequestView:
    """The record as the pages show it: its sources' tiers as of ``today``, their badges' texts ``texts``."""
    trust = record.trust if record.trust is not UNSET else None
    summary = trust.summary if trust is not None else EMPTY_SUMMARY
    claims = trust.claims if trust is not None else ()
    if trust is not None and trust.sources:
        sources = source_views(trust.sources, tiers, today, texts, trust.source_tiers)
    else:  # as before: the retrieved passages when the report kept no sources (no tier was resolved)
        sources = source_views(record.passages if record.passages is not UNSET else (), tiers, today, texts)
    views = _claim_views(claims, sources, texts)
    answer = record.answer if record.answer is not UNSET else record.sent if record.sent is not UNSET else ""
    triage = record.triage if record.triage is not UNSET else None
    return RequestView(
        request_id=record.request_id,
        created_at=record.created_at,
        question=record.question,
        answer=answer,
        scope=triage.scope.value if triage else "",
        triage_layer=triage.layer.value if triage else "-",
        triage_rule=(triage.recognised or triage.rule) if triage else None,
        triage_evidence=triage.evidence if triage else (),
        refused=summary.refused,
        reason=summary.reason.value if summary.reason else None,
        detail=summary.detail,
        summary=summary,
        segments=tuple(_segments(answer, claims, views)),
        claims=tuple(views),
        sources=tuple(sources),
        model=record.model,
        upstream=_text(record.upstream),
        verifier=_text(record.verifier),
        context=_text(record.context),
        operating_point=record.operating_point,
        user=record.user,
        metadata=record.metadata,
        record=record,
        delivery=delivery_note(record),
    )


def delivery_note(record: AuditRecord) -> str | None:
    """What the record says about how far its answer got, when the request did not finish normally."""
    if record.status == INCOMPLETE:
        return (
            "Not finished: the gateway stopped, or its audit store failed, before anything was sent. "
            "Nothing reached the patient."
        )
    if record.status == DELIVERING and record.trust is UNSET:
        return (
            "Delivery not confirmed: the gateway stopped, or its audit store failed, while streaming "
            "this answer. The answer shown is every piece written to this record before it was sent; "
            "the last may not have reached the patient."
        )
    if record.status == DELIVERING:
        return (
            "Delivery not confirmed: the answer was complete and recorded, but the gateway stopped, or "
            "its audit store failed, before confirming that its final chunk and [DONE] were written "
            "to the connection."
        )
    if record.interruption == RequestOutcome.CLIENT_DISCONNECTED:
        return (
            "The client went away: the answer shown is the text handed to the connection before it "
            "did; the last piece may not have arrived."
        )
    if record.interruption == RequestOutcome.CANCELLED:
        return "The server stopped while answering: the answer shown is the text sent before it did."
    return None


def _text(value: str | object) -> str:
    return value if isinstance(value, str) else ""


def pipeline_data(record: AuditRecord) -> dict[str, str]:
    """The record's pipeline parts as indented JSON (``null`` for a part a provisional record lacks)."""
    return {
        key: json.dumps(builtins(getattr(record, key)), indent=2, ensure_ascii=False, default=str)
        for key in PIPELINE_PARTS
    }
