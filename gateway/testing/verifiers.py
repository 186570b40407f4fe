"""Verifiers for tests of the plumbing around verification (not of verification itself).

- ``ScriptedVerifier``: preset verdicts (in order, or one for every claim), or a preset error;
- ``SubstringVerifier``: a claim is supported when its text occurs in one of its sources.

Both record every call's claims in ``calls``.
"""

from __future__ import annotations

from collections.abc import Sequence

from gateway.domain import ClaimToCheck, Evidence, Span, Verdict, VerdictLabel
from gateway.errors import VerifierError
from gateway.text import normalise
from gateway.verification.checks.analysis import Analyses
from gateway.vocabulary import VerdictCheck, VerifierMethod

METHOD = VerifierMethod.unlisted("substring")
TEST_CHECK = VerdictCheck.unlisted("test")
SUBSTRING_CHECK = VerdictCheck.unlisted("substring")
"""The checks of these test doubles: values no vocabulary lists (``gateway.vocabulary``), as ever."""


class ScriptedVerifier:
    """Answers with ``verdicts`` (the first ``len(claims)`` of them, in order) or with ``each`` for every
    claim; raises ``error`` instead when it is set."""

    def __init__(
        self,
        name: str = "scripted",
        verdicts: Sequence[Verdict] = (),
        *,
        each: Verdict | None = None,
        error: Exception | None = None,
    ) -> None:
        self.name = name
        self.verdicts = list(verdicts)
        self.each = each
        self.error = error
        self.calls: list[list[ClaimToCheck]] = []

    @classmethod
    def supporting(cls, name: str) -> ScriptedVerifier:
        """Supports every claim, as verifier (method) ``name``."""
        return cls(name, each=Verdict(VerdictLabel.SUPPORTED, 1.0, VerifierMethod.unlisted(name), TEST_CHECK))

    @property
    def texts(self) -> list[list[str]]:
        """The claim texts of every call."""
        return [[claim.text for claim in call] for call in self.calls]

    async def verify(self, claims: Sequence[ClaimToCheck], analyses: Analyses | None = None) -> list[Verdict]:
        self.calls.append(list(claims))
        if self.error is not None:
            raise self.error
        if self.each is not None:
            return [self.each for _ in claims]
        return self.verdicts[: len(claims)]


class SubstringVerifier:
    """A claim is supported when its text (normalised, final full stop dropped) occurs in one of its
    sources; the evidence is that occurrence. ``fail`` makes every call raise a VerifierError."""

    name = METHOD

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[ClaimToCheck]] = []
        self.fail = fail

    async def verify(self, claims: Sequence[ClaimToCheck], analyses: Analyses | None = None) -> list[Verdict]:
        self.calls.append(list(claims))
        if self.fail:
            raise VerifierError("scripted verifier failure")
        return [self._one(claim) for claim in claims]

    def _one(self, claim: ClaimToCheck) -> Verdict:
        needle = normalise(claim.text).rstrip(".")
        for number, passage in claim.sources:
            index = normalise(passage.text).find(needle)
            if needle and index >= 0:
                # normalise() only changes case and spacing here, so offsets hold for these tests
                span = Span(index, index + len(needle))
                evidence = Evidence(number, passage.id, passage.text[span.start : span.end], span)
                return Verdict(VerdictLabel.SUPPORTED, 1.0, METHOD, SUBSTRING_CHECK, "found", evidence)
        return Verdict(VerdictLabel.UNSUPPORTED, 0.0, METHOD, SUBSTRING_CHECK, "not found")
