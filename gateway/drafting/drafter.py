"""The draft stage's component: the upstream that writes the cited draft, built once at start-up."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence

from gateway.domain import ChatRequest, Passage
from gateway.drafting.contract import DraftPart
from gateway.drafting.upstream import Upstream


class Drafter:
    """Streams a draft under the citation contract from ``upstream`` (a chat model behind the contract,
    or the extractive responder; ``bootstrap.build_upstream``). The pipeline runs it; tests swap it
    through here (``Drafter(ScriptedUpstream(...))``), never by replacing a module's names."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream

    @property
    def name(self) -> str:
        return self.upstream.name

    @property
    def calls_tools(self) -> bool:
        """The upstream can offer the client's tools to a model (the extractive responder cannot)."""
        return self.upstream.calls_tools

    def stream(self, request: ChatRequest, passages: Sequence[Passage]) -> AsyncGenerator[DraftPart, None]:
        """The draft's parts as they are written (``Upstream.stream``); close it to stop the model."""
        return self.upstream.stream(request, passages)

    async def aclose(self) -> None:
        await self.upstream.aclose()
