"""A deterministic Verifier for tests of the plumbing around verification (not of verification).

A claim is supported when its text (normalised, final full stop dropped) occurs in one of its
sources; the evidence is that occurrence. Every call is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence

from gateway.domain import ClaimToCheck, Evidence, Span, Verdict, VerdictLabel
from gateway.errors import VerifierError
from gateway.text import normalise


class SubstringVerifier:
    name = "substring"

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[ClaimToCheck]] = []
        self.fail = fail

    async def verify(self, claims: Sequence[ClaimToCheck]) -> list[Verdict]:
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
                return Verdict(VerdictLabel.SUPPORTED, 1.0, self.name, "substring", "found", evidence)
        return Verdict(VerdictLabel.UNSUPPORTED, 0.0, self.name, "substring", "not found")
