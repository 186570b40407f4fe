"""Chat models and upstreams for unit tests: scripted replies, no network (pydantic-ai's ``TestModel``).

Integration tests talk to a real server instead (``gateway.testing.openai_server``): real HTTP, the
real openai SDK.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from typing import Any

from gateway.drafting.model_upstream import ModelUpstream
from gateway.errors import UpstreamUnavailable
from gateway.models.chat_model import Messages, StreamPiece, ToolOffer
from gateway.models.openai_compatible import Endpoint
from gateway.tool_calls import ToolCall, ToolCallDelta


@dataclass(frozen=True)
class ToolTurn:
    """A scripted reply that calls tools: its text (maybe empty), then each call, streamed as OpenAI
    streams them (the id and name first, then the arguments in ``ARGUMENT_PIECES`` pieces)."""

    text: str
    calls: tuple[ToolCall, ...]


Script = str | ToolTurn | Exception
"""A reply's text, a reply that calls tools, or the error the call raises."""

ARGUMENT_PIECES = 3
"""How many fragments a scripted tool call's arguments are streamed in."""

STREAM_WORDS = 3
"""Words per piece when a scripted reply is streamed."""


class ScriptedChatModel:
    """A ChatModel answering from a script: the queued ``replies`` in order, then ``default`` for every
    further call (none: ``UpstreamUnavailable``). An Exception in the script is raised by its call.

    Every call is recorded in ``requests`` (messages and keyword arguments) and counted in ``calls``;
    ``wait_for_calls`` waits (on an event, no polling) until a number of calls were made. ``delay`` slows
    each call down; ``held`` makes each call wait for ``release()``, so a test can hold a call in flight.
    ``closes`` counts ``aclose`` calls.
    """

    def __init__(
        self,
        *replies: Script,
        default: Script | None = None,
        delay: float = 0.0,
        held: bool = False,
        name: str = "scripted",
    ) -> None:
        self.name = name
        self.replies: deque[Script] = deque(replies)
        self.default = default
        self.delay = delay
        self.held = held
        self.requests: list[dict[str, Any]] = []
        self.closes = 0
        self._released = asyncio.Event()
        self._waiters: list[tuple[int, asyncio.Event]] = []

    @property
    def calls(self) -> int:
        return len(self.requests)

    async def wait_for_calls(self, count: int = 1, seconds: float = 60.0) -> None:
        """Return once ``count`` calls were made (recorded before the call is held or answered);
        AssertionError after ``seconds``, so a test waiting for a call fails rather than hangs."""
        if self.calls >= count:
            return
        waiter = (count, asyncio.Event())
        self._waiters.append(waiter)
        try:
            await asyncio.wait_for(waiter[1].wait(), seconds)
        except TimeoutError:
            got = self.calls
            raise AssertionError(
                f"waited {seconds:g} s: the model received {got} of {count} call(s)"
            ) from None
        finally:
            self._waiters.remove(waiter)

    def _record(self, request: dict[str, Any]) -> None:
        self.requests.append(request)
        for count, arrived in self._waiters:
            if self.calls >= count:
                arrived.set()

    def queue(self, *replies: Script) -> None:
        self.replies.extend(replies)

    def release(self) -> None:
        """Let held calls (now and later) go on."""
        self._released.set()

    async def complete(
        self,
        messages: Messages,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        user: str | None = None,
        schema: dict[str, Any] | None = None,
        schema_name: str = "response",
    ) -> str:
        self._record(
            {
                "messages": messages,
                "temperature": temperature,
                "max_tokens": max_tokens,
                "user": user,
                "schema": schema,
                "schema_name": schema_name,
            }
        )
        return await self._reply()

    async def stream(
        self,
        messages: Messages,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        user: str | None = None,
        tools: ToolOffer | None = None,
    ) -> AsyncGenerator[StreamPiece, None]:
        """The scripted reply in pieces of a few words, then its tool calls' fragments (recorded with
        ``stream: True`` and the ``tools`` offered)."""
        self._record(
            {
                "messages": messages,
                "temperature": temperature,
                "max_tokens": max_tokens,
                "user": user,
                "stream": True,
                "tools": tools,
            }
        )
        reply = await self._turn()
        text = reply.text if isinstance(reply, ToolTurn) else reply
        words = text.split(" ") if text else []
        for start in range(0, len(words), STREAM_WORDS):
            last = start + STREAM_WORDS >= len(words)
            yield " ".join(words[start : start + STREAM_WORDS]) + ("" if last else " ")
        for index, call in enumerate(reply.calls if isinstance(reply, ToolTurn) else ()):
            for piece in call_deltas(index, call):
                yield piece

    async def _reply(self) -> str:
        reply = await self._turn()
        return reply.text if isinstance(reply, ToolTurn) else reply

    async def _turn(self) -> str | ToolTurn:
        reply = self.replies.popleft() if self.replies else self.default
        if self.held:
            await self._released.wait()
        if self.delay:
            await asyncio.sleep(self.delay)
        if reply is None:
            raise UpstreamUnavailable("the scripted model has no reply left")
        if isinstance(reply, Exception):
            raise reply
        return reply

    async def aclose(self) -> None:
        self.closes += 1


def call_deltas(index: int, call: ToolCall) -> list[ToolCallDelta]:
    """``call`` as OpenAI streams it: id and name with empty arguments, then the arguments in pieces."""
    size = -(-len(call.arguments) // ARGUMENT_PIECES) or 1
    pieces = [call.arguments[i : i + size] for i in range(0, len(call.arguments), size)]
    return [
        ToolCallDelta(index, call.id, call.name, ""),
        *(ToolCallDelta(index, arguments=p) for p in pieces),
    ]


class ScriptedDrafts(ModelUpstream):
    """An Upstream drafting from scripted replies (parsed by the real citation contract), or raising;
    ``calls`` counts the drafts asked for."""

    def __init__(self, *replies: Script) -> None:
        self.scripted = ScriptedChatModel(*replies)
        super().__init__(self.scripted)

    @property
    def calls(self) -> int:
        return self.scripted.calls


class ScriptedConnections:
    """A ``ModelPool``'s ``connect`` (``ModelPool(settings, metrics, connect=...)``, or
    ``build_services(..., connect=...)``): no network. An endpoint whose base URL is in ``models`` gets
    that model; any other a new ``ScriptedChatModel(*replies, default=default, held=held)``. Every
    model handed out is kept in ``made`` by base URL, for the test to script, release and inspect."""

    def __init__(
        self,
        *replies: Script,
        default: Script | None = None,
        held: bool = False,
        models: Mapping[str, ScriptedChatModel] | None = None,
    ) -> None:
        self.replies = replies
        self.default = default
        self.held = held
        self.models = dict(models or {})
        self.made: dict[str, ScriptedChatModel] = {}

    def __call__(self, endpoint: Endpoint) -> ScriptedChatModel:
        model = self.models.get(endpoint.base_url)
        if model is None:
            model = ScriptedChatModel(*self.replies, default=self.default, held=self.held)
        self.made[endpoint.base_url] = model
        return model
