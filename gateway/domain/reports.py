"""The trust side: badges, source tiers and the response's trust report."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from gateway.domain.drafts import Passage, Span
from gateway.domain.outcomes import ClaimOutcome, RefusalReason
from gateway.domain.verdicts import Evidence, VerdictLabel
from gateway.vocabulary import VerdictCheck, VerifierMethod


@dataclass(frozen=True)
class Badge:
    source_number: int
    passage_id: str
    tier: str
    tier_label: str
    trust_score: float
    title: str
    org: str
    url: str
    reviewed_on: dt.date | None
    evidence_quote: str | None


@dataclass(frozen=True)
class SourceTier:
    """A source's tier and trust score, resolved once at badge time (``gateway.trust.tiers.resolve_tier``)."""

    tier: str
    tier_label: str
    trust_score: float


@dataclass(frozen=True)
class ClaimReport:
    text: str
    span: Span | None
    source_numbers: tuple[int, ...]
    verdict: VerdictLabel
    score: float
    method: VerifierMethod
    check: VerdictCheck
    outcome: ClaimOutcome
    reason: str
    original_text: str
    badges: tuple[Badge, ...]
    evidence: Evidence | None
    original_verdict: VerdictLabel | None = None
    """The first verdict on the model's own text; differs from ``verdict`` only for rewritten claims."""


@dataclass(frozen=True)
class TrustSummary:
    claims: int
    supported: int
    rewritten: int
    removed: int
    conversational: int
    refused: bool
    reason: RefusalReason | None
    detail: str
    trust_score: float | None
    statement_support: float | None
    response_supported: bool
    ended_early: bool = False
    """The answer stopped after verified sentences were sent (``reason`` says why; docs/safety.md)."""


@dataclass(frozen=True)
class TrustReport:
    claims: tuple[ClaimReport, ...]
    summary: TrustSummary
    sources: tuple[Passage, ...]
    source_tiers: tuple[SourceTier, ...] = ()
    """One per source, in order, resolved when the claims were badged; empty for a report built
    without badging (``TierBadger.unbadged``): readers then use ``tiers.source_tier``."""
    operating_point: str = ""
    """The operating point of the verifier that checks the chat path's claims, as ``/v1/verify`` and
    the eval name it (``verification.verifier.operating_point``): handed to the badge stage at start-up
    (``trust.badge.TierBadger``), so every report the pipeline builds names it, with badges or without
    (``TierBadger.unbadged``: a refusal or an interrupted run, whose recorded verdicts, if any, that
    verifier gave). Empty only in a report built without one (``trust.badge.badge`` called bare) and
    in audit records written before it existed."""
