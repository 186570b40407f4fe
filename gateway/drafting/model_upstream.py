"""Drafting with a chat model: the citation contract's messages in, its parts out as the model writes them.

The model is any ``ChatModel`` (``gateway.models``): in the gateway, the upstream endpoint's model behind
the process's limits, deadline and metrics. The reply is asked for with ``stream: true`` and read line by
line by the contract's ``ContractReader`` (``contract.py``), so each sentence is handed on as soon as its
line is complete. No JSON schema is sent: JSON Lines is not one JSON document (docs/contract.md).
The client's tools are offered alongside; the fragments of the tool calls the model makes come outside
the content (OpenAI's ``tool_calls``): they are kept in order and handed on once the reply has ended
normally, just before ``DraftEnd`` (never a call cut off with its stream), and a reply that calls a tool
may write no line at all.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing

from gateway.domain import ChatRequest, Draft, Passage
from gateway.drafting.contract import (
    ContractReader,
    DraftEnd,
    DraftPart,
    DraftSentence,
    assemble,
    build_messages,
    tool_offer,
)
from gateway.errors import DraftLimitExceeded
from gateway.models.chat_model import ChatModel
from gateway.tool_calls import ToolCallDelta
from gateway.vocabulary import DraftLimit

DEFAULT_MAX_LINE_CHARS = 4_000
"""The default of ``upstream_max_line_chars`` (settings)."""


class ModelUpstream:
    """Upstream protocol over a ChatModel; named after the model (``openai``)."""

    def __init__(
        self, model: ChatModel, max_reply_chars: int = 200_000, max_line_chars: int = DEFAULT_MAX_LINE_CHARS
    ) -> None:
        self.model = model
        self._max_reply_chars = max_reply_chars
        self._max_line_chars = max_line_chars

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def calls_tools(self) -> bool:
        return True

    async def stream(
        self, request: ChatRequest, passages: Sequence[Passage]
    ) -> AsyncGenerator[DraftPart, None]:
        started = time.perf_counter()
        reader = ContractReader(len(passages), self._max_line_chars)
        raw: list[str] = []
        size = 0
        calls: list[ToolCallDelta] = []
        chunks = self.model.stream(
            build_messages(request, passages),
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            user=request.user,
            tools=tool_offer(request),
        )
        async with aclosing(chunks):
            async for text in chunks:
                size += len(text.arguments) if isinstance(text, ToolCallDelta) else len(text)
                if size > self._max_reply_chars:  # tool-call arguments count towards the bound too
                    raise DraftLimitExceeded(
                        f"the upstream's reply is over {self._max_reply_chars} characters long",
                        limit=DraftLimit.REPLY_CHARS,
                    )
                if isinstance(text, ToolCallDelta):
                    calls.append(text)
                    continue
                raw.append(text)
                for part in reader.feed(text):
                    yield part
        for part in reader.close(sentence_required=not calls):
            yield part
        for call in calls:  # the reply is complete: its tool calls, fragment by fragment, in order
            yield call
        yield DraftEnd("".join(raw), time.perf_counter() - started)

    async def draft(self, request: ChatRequest, passages: Sequence[Passage]) -> Draft:
        """The whole reply, read through the same stream."""
        sentences: list[DraftSentence] = []
        async with aclosing(self.stream(request, passages)) as parts:
            async for part in parts:
                if isinstance(part, DraftSentence):
                    sentences.append(part)
                elif isinstance(part, DraftEnd):
                    return assemble(sentences, part.raw, part.seconds)
        raise AssertionError("an upstream stream ends with DraftEnd")  # pragma: no cover

    async def aclose(self) -> None:
        await self.model.aclose()
