"""The Upstream contract: something that drafts a cited answer from numbered passages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gateway.domain import ChatRequest, Draft, Passage


class Upstream(Protocol):
    """Drafts an answer under the citation contract (see ``contract.py``): ``ModelUpstream`` with a chat
    model, or the ``ExtractiveResponder`` without one.

    Raises an UpstreamError subclass when no usable draft can be had; never returns partial text.
    """

    @property
    def name(self) -> str: ...

    async def draft(self, request: ChatRequest, passages: Sequence[Passage]) -> Draft: ...

    async def aclose(self) -> None: ...
