"""Drafting with a chat model: the citation contract's messages in, its parsed Draft out.

The model is any ``ChatModel`` (``gateway.models``): in the gateway, the upstream endpoint's model behind
the process's limits, deadline and metrics. Parsing stays with the contract (``contract.py``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import anyio.to_thread

from gateway.domain import ChatRequest, Draft, Passage
from gateway.errors import DraftLimitExceeded
from gateway.models.base import ChatModel
from gateway.upstream.contract import DRAFT_SCHEMA, build_messages, parse_draft

DRAFT_SCHEMA_NAME = "cited_answer"


class ModelUpstream:
    """Upstream protocol over a ChatModel; named after the model (``openai``)."""

    def __init__(self, model: ChatModel, max_reply_chars: int = 200_000) -> None:
        self.model = model
        self._max_reply_chars = max_reply_chars

    @property
    def name(self) -> str:
        return self.model.name

    async def draft(self, request: ChatRequest, passages: Sequence[Passage]) -> Draft:
        started = time.perf_counter()
        content = await self.model.complete(
            build_messages(request, passages),
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            user=request.user,
            schema=DRAFT_SCHEMA,
            schema_name=DRAFT_SCHEMA_NAME,
        )
        if len(content) > self._max_reply_chars:
            raise DraftLimitExceeded(
                f"the upstream's reply is {len(content)} characters long; at most "
                f"{self._max_reply_chars} are accepted",
                limit="reply_chars",
            )
        seconds = time.perf_counter() - started
        return await anyio.to_thread.run_sync(parse_draft, content, len(passages), seconds)

    async def aclose(self) -> None:
        await self.model.aclose()
