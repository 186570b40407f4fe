"""Stage 7: trust badges per claim and a response-level summary for clinicians."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from gateway.domain import (
    Badge,
    ClaimOutcome,
    ClaimReport,
    ClaimResult,
    Outcome,
    Passage,
    TrustReport,
    TrustSummary,
)
from gateway.policy import TierPolicy
from gateway.tiers import resolve_tier, trust_score


def badges_for(
    result: ClaimResult, passages: Sequence[Passage], policy: TierPolicy, today: dt.date
) -> tuple[Badge, ...]:
    verdict = result.rewrite_verdict or result.verdict
    evidence = verdict.evidence
    numbers = list(result.statement.source_numbers)
    if evidence and evidence.source_number not in numbers:
        numbers.insert(0, evidence.source_number)
    badges = []
    for number in numbers:
        if not 1 <= number <= len(passages):
            continue
        passage = passages[number - 1]
        tier = resolve_tier(passage, policy)
        quote = evidence.text if evidence and evidence.source_number == number else None
        badges.append(
            Badge(
                source_number=number,
                passage_id=passage.id,
                tier=tier.id,
                tier_label=tier.label,
                trust_score=trust_score(tier, passage.reviewed_on, today, policy),
                title=passage.title,
                org=passage.org,
                url=passage.url,
                reviewed_on=passage.reviewed_on,
                evidence_quote=quote,
            )
        )
    badges.sort(key=lambda b: (b.evidence_quote is None, -b.trust_score))
    return tuple(badges)


def response_trust(scores: Sequence[float]) -> float | None:
    """Weighted toward the best sources: each claim's best source score, weighted by itself."""
    if not scores:
        return None
    total = sum(scores)
    return round(sum(s * s for s in scores) / total, 3) if total else 0.0


def badge(outcome: Outcome, passages: Sequence[Passage], policy: TierPolicy, today: dt.date) -> TrustReport:
    reports = []
    best_scores = []
    for result in outcome.claims:
        badges = badges_for(result, passages, policy, today)
        verdict = result.rewrite_verdict or result.verdict
        if result.outcome is not ClaimOutcome.REMOVED and badges and not outcome.refused:
            best_scores.append(badges[0].trust_score)
        reports.append(
            ClaimReport(
                text=result.final_text or result.statement.text,
                span=result.final_span if not outcome.refused else None,
                source_numbers=result.statement.source_numbers,
                verdict=result.verdict.label,
                score=round(verdict.score, 3),
                method=verdict.method,
                check=verdict.check,
                outcome=result.outcome,
                reason=result.reason,
                original_text=result.statement.text,
                badges=badges,
                evidence=verdict.evidence,
            )
        )
    claims = outcome.claims
    supported = sum(1 for c in claims if c.verdict.supported)
    summary = TrustSummary(
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
        response_supported=bool(claims) and supported == len(claims),
    )
    return TrustReport(claims=tuple(reports), summary=summary, sources=tuple(passages))
