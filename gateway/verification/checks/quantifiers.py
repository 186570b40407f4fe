"""The quantifier check: a claim must not generalise more strongly than its evidence."""

from __future__ import annotations

import re
from typing import Protocol

from gateway.domain import ConflictKind
from gateway.verification.checks.results import CheckName, CheckOutcome, CheckResult, clash, pass_result
from gateway.verification.lexicon import Cues


class QualifiedText(Protocol):
    """What the quantifier check reads of a text (``analysis.AnalysedText`` provides it)."""

    @property
    def strength(self) -> int: ...


StrengthPatterns = tuple[tuple[int, re.Pattern[str]], ...]
"""Each strength level's cue pattern, strongest first."""


def strength_patterns(cues: Cues) -> StrengthPatterns:
    """Each strength level's cue pattern, strongest first (``CheckData.strengths``)."""
    return tuple(
        (level, re.compile(rf"\b{cues.alternation(key)}\b"))
        for level, key in (
            (4, "quantifier_universal"),
            (3, "quantifier_most"),
            (2, "quantifier_many"),
            (1, "quantifier_some"),
        )
    )


UNIVERSAL = 4
"""Strength of always/all/every: the level a claim must not reach unless the evidence does too."""


def strength(clean: str, patterns: StrengthPatterns) -> int:
    """How strongly the normalised text generalises: 4 universal ... 1 hedged, 0 unqualified."""
    for level, pattern in patterns:
        if pattern.search(clean):
            return level
    return 0


def stronger(claim: QualifiedText, evidence: QualifiedText) -> bool:
    """Does the claim generalise more strongly than evidence that qualifies itself ("most" or "all" for
    "some", "often" for "can")? Such a claim is never a restatement of its source (``restatement``).
    Unqualified evidence is not compared here: a hedge the claim adds to it ("may") is weaker, and a
    universal claim is ``check_quantifier``'s."""
    return 0 < evidence.strength < claim.strength


def check_quantifier(claim: QualifiedText, evidence: QualifiedText) -> CheckResult:
    """A claim must not generalise more strongly than its evidence ("always" vs "sometimes").

    CLASH when the evidence is explicitly weaker (hedged); MISSING when the claim is universal and the
    evidence merely unqualified.
    """
    mine, theirs = claim.strength, evidence.strength
    if mine <= theirs or mine < UNIVERSAL:
        return pass_result(CheckName.QUANTIFIER)
    if theirs > 0:
        return clash(
            CheckName.QUANTIFIER,
            ConflictKind.QUANTIFIER,
            "the claim generalises more strongly than the evidence",
        )
    if mine >= UNIVERSAL:
        return CheckResult(
            CheckName.QUANTIFIER, CheckOutcome.MISSING, "the claim is universal; the evidence does not say so"
        )
    return pass_result(CheckName.QUANTIFIER)
