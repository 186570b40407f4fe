"""The Verifier contract: several implementations (anchoring, local entailment, LLM judge, cascade)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from gateway.domain import ClaimToCheck, Verdict

if TYPE_CHECKING:
    from gateway.verification.checks.analysis import Analyses


class Verifier(Protocol):
    """Decides, for each claim, whether the sources it cites support it.

    Returns one verdict per claim, in order. Raises VerifierError when it cannot decide at all (the
    pipeline then refuses the answer); a verifier that cannot judge one claim returns an
    ``unsupported`` verdict for it with the reason, which fails closed.
    """

    @property
    def name(self) -> str:
        """The verifier's name (a ``VerifierMethod`` for the gateway's own; its verdicts' method)."""
        ...

    async def verify(self, claims: Sequence[ClaimToCheck]) -> list[Verdict]: ...


def operating_point(verifier: Verifier) -> str:
    """The verifier's operating point as reports name it: its ``operating_point`` when it states one
    (the cascade: its stages and thresholds), else its name."""
    stated = getattr(verifier, "operating_point", None)
    return stated if isinstance(stated, str) else verifier.name


class LocalVerifier(Protocol):
    """The cascade's local stage: a Verifier that is handed the request's text analyses, so that what
    it analyses (a claim, its evidence windows) is not analysed again by the cascade's binding. One
    that does not analyse text ignores them."""

    @property
    def name(self) -> str: ...

    async def verify(
        self, claims: Sequence[ClaimToCheck], analyses: Analyses | None = None
    ) -> list[Verdict]: ...
