"""View models for the clinician and audit pages, built from a stored audit record.

The pages read the audit record (not live pipeline objects), so what a clinician sees is exactly what
was recorded for the request. Everything here is plain data; the templates escape it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gateway.domain import Passage
from gateway.knowledge.corpus import parse_date
from gateway.policy.tiers import TierPolicy
from gateway.tiers import resolve_tier, trust_score

TIER_SHORT = {
    "regulatory": "Regulator / research",
    "clinical_reference": "Clinical reference",
    "guideline": "Guideline / review",
    "educational": "Educational",
    "unknown": "Unknown source",
}


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
    tier: str
    tier_label: str
    tier_short: str
    trust_score: float
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
    tier: str
    tier_label: str
    tier_short: str
    trust_score: float | None
    badges: tuple[dict[str, Any], ...]
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
    summary: Mapping[str, Any]
    triage_layer: str
    """The triage layer that decided the scope (rule, exemplar, classifier, context, default)."""
    triage_rule: str | None
    """The red-flag rule or category recognised (or the rule that declined), if any."""
    segments: tuple[Segment, ...]
    claims: tuple[ClaimView, ...]
    sources: tuple[SourceView, ...]
    record: Mapping[str, Any] = field(repr=False)

    @property
    def delivered(self) -> tuple[ClaimView, ...]:
        return tuple(c for c in self.claims if c.in_answer)

    @property
    def not_delivered(self) -> tuple[ClaimView, ...]:
        return tuple(c for c in self.claims if not c.in_answer)


def _passage(data: Mapping[str, Any]) -> Passage:
    return Passage(
        id=str(data.get("id", "")),
        document_id=str(data.get("document_id", "")),
        text=str(data.get("text", "")),
        title=str(data.get("title", "")),
        url=str(data.get("url", "")),
        org=str(data.get("org", "")),
        tier=str(data.get("tier", "")),
        reviewed_on=parse_date(data.get("reviewed_on"), "audit record", "reviewed_on"),
        score=float(data.get("score") or 0.0),
        doc_type=str(data.get("doc_type") or "article"),
    )


def source_views(
    passages: Sequence[Mapping[str, Any]], tiers: TierPolicy, today: dt.date
) -> list[SourceView]:
    views = []
    for number, data in enumerate(passages, start=1):
        passage = _passage(data)
        tier = resolve_tier(passage, tiers)
        views.append(
            SourceView(
                number=number,
                passage_id=passage.id,
                title=passage.title,
                org=passage.org,
                url=passage.url,
                tier=tier.id,
                tier_label=tier.label,
                tier_short=TIER_SHORT.get(tier.id, tier.label),
                trust_score=trust_score(tier, passage.reviewed_on, today, tiers),
                reviewed_on=passage.reviewed_on.isoformat() if passage.reviewed_on else None,
                text=passage.text,
                relevance=round(passage.score, 3) if data.get("score") is not None else None,
            )
        )
    return views


def mark_evidence(text: str, evidence: Mapping[str, Any] | None) -> MarkedPassage | None:
    """Split the passage around the evidence span (or, failing that, the evidence text)."""
    if not evidence:
        return None
    quote = str(evidence.get("text") or "")
    span = evidence.get("span") or {}
    start, end = span.get("start"), span.get("end")
    in_range = isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)
    if in_range and (not quote or text[start:end].strip() == quote.strip()):
        return MarkedPassage(text[:start], text[start:end], text[end:])
    if quote and quote in text:
        start = text.index(quote)
        return MarkedPassage(text[:start], quote, text[start + len(quote) :])
    return None


def _claim_views(claims: Sequence[Mapping[str, Any]], sources: Sequence[SourceView]) -> list[ClaimView]:
    by_passage = {s.passage_id: s for s in sources}
    views = []
    for number, claim in enumerate(claims, start=1):
        badges = tuple(claim.get("badges") or ())
        first = badges[0] if badges else None
        evidence = claim.get("evidence")
        passage = None
        if evidence:
            passage = by_passage.get(str(evidence.get("passage_id")))
        if passage is None and first is not None:
            passage = by_passage.get(str(first.get("passage_id")))
        tier = str(first.get("tier")) if first else "unknown"
        views.append(
            ClaimView(
                number=number,
                text=str(claim.get("text", "")),
                original_text=str(claim.get("original_text", "")),
                outcome=str(claim.get("outcome", "")),
                verdict=str(claim.get("verdict", "")),
                original_verdict=str(claim.get("original_verdict") or claim.get("verdict", "")),
                score=claim.get("score"),
                method=str(claim.get("method", "")),
                check=str(claim.get("check", "")),
                reason=str(claim.get("reason", "")),
                source_numbers=tuple(int(n) for n in claim.get("source_numbers") or ()),
                tier=tier,
                tier_label=str(first.get("tier_label")) if first else "No source",
                tier_short=TIER_SHORT.get(tier, tier) if first else "No source",
                trust_score=first.get("trust_score") if first else None,
                badges=badges,
                evidence_text=str(evidence.get("text")) if evidence else None,
                passage=passage,
                marked=mark_evidence(passage.text, evidence) if passage else None,
                in_answer=claim.get("span") is not None,
            )
        )
    return views


def _segments(answer: str, claims: Sequence[Mapping[str, Any]], views: Sequence[ClaimView]) -> list[Segment]:
    spans = []
    for claim, view in zip(claims, views, strict=True):
        span = claim.get("span")
        if span and 0 <= span["start"] < span["end"] <= len(answer):
            spans.append((span["start"], span["end"], view))
    spans.sort(key=lambda s: s[0])
    segments, position = [], 0
    for start, end, view in spans:
        if start < position:  # overlapping spans: keep the first, show the rest only in the list
            continue
        if start > position:
            segments.append(Segment(answer[position:start]))
        segments.append(Segment(answer[start:end], view.number, view.outcome, view.tier))
        position = end
    if position < len(answer):
        segments.append(Segment(answer[position:]))
    return segments


def request_view(record: Mapping[str, Any], tiers: TierPolicy, today: dt.date) -> RequestView:
    trust = record.get("trust") or {}
    summary = trust.get("summary") or {}
    claims = list(trust.get("claims") or ())
    sources = source_views(list(trust.get("sources") or record.get("passages") or ()), tiers, today)
    views = _claim_views(claims, sources)
    answer = str(record.get("answer", ""))
    triage = record.get("triage") or {}
    return RequestView(
        request_id=str(record.get("request_id", "")),
        created_at=str(record.get("created_at", "")),
        question=str(record.get("question", "")),
        answer=answer,
        scope=str(triage.get("scope", "")),
        triage_layer=str(triage.get("layer") or "-"),
        triage_rule=triage.get("recognised") or triage.get("rule"),
        refused=bool(summary.get("refused")),
        reason=summary.get("reason"),
        detail=str(summary.get("detail", "")),
        summary=summary,
        segments=tuple(_segments(answer, claims, views)),
        claims=tuple(views),
        sources=tuple(sources),
        record=record,
    )
