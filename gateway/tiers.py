"""Source tiers and trust scores: what kind of source a passage comes from, and how far to trust it."""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlparse

from gateway.domain import Passage
from gateway.policy import Tier, TierPolicy

DAYS_PER_YEAR = 365.25


def _domain_matches(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


def resolve_tier(passage: Passage, policy: TierPolicy) -> Tier:
    """The manifest's tier when it names a declared one; else the first matching rule; else the default."""
    declared = {t.id for t in policy.tiers}
    if passage.tier in declared:
        return policy.tier(passage.tier)
    host = (urlparse(passage.url).hostname or "").lower()
    org = passage.org.lower()
    for rule in policy.rules:
        if host and any(_domain_matches(host, d.lower()) for d in rule.domains):
            return policy.tier(rule.tier)
    for rule in policy.rules:
        if org and any(o.lower() == org for o in rule.orgs):
            return policy.tier(rule.tier)
    for rule in policy.rules:
        if passage.doc_type in rule.doc_types:
            return policy.tier(rule.tier)
    return policy.tier(policy.default_tier)


def trust_score(tier: Tier, reviewed_on: dt.date | None, today: dt.date, policy: TierPolicy) -> float:
    """The tier's base score less the largest age step the source has passed (or the undated penalty)."""
    if reviewed_on is None:
        penalty = policy.undated_penalty
    else:
        age_years = (today - reviewed_on).days / DAYS_PER_YEAR
        penalty = max((s.penalty for s in policy.age_steps if age_years > s.older_than_years), default=0.0)
    return round(max(0.0, tier.base_score - penalty), 3)
