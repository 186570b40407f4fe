"""SourceCleanup's rewriter contract: turn a failing claim into one its cited source supports."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gateway.domain import ChatRequest, ClaimResult, Passage


class Rewriter(Protocol):
    """Given the claim results of one answer, returns them with failing claims rewritten (and
    re-verified) where possible; claims it cannot fix stay ``removed``."""

    async def rewrite_failed(
        self, results: list[ClaimResult], passages: Sequence[Passage], request: ChatRequest
    ) -> list[ClaimResult]: ...


class NoRewriter:
    """Removes every failing claim: used when rewriting is turned off in policy."""

    async def rewrite_failed(
        self, results: list[ClaimResult], passages: Sequence[Passage], request: ChatRequest
    ) -> list[ClaimResult]:
        return results
