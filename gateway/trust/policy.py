"""Source tiers: base trust scores, age decay and the rules that put a source in a tier (``tiers.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import ConfigDict, Field, field_validator, with_config
from pydantic.dataclasses import dataclass as pydantic_dataclass

from gateway.validation import FILE_CONFIG, UnitInterval, field_error


@dataclass(frozen=True)
class Tier:
    id: str
    label: str
    base_score: UnitInterval


@dataclass(frozen=True)
class AgeStep:
    older_than_years: Annotated[float, Field(ge=0.0, le=200.0)]
    """Applies when the source was last reviewed more than this many years ago."""
    penalty: UnitInterval
    """Subtracted from the base score (the largest matching step applies)."""


@dataclass(frozen=True)
class TierRule:
    tier: str
    domains: tuple[str, ...] = ()
    orgs: tuple[str, ...] = ()
    doc_types: tuple[str, ...] = ()


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class TierPolicy:
    tiers: tuple[Tier, ...]
    default_tier: str = "unknown"
    age_steps: tuple[AgeStep, ...] = ()
    undated_penalty: UnitInterval = 0.0
    """Subtracted when a source carries no date."""
    rules: tuple[TierRule, ...] = ()

    def __post_init__(self) -> None:
        ids = {t.id for t in self.tiers}
        if len(ids) != len(self.tiers):
            raise field_error(self, "tiers", "tier ids must be unique")
        if self.default_tier not in ids:
            raise field_error(self, "default_tier", f"{self.default_tier!r} is not a declared tier")
        for rule in self.rules:
            if rule.tier not in ids:
                raise field_error(self, "rules", f"tier {rule.tier!r} is not declared")

    def tier(self, tier_id: str) -> Tier:
        for t in self.tiers:
            if t.id == tier_id:
                return t
        return self.tier(self.default_tier)


@pydantic_dataclass(config=ConfigDict(extra="forbid"))
class TierBadgeTexts:
    """The short badge text of each shipped tier (``gateway/data/tier_badges.yaml``)."""

    short: dict[str, str]
    """Tier id -> the badge's text (a tier not listed shows its policy label)."""

    @field_validator("short")
    @classmethod
    def _texts(cls, short: dict[str, str]) -> dict[str, str]:
        for tier, text in short.items():
            if not tier.strip() or not text.strip():
                raise ValueError(f"tier {tier!r}: the tier id and its text must not be empty")
        return short
