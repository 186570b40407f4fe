"""Stage 7: trust badges per claim and a response-level summary for clinicians.

A claim's badges are its sources: every passage it cites, plus the passage where the verifier found
the evidence when that one was not cited. The badge of the supporting passage (the one carrying the
evidence quote) comes first, then the others by trust score. The response's trust score is the mean
of each delivered claim's first badge's score, weighted by that score itself, so that the answer's
best supporting sources count the most.

The report names the operating point of the verifier that checked its claims (``TrustReport.
operating_point``): the badge stage is handed that string at start-up (``TierBadger``; ``bootstrap``
gives it ``verification.verifier.operating_point`` of the chat path's verifier, the one ``/v1/verify``
uses), and puts it on every report it builds, with badges (``run``) or without (``unbadged``).

``source_badge`` decides how a source's tier is shown on the clinician and audit pages (its text and
colour), once per source; the templates read it and compute nothing. Its short texts
(``data/tier_badges.yaml``) are read at start-up (``load_tier_badges``, by ``web.app.create_app``) and
handed to the pages that show badges.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from gateway.domain import (
    Badge,
    ClaimOutcome,
    ClaimReport,
    ClaimResult,
    Outcome,
    Passage,
    SourceTier,
    TrustReport,
    TrustSummary,
)
from gateway.trust.policy import TierBadgeTexts, TierPolicy
from gateway.trust.tiers import resolved_tier
from gateway.validation import load_file

TIER_BADGES_PATH = Path(__file__).parents[1] / "data" / "tier_badges.yaml"


def load_tier_badges(path: Path | None = None) -> TierBadgeTexts:
    """The short text of each shipped tier's badge (``TIER_BADGES_PATH`` unless ``path``; the patient
    page's script reads this map too); another tier shows its policy label. Read once at start-up
    (``web.app.create_app``) and held by the pages that show badges; a bad file stops start-up with a
    ConfigurationError naming it."""
    return load_file(path or TIER_BADGES_PATH, TierBadgeTexts)


@dataclass(frozen=True)
class SourceBadge:
    """How a source's tier is shown: ``tier`` names its colour (the ``tier-<tier>`` CSS class), ``short``
    is its text, ``label`` the tier's full label, ``trust_score`` the source's score (None: no source)."""

    tier: str
    label: str
    short: str
    trust_score: float | None


NO_SOURCE = SourceBadge(tier="unknown", label="No source", short="No source", trust_score=None)
"""The badge of a claim that cites no source."""


def source_badge(tier: SourceTier | Badge | None, texts: TierBadgeTexts) -> SourceBadge:
    """The badge of a source from its resolved tier (or a claim's first badge), its text from ``texts``
    (``load_tier_badges``); ``NO_SOURCE`` for None."""
    if tier is None:
        return NO_SOURCE
    return SourceBadge(
        tier=tier.tier,
        label=tier.tier_label,
        short=texts.short.get(tier.tier, tier.tier_label),
        trust_score=tier.trust_score,
    )


def source_tiers(passages: Sequence[Passage], policy: TierPolicy, today: dt.date) -> tuple[SourceTier, ...]:
    """Every source's tier, resolved once per request: the badges, the API and the audit read these."""
    return tuple(resolved_tier(p, today, policy) for p in passages)


def badges_for(
    result: ClaimResult,
    passages: Sequence[Passage],
    policy: TierPolicy,
    today: dt.date,
    tiers: Sequence[SourceTier] | None = None,
) -> tuple[Badge, ...]:
    """One badge per distinct source of the claim; the supporting (evidence) source first.

    ``tiers`` are the sources' resolved tiers (``source_tiers``), resolved here when not given."""
    if tiers is None:
        tiers = source_tiers(passages, policy, today)
    verdict = result.rewrite_verdict or result.verdict
    evidence = verdict.evidence
    numbers = list(dict.fromkeys(result.statement.source_numbers))
    if evidence and evidence.source_number not in numbers:
        numbers.insert(0, evidence.source_number)
    badges = []
    for number in numbers:
        if not 1 <= number <= len(passages):
            continue
        passage = passages[number - 1]
        tier = tiers[number - 1]
        quote = evidence.text if evidence and evidence.source_number == number else None
        badges.append(
            Badge(
                source_number=number,
                passage_id=passage.id,
                tier=tier.tier,
                tier_label=tier.tier_label,
                trust_score=tier.trust_score,
                title=passage.title,
                org=passage.org,
                url=passage.url,
                reviewed_on=passage.reviewed_on,
                evidence_quote=quote,
            )
        )
    badges.sort(key=lambda b: (b.evidence_quote is None, -b.trust_score, b.source_number))
    return tuple(badges)


def response_trust(scores: Sequence[float]) -> float | None:
    """Weighted toward the best sources: the mean of the scores, each weighted by itself."""
    if not scores:
        return None
    total = sum(scores)
    return round(sum(s * s for s in scores) / total, 3) if total else 0.0


def claim_report(result: ClaimResult, badges: tuple[Badge, ...], refused: bool) -> ClaimReport:
    """The claim as clinicians see it. ``verdict``, ``score``, ``method``, ``check`` and ``evidence``
    all describe the same check: the rewrite's when the claim was rewritten, else the first one."""
    verdict = result.rewrite_verdict or result.verdict
    return ClaimReport(
        text=result.final_text or result.statement.text,
        span=None if refused else result.final_span,
        source_numbers=result.statement.source_numbers,
        verdict=verdict.label,
        score=round(verdict.score, 3),
        method=verdict.method,
        check=verdict.check,
        outcome=result.outcome,
        reason=result.reason,
        original_text=result.statement.text,
        badges=badges,
        evidence=verdict.evidence,
        original_verdict=result.verdict.label,
    )


def badge(
    outcome: Outcome,
    passages: Sequence[Passage],
    policy: TierPolicy,
    today: dt.date,
    operating_point: str = "",
) -> TrustReport:
    """The trust report of ``outcome``: per-claim badges and the summary, naming ``operating_point`` (the
    verifier's that checked the claims; empty when the caller does not know it)."""
    reports = []
    best_scores = []
    tiers = source_tiers(passages, policy, today)
    for result in outcome.claims:
        badges = badges_for(result, passages, policy, today, tiers)
        if result.outcome is not ClaimOutcome.REMOVED and badges and not outcome.refused:
            best_scores.append(badges[0].trust_score)
        reports.append(claim_report(result, badges, outcome.refused))
    summary = summarise(outcome, best_scores)
    return TrustReport(
        claims=tuple(reports),
        summary=summary,
        sources=tuple(passages),
        source_tiers=tiers,
        operating_point=operating_point,
    )


class Badger(Protocol):
    """The badge stage as the pipeline uses it: every trust report of a chat request comes from it."""

    async def run(self, outcome: Outcome, passages: Sequence[Passage]) -> TrustReport:
        """The trust report of ``outcome``, whose claims cite ``passages``."""
        ...

    def unbadged(self, outcome: Outcome, passages: Sequence[Passage]) -> TrustReport:
        """The report without per-claim badges (a failed stage's refusal, an interrupted run): never
        fails, reads no clock, names the same operating point as ``run``."""
        ...


class TierBadger:
    """The gateway's badge stage: built once at start-up with the tiers policy, the clock that dates
    each source's review and the operating point of the verifier that checks the claims it badges
    (``bootstrap``: ``verification.verifier.operating_point`` of the chat path's verifier)."""

    def __init__(self, policy: TierPolicy, today: Callable[[], dt.date], operating_point: str) -> None:
        self.policy = policy
        self.today = today
        self.operating_point = operating_point

    async def run(self, outcome: Outcome, passages: Sequence[Passage]) -> TrustReport:
        return badge(outcome, passages, self.policy, self.today(), self.operating_point)

    def unbadged(self, outcome: Outcome, passages: Sequence[Passage]) -> TrustReport:
        """The report without per-claim badges: of an outcome with no claim (a failed stage's refusal,
        an interrupted run), the same as ``run`` gives without its tier lookups; of a refusal whose
        badging failed, its summary (an answer whose badging fails is refused instead). Its sources
        carry no resolved tier: readers resolve them through ``tiers.source_tier``. It names this
        stage's operating point, as ``run`` does: the verifier is the same whether or not the claims
        could be badged (and an interrupted run's recorded verdicts are that verifier's)."""
        return TrustReport(
            claims=(),
            summary=summarise(outcome, ()),
            sources=tuple(passages),
            operating_point=self.operating_point,
        )


def summarise(outcome: Outcome, best_scores: Sequence[float]) -> TrustSummary:
    claims = outcome.claims
    supported = sum(1 for c in claims if c.verdict.supported)
    return TrustSummary(
        claims=len(claims),
        supported=supported,
        rewritten=sum(1 for c in claims if c.outcome is ClaimOutcome.REWRITTEN),
        removed=sum(1 for c in claims if c.outcome is ClaimOutcome.REMOVED),
        conversational=sum(1 for s in outcome.statements if not s.is_claim),
        refused=outcome.refused,
        reason=outcome.refusal_reason,
        detail=outcome.refusal_detail,
        trust_score=response_trust(best_scores),
        statement_support=round(supported / len(claims), 4) if claims else None,
        response_supported=bool(claims) and supported == len(claims) and not outcome.ended_early,
        ended_early=outcome.ended_early,
    )
