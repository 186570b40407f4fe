"""The Verifier contract: several implementations (anchoring, local entailment, LLM judge, cascade)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gateway.domain import ClaimToCheck, Verdict


class Verifier(Protocol):
    """Decides, for each claim, whether the sources it cites support it.

    Returns one verdict per claim, in order. Raises VerifierError when it cannot decide at all (the
    pipeline then refuses the answer); a verifier that cannot judge one claim returns an
    ``unsupported`` verdict for it with the reason, which fails closed.
    """

    name: str

    async def verify(self, claims: Sequence[ClaimToCheck]) -> list[Verdict]: ...
