"""SourceCleanup's rewriter contract: turn a failing claim into one its cited source supports.

Implementations live in ``gateway.cleanup``: the upstream model's rewrite (``UpstreamRewriter``) and
the rewrite to the source's own sentence(s) holding the claim's anchored quote (``SourceRewriter``,
which tries the upstream rewriter first when one is configured). Each rewrite
is verified again before it counts; a rewriter never raises for one claim: whatever goes wrong, the
claim stays ``removed`` with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gateway.domain import ChatRequest, ClaimResult, Passage


class Rewriter(Protocol):
    """Given one failed (``removed``) claim, returns it ``rewritten`` with a verified rewrite, or still
    ``removed`` with the reason the rewrite failed.

    ``uses_model`` says whether ``rewrite`` may call a chat model; with ``use_model=False`` it must not
    (the request's cap on model calls was reached), and does only what needs no model.
    """

    name: str
    uses_model: bool

    async def rewrite(
        self,
        failed: ClaimResult,
        passages: Sequence[Passage],
        request: ChatRequest,
        *,
        use_model: bool = True,
    ) -> ClaimResult: ...


class NoRewriter:
    """Removes every failing claim: used when rewriting is turned off in policy."""

    name = "none"
    uses_model = False

    async def rewrite(
        self,
        failed: ClaimResult,
        passages: Sequence[Passage],
        request: ChatRequest,
        *,
        use_model: bool = True,
    ) -> ClaimResult:
        return failed
