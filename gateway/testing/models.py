"""Chat models and upstreams for unit tests: scripted replies, no network (pydantic-ai's ``TestModel``).

Integration tests talk to a real server instead (``gateway.testing.openai_server``): real HTTP, the
real openai SDK.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from gateway.errors import UpstreamUnavailable
from gateway.models.base import Messages
from gateway.models.openai_compatible import Endpoint
from gateway.upstream.model_upstream import ModelUpstream

Script = str | Exception
"""A reply's text, or the error the call raises."""

STREAM_WORDS = 3
"""Words per piece when a scripted reply is streamed."""


class ScriptedChatModel:
    """A ChatModel answering from a script: the queued ``replies`` in order, then ``default`` for every
    further call (none: ``UpstreamUnavailable``). An Exception in the script is raised by its call.

    Every call is recorded in ``requests`` (messages and keyword arguments) and counted in ``calls``.
    ``delay`` slows each call down; ``held`` makes each call wait for ``release()``, so a test can hold a
    call in flight. ``closes`` counts ``aclose`` calls.
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

    @property
    def calls(self) -> int:
        return len(self.requests)

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
        self.requests.append(
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
    ) -> AsyncGenerator[str, None]:
        """The scripted reply in pieces of a few words (recorded with ``stream: True``)."""
        self.requests.append(
            {"messages": messages, "temperature": temperature, "max_tokens": max_tokens, "user": user}
        )
        self.requests[-1]["stream"] = True
        text = await self._reply()
        words = text.split(" ")
        for start in range(0, len(words), STREAM_WORDS):
            last = start + STREAM_WORDS >= len(words)
            yield " ".join(words[start : start + STREAM_WORDS]) + ("" if last else " ")

    async def _reply(self) -> str:
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
