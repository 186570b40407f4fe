"""Source tiers and trust scores: what kind of source a passage comes from, and how far to trust it.

The operator's ``policies/tiers.yaml`` declares the tiers (id, label, base score), the age steps and
the rules that map a source to a tier. Resolution order, first hit wins:

1. the tier the knowledge manifest names for the document, when it is a declared tier;
2. a rule whose ``domains`` match the URL's host (the most specific matching domain wins, so
   ``dailymed.nlm.nih.gov`` beats ``nih.gov`` whatever the rule order);
3. a rule whose ``orgs`` name the source's organisation (case-insensitive), in rule order;
4. a rule whose ``doc_types`` contain the document type, in rule order;
5. ``default_tier``.
"""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlparse

from gateway.domain import Passage, SourceTier
from gateway.trust.policy import Tier, TierPolicy

DAYS_PER_YEAR = 365.25


def _host(url: str) -> str:
    try:
        host = urlparse(url.strip()).hostname or ""
    except ValueError:
        return ""
    return host.rstrip(".").lower()


def _domain_matches(host: str, domain: str) -> bool:
    domain = domain.strip().rstrip(".").lower()
    return bool(domain) and (host == domain or host.endswith("." + domain))


def _tier_by_domain(host: str, policy: TierPolicy) -> str | None:
    best: tuple[int, str] | None = None
    for rule in policy.rules:
        for domain in rule.domains:
            if _domain_matches(host, domain) and (best is None or len(domain) > best[0]):
                best = (len(domain), rule.tier)
    return best[1] if best else None


def resolve_tier(passage: Passage, policy: TierPolicy) -> Tier:
    """The tier of the passage's source (see the module docstring for the order)."""
    declared = {t.id for t in policy.tiers}
    if passage.tier in declared:
        return policy.tier(passage.tier)
    host = _host(passage.url)
    if host:
        by_domain = _tier_by_domain(host, policy)
        if by_domain is not None:
            return policy.tier(by_domain)
    org = passage.org.strip().lower()
    if org:
        for rule in policy.rules:
            if any(o.strip().lower() == org for o in rule.orgs):
                return policy.tier(rule.tier)
    for rule in policy.rules:
        if passage.doc_type in rule.doc_types:
            return policy.tier(rule.tier)
    return policy.tier(policy.default_tier)


def age_years(reviewed_on: dt.date, today: dt.date) -> float:
    """Years since the source was last reviewed (negative for a date in the future)."""
    return (today - reviewed_on).days / DAYS_PER_YEAR


def age_penalty(reviewed_on: dt.date | None, today: dt.date, policy: TierPolicy) -> float:
    """The largest age step the source has passed (strictly older than), or the undated penalty."""
    if reviewed_on is None:
        return policy.undated_penalty
    age = age_years(reviewed_on, today)
    return max((s.penalty for s in policy.age_steps if age > s.older_than_years), default=0.0)


def trust_score(tier: Tier, reviewed_on: dt.date | None, today: dt.date, policy: TierPolicy) -> float:
    """The tier's base score less the age penalty, clamped at 0 and rounded to 3 places."""
    return round(max(0.0, tier.base_score - age_penalty(reviewed_on, today, policy)), 3)


def resolved_tier(passage: Passage, today: dt.date, policy: TierPolicy) -> SourceTier:
    """The passage's tier and trust score as of ``today``: what badging records for every source."""
    tier = resolve_tier(passage, policy)
    return SourceTier(tier.id, tier.label, trust_score(tier, passage.reviewed_on, today, policy))


def source_tier(
    passage: Passage, resolved: SourceTier | None, today: dt.date, policy: TierPolicy
) -> SourceTier:
    """The one fallback for readers of a trust report (the API's serializers, the audit pages).

    The tier resolved at badge time when the report (or the stored record) carries it; otherwise,
    for an audit record written before tiers were recorded or a report built without badging (a
    failed stage's refusal), it is resolved now from the passage's stored fields (``tier``, ``url``,
    ``org``, ``doc_type``, ``reviewed_on``) under the current policy and ``today``.
    """
    return resolved if resolved is not None else resolved_tier(passage, today, policy)
