"""Cleanup rules: rewriting, the removed-claims share that refuses, safety-critical and planted-instruction
patterns (``thresholds.yaml: cleanup``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gateway.validation import SignedUnitInterval, UnitInterval, compile_all


@dataclass(frozen=True)
class SafetyRule:
    id: str
    """Name of the rule, recorded when it fires."""
    patterns: tuple[str, ...]
    """Case-insensitive regular expressions; a claim matching any is safety-critical."""


@dataclass(frozen=True)
class CleanupPolicy:
    rewrite: bool = True
    """Try to rewrite an unsupported claim before removing it."""
    max_removed_share: UnitInterval = 0.5
    """Refuse the whole answer when more than this share of claims is removed."""
    safety_critical: tuple[SafetyRule, ...] = ()
    """Claims matching these rules refuse the whole answer when they fail verification."""
    rewriter: Literal["auto", "upstream", "extractive"] = "extractive"
    """Who rewrites: ``extractive`` (the default) the source's own sentence(s) holding the claim's
    quote, at once and without a model call, so a failing claim does not hold a streamed answer;
    ``upstream`` (or ``auto`` with an upstream configured) the model's rewrite first, which the
    sentences after it wait for; the source is always the fallback."""
    rewrite_min_similarity: SignedUnitInterval = 0.8
    """Unused since rewrites are bound to the claim's anchored quote; kept so policy files still load."""
    allow_rewritten_safety_critical: bool = True
    """A failing safety-critical claim whose rewrite passes verification is shown instead of refusing."""
    planted_instruction: tuple[str, ...] = ()
    """Patterns of instructions planted in sources: never evidence; a claim resting on one refuses."""

    def __post_init__(self) -> None:
        for rule in self.safety_critical:
            compile_all(self, rule.patterns, f"safety_critical[{rule.id}]")
        compile_all(self, self.planted_instruction, "planted_instruction")
