"""The checks called on raw texts, as the unit tests state them (each text analysed afresh), with the
checks' word data loaded once for the test session (``CHECK_DATA``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from gateway.verification.binding import Binding, restates
from gateway.verification.checks.analysis import AnalysedText, Analyses
from gateway.verification.checks.data import CheckData

T = TypeVar("T")

CHECK_DATA = CheckData.load()
"""The checks' word data, as the verifier loads it when it is built."""


def analysed(text: str) -> AnalysedText:
    """``text`` analysed afresh."""
    return AnalysedText(text, CHECK_DATA)


def analyses() -> Analyses:
    """A fresh request's analyses."""
    return Analyses(CHECK_DATA)


def on_texts(check: Callable[[AnalysedText, AnalysedText], T]) -> Callable[[str, str], T]:
    """``check`` taking a claim and an evidence text instead of their analyses."""
    return lambda claim, evidence: check(analysed(claim), analysed(evidence))


def restates_text(claim: str, context: str) -> Binding:
    """``binding.restates`` with the texts analysed afresh."""
    return restates(claim, context, analyses())
