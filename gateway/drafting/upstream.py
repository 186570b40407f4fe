"""The Upstream contract: something that drafts a cited answer from numbered passages."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from typing import Protocol

from gateway.domain import ChatRequest, Draft, Passage
from gateway.drafting.contract import DraftPart


class Upstream(Protocol):
    """Drafts an answer under the citation contract (see ``contract.py``): ``ModelUpstream`` with a chat
    model, or the ``ExtractiveResponder`` without one.

    ``stream`` yields the draft as it is written: the model's urgency read (when it gives one), then
    each sentence once it is complete, then (when the request offers tools) the fragments of the tool
    calls the model made, once its reply ended normally, then a ``DraftEnd``; it is an async generator
    (close it to stop the model early). ``draft`` is the same reply read whole. Both raise an
    UpstreamError subclass when no usable draft can be had (``stream`` possibly after some sentences:
    the pipeline then ends the answer with a note, never silently).
    """

    @property
    def name(self) -> str: ...

    @property
    def calls_tools(self) -> bool:
        """It can offer the client's tools to a model (the extractive responder cannot)."""
        ...

    def stream(
        self, request: ChatRequest, passages: Sequence[Passage]
    ) -> AsyncGenerator[DraftPart, None]: ...

    async def draft(self, request: ChatRequest, passages: Sequence[Passage]) -> Draft: ...

    async def aclose(self) -> None: ...
