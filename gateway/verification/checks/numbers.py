"""The number check: every number of the claim, with its unit, must be stated by the evidence."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from gateway.domain import ConflictKind
from gateway.verification.checks.quantities import PERCENT, Quantity
from gateway.verification.checks.results import CheckName, CheckOutcome, CheckResult, clash, pass_result


class NumberedText(Protocol):
    """What the number check reads of a text (``analysis.AnalysedText`` provides it)."""

    @property
    def quantities(self) -> tuple[Quantity, ...]: ...


_ROUNDABLE = frozenset((None, "percent", "times"))
_ROUNDING_TOLERANCE = 0.025
"""A round claim number matches a non-integer evidence number within 2.5 % of it (statistics only)."""
_ROUND_ZEROS = 3
"""A claim number ending in this many zeros (122,000) matches evidence that rounds to it (122,300)."""
_HEDGED_TOLERANCE = 0.1
"""A hedged claim number ("about", "nearly") matches within 10 % (statistics only)."""
_BOUND_SPAN = 2.0
"""A bounded statistic ("more than half") matches values up to this factor beyond its bound."""
_MIN_YEAR, _MAX_YEAR = 1800, 2100
_REL_TOLERANCE = 1e-6
"""Numbers are compared exactly (up to float error): a dose off by any amount is a different dose."""


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_REL_TOLERANCE, abs_tol=_REL_TOLERANCE)


def _rounded(claim: Quantity, raw: float, other: Quantity) -> bool:
    """A statistic (no unit, or a percentage) stated round or hedged in the claim matches a close value:
    "40 percent" ~ "40.7 %", "nearly 20,000" ~ "19,860". Doses and other units always match exactly."""
    if claim.dimension not in _ROUNDABLE or other.dimension not in _ROUNDABLE or not raw:
        return False
    ends = (other.raw_low, other.raw_high)
    if claim.bound and any(_within_bound(claim.bound, raw, e) for e in ends):
        return True
    if claim.approximate:
        return any(abs(raw - e) <= _HEDGED_TOLERANCE * abs(raw) for e in ends)
    return raw.is_integer() and any(_rounds_to(raw, e) for e in ends)


def _within_bound(bound: str, raw: float, value: float) -> bool:
    if bound == "min":
        return raw <= value <= raw * _BOUND_SPAN
    return raw / _BOUND_SPAN <= value <= raw


def _rounds_to(raw: float, value: float) -> bool:
    """Is the round ``raw`` a rounding of ``value``? 40 ~ 40.7 (within 2.5 %), 122,000 ~ 122,300."""
    if not value.is_integer() and abs(raw - value) <= _ROUNDING_TOLERANCE * abs(raw):
        return True
    zeros = len(str(int(raw))) - len(str(int(raw)).rstrip("0"))
    return zeros >= _ROUND_ZEROS and round(value, -zeros) == raw


def _value_matches(claim: Quantity, base: float, raw: float, other: Quantity) -> bool:
    """Does one value of ``claim`` equal ``other`` (or one of its range ends)?

    With units on both sides the converted values are compared (0.5 g == 500 mg); when either side has
    no unit the stated numbers are (20 == 20 years), and a bare fraction equals a percentage (0.5 == 50 %).
    """
    if claim.dimension is not None and other.dimension is not None:
        if claim.dimension == other.dimension and _rounded(claim, raw, other):
            return True
        return claim.dimension == other.dimension and any(_close(base, e) for e in (other.low, other.high))
    ends = (other.raw_low, other.raw_high)
    if any(_close(raw, e) for e in ends) or _rounded(claim, raw, other):
        return True
    if claim.dimension is None and other.dimension == "percent":
        return any(_close(raw * PERCENT, e) for e in ends)
    if claim.dimension == "percent" and other.dimension is None:
        return any(_close(raw / PERCENT, e) for e in ends)
    return False


def _quantity_supported(claim: Quantity, evidence: Sequence[Quantity]) -> bool:
    if claim.is_range and any(
        e.is_range
        and _value_matches(claim, claim.low, claim.raw_low, e)
        and _close(
            e.raw_high if claim.dimension is None or e.dimension is None else e.high,
            claim.raw_high if claim.dimension is None or e.dimension is None else claim.high,
        )
        for e in evidence
    ):
        return True
    return any(_value_matches(claim, claim.low, claim.raw_low, e) for e in evidence) and any(
        _value_matches(claim, claim.high, claim.raw_high, e) for e in evidence
    )


def _is_year(q: Quantity) -> bool:
    return q.dimension is None and not q.is_range and q.low.is_integer() and _MIN_YEAR <= q.low <= _MAX_YEAR


def check_numbers(claim: NumberedText, evidence: NumberedText) -> CheckResult:
    """Every number of the claim (with its unit) must be stated by the evidence.

    CLASH when the evidence states a different number of the same dimension (500 mg vs 50 mg, twice vs
    three times a day); MISSING when it states none of that dimension, and for a year the evidence does
    not state ("says 2005" against evidence naming no year: a claim adds what its source never says).
    """
    wanted = claim.quantities
    if not wanted:
        return pass_result(CheckName.NUMBER)
    have = evidence.quantities
    for quantity in wanted:
        if _quantity_supported(quantity, have):
            continue
        same_kind = [e for e in have if e.dimension == quantity.dimension and not _is_year(e)]
        if same_kind and not _is_year(quantity):
            shown = ", ".join(e.text for e in same_kind)
            return clash(
                CheckName.NUMBER,
                ConflictKind.NUMBER,
                f"claim says {quantity.text!r}, evidence says {shown!r}",
                quantity.text,
                shown,
            )
        return CheckResult(
            CheckName.NUMBER, CheckOutcome.MISSING, f"{quantity.text!r} is not in the evidence"
        )
    return pass_result(CheckName.NUMBER)


def _interval(q: Quantity) -> tuple[float, float]:
    """The values ``q`` states, in its dimension's base unit: a range's ends, a hedged value widened by
    ``_HEDGED_TOLERANCE``. A bound is its stated value: "not more than 8 g" is another limit than "not
    more than 4 g", not an open range that overlaps it."""
    low, high = (q.low, q.high) if q.low <= q.high else (q.high, q.low)
    if q.approximate:
        low, high = low - _HEDGED_TOLERANCE * abs(low), high + _HEDGED_TOLERANCE * abs(high)
    return low, high


def numbers_apart(claim: NumberedText, evidence: NumberedText, stated: str) -> bool:
    """Is the claim's quantity ``stated`` (a number conflict's claim part) apart from every quantity of
    its dimension the evidence states? Overlapping ranges ("20-25 %" against "from 22 to 33 %") or a
    hedged value near one ("about 30 %" against "28 %") are a clash of the number check, never a
    contradiction to report."""
    mine = next((q for q in claim.quantities if q.text == stated), None)
    if mine is None:
        return False
    low, high = _interval(mine)
    for other in evidence.quantities:
        if other.dimension != mine.dimension:
            continue
        their_low, their_high = _interval(other)
        if low <= their_high and their_low <= high:
            return False
    return True
