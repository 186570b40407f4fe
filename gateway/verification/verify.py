"""Stage 5: verify every claim against the sources it cites (all retrieved sources when it cites none)."""

from __future__ import annotations

from collections.abc import Sequence

from gateway.domain import ClaimToCheck, Passage, Statement, Verdict
from gateway.errors import VerifierError
from gateway.verification.verifier import Verifier


def claims_to_check(claims: Sequence[Statement], passages: Sequence[Passage]) -> list[ClaimToCheck]:
    numbered = list(enumerate(passages, start=1))
    checks = []
    for claim in claims:
        cited = tuple((n, p) for n, p in numbered if n in claim.source_numbers)
        checks.append(ClaimToCheck(text=claim.text, quote=claim.quote, sources=cited or tuple(numbered)))
    return checks


async def verify(
    claims: Sequence[Statement], passages: Sequence[Passage], verifier: Verifier
) -> list[Verdict]:
    if not claims:
        return []
    verdicts = await verifier.verify(claims_to_check(claims, passages))
    if len(verdicts) != len(claims):
        raise VerifierError(f"{verifier.name} returned {len(verdicts)} verdicts for {len(claims)} claims")
    return verdicts
