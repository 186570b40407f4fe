"""The chat-model contract, and the base of the wrappers that add limits, metrics and closing to a model."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from gateway.tool_calls import ToolCallDelta

Messages = list[dict[str, Any]]
"""A chat conversation in OpenAI's shape: ``{"role": ..., "content": ...}`` per message (an assistant
turn may carry ``tool_calls``, a tool turn its ``tool_call_id``)."""

StreamPiece = str | ToolCallDelta
"""What a streamed reply yields: a piece of its text, or a fragment of a tool call the model makes."""


@dataclass(frozen=True)
class ToolOffer:
    """The client's tools as the model is offered them (OpenAI's ``tools``, ``tool_choice``,
    ``parallel_tool_calls``), in the request body's shape."""

    tools: tuple[Mapping[str, Any], ...]
    choice: str | Mapping[str, Any] | None = None
    parallel: bool | None = None

    def body(self) -> dict[str, Any]:
        """The request-body fields that offer the tools."""
        fields: dict[str, Any] = {"tools": [dict(tool) for tool in self.tools]}
        if self.choice is not None:
            fields["tool_choice"] = self.choice
        if self.parallel is not None:
            fields["parallel_tool_calls"] = self.parallel
        return fields


Call = Callable[[], Awaitable[str]]
"""One model call, ready to make: what a wrapper runs under what it adds."""

StreamCall = Callable[[], AsyncGenerator[StreamPiece, None]]
"""One streamed model call, ready to start: what a wrapper iterates under what it adds."""


class ChatModel(Protocol):
    """One chat completion from a model: the boundary every model call of the gateway crosses.

    ``complete`` returns the reply's text, or raises an UpstreamError subclass (``gateway.errors``);
    ``schema`` asks for JSON under that JSON schema (named ``schema_name``) where the endpoint can do it.
    ``stream`` yields the reply's text as the model writes it (an async generator: close it, e.g. with
    ``contextlib.aclosing``, to end the call early); it raises as ``complete`` does, also mid-stream.
    Offered ``tools``, it also yields the fragments of the tool calls the model makes
    (``ToolCallDelta``), in the order they came.
    """

    @property
    def name(self) -> str:
        """Names the kind of model in logs and audit records (``openai``, ``scripted``)."""
        ...

    async def complete(
        self,
        messages: Messages,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        user: str | None = None,
        schema: dict[str, Any] | None = None,
        schema_name: str = "response",
    ) -> str: ...

    def stream(
        self,
        messages: Messages,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        user: str | None = None,
        tools: ToolOffer | None = None,
    ) -> AsyncGenerator[StreamPiece, None]: ...

    async def aclose(self) -> None: ...


class WrapperModel:
    """A ChatModel around another (pydantic-ai's ``WrapperModel``): it delegates everything; a subclass
    overrides ``around`` to add something around each call, or ``aclose``."""

    def __init__(self, wrapped: ChatModel) -> None:
        self.wrapped = wrapped

    @property
    def name(self) -> str:
        return self.wrapped.name

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
        call = partial(
            self.wrapped.complete,
            messages,
            temperature=temperature,
            max_tokens=max_tokens,
            user=user,
            schema=schema,
            schema_name=schema_name,
        )
        return await self.around(call)

    async def around(self, call: Call) -> str:
        """Make ``call`` (the wrapped model's completion); a wrapper adds its work around it."""
        return await call()

    def stream(
        self,
        messages: Messages,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        user: str | None = None,
        tools: ToolOffer | None = None,
    ) -> AsyncGenerator[StreamPiece, None]:
        call = partial(
            self.wrapped.stream,
            messages,
            temperature=temperature,
            max_tokens=max_tokens,
            user=user,
            tools=tools,
        )
        return self.around_stream(call)

    async def around_stream(self, call: StreamCall) -> AsyncGenerator[StreamPiece, None]:
        """Iterate ``call`` (the wrapped model's stream); a wrapper adds its work around it."""
        async with aclosing(call()) as chunks:
            async for chunk in chunks:
                yield chunk

    async def aclose(self) -> None:
        await self.wrapped.aclose()
