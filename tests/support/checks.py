"""The checks called on raw texts, as the unit tests state them (each text analysed afresh)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from gateway.verification.checks.analysis import AnalysedText

T = TypeVar("T")


def on_texts(check: Callable[[AnalysedText, AnalysedText], T]) -> Callable[[str, str], T]:
    """``check`` taking a claim and an evidence text instead of their analyses."""
    return lambda claim, evidence: check(AnalysedText(claim), AnalysedText(evidence))
