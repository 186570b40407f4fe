"""Stage 5: verify every claim against the sources it cites (all retrieved sources when it cites none)."""

from __future__ import annotations

from collections.abc import Sequence

from gateway.domain import ClaimToCheck, Passage, Statement, Verdict
from gateway.errors import VerifierError
from gateway.verification.verifier import Verifier


class ClaimChecker:
    """The verify stage, built once at start-up with the verifier (``bootstrap``); tests swap it
    through here."""

    def __init__(self, verifier: Verifier) -> None:
        self.verifier = verifier

    @staticmethod
    def claims_to_check(claims: Sequence[Statement], passages: Sequence[Passage]) -> list[ClaimToCheck]:
        """Each claim with the sources it cites (numbered from 1), or all of them when it cites none."""
        numbered = list(enumerate(passages, start=1))
        checks = []
        for claim in claims:
            cited = tuple((n, p) for n, p in numbered if n in claim.source_numbers)
            checks.append(ClaimToCheck(text=claim.text, quote=claim.quote, sources=cited or tuple(numbered)))
        return checks

    async def run(self, claims: Sequence[Statement], passages: Sequence[Passage]) -> list[Verdict]:
        """One verdict per claim, in order; VerifierError when the verifier returns another count."""
        if not claims:
            return []
        verdicts = await self.verifier.verify(self.claims_to_check(claims, passages))
        if len(verdicts) != len(claims):
            name = self.verifier.name
            raise VerifierError(f"{name} returned {len(verdicts)} verdicts for {len(claims)} claims")
        return verdicts
