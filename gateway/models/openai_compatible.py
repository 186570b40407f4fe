"""Any OpenAI-compatible chat endpoint, through the official SDK: the one client of an endpoint.

The call goes through the SDK's generic ``post`` (its documented way to reach any endpoint), so the
SDK still sends the Authorization header and applies the timeout, the retries with backoff (408, 409,
429, 5xx, timeouts and connection errors; ``Retry-After`` honoured) and its error classes; what it
skips is the typed request transform and the pydantic ``ChatCompletion``, which cost about 0.6 ms of
CPU per call (docs/benchmarks.md, "Upstream client"). The body is read back with msgspec into a
struct of the fields used, so a body that is not a chat completion is a MalformedDraft that says why.

``stream`` asks for ``stream: true`` through the same ``post`` (the SDK's retries still apply until the
response starts) and reads the event stream itself, each ``data:`` line decoded by msgspec; an upstream
that ignores ``stream`` and answers one whole completion is read as one piece. A stream that ends
without a finish reason or ``[DONE]`` (cut off) is an ``UpstreamUnavailable``.

The SDK's exceptions are translated here, and only here, into the gateway's UpstreamError family.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

import httpx2
import msgspec
import openai
import structlog

from gateway.errors import (
    MalformedDraft,
    UpstreamError,
    UpstreamHTTPError,
    UpstreamRateLimited,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from gateway.models.chat_model import Messages, StreamPiece, ToolOffer
from gateway.settings import ResponseFormat, Secret, Settings
from gateway.tool_calls import ToolCallDelta


@dataclass(frozen=True)
class Endpoint:
    """One configured OpenAI-compatible endpoint and how to call it (the key is never shown)."""

    base_url: str
    api_key: Secret
    model: str
    timeout: float
    """The SDK's timeout, per read; ``LimitedModel`` bounds a whole call."""
    retries: int
    response_format: ResponseFormat = "json_schema"
    """How a JSON schema is asked for: ``json_schema`` (strict), ``json_object``, or ``text`` (not at all)."""

    @classmethod
    def upstream(cls, settings: Settings) -> Endpoint:
        """The chat model that drafts (and rewrites): ``GATEWAY_UPSTREAM_*``."""
        return cls(
            base_url=settings.upstream_base_url,
            api_key=settings.upstream_api_key,
            model=settings.upstream_model,
            timeout=settings.upstream_timeout,
            retries=settings.upstream_retries,
            response_format=settings.upstream_response_format,
        )

    @classmethod
    def judge(cls, settings: Settings) -> Endpoint:
        """The LLM judge's model: ``GATEWAY_JUDGE_*``; asked for strict JSON, never retried."""
        return cls(
            base_url=settings.judge_base_url,
            api_key=settings.judge_api_key,
            model=settings.judge_model,
            timeout=settings.judge_timeout,
            retries=0,
        )


class _Function(msgspec.Struct):
    name: str | None = None
    arguments: str | None = None


class _ToolCall(msgspec.Struct):
    """A tool call, whole (``message.tool_calls[i]``) or as a streamed fragment (``delta.tool_calls[i]``:
    ``index`` names the call; ``id`` and the name come with its first fragment)."""

    index: int | None = None
    id: str | None = None
    function: _Function = msgspec.field(default_factory=_Function)


class _Message(msgspec.Struct):
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(msgspec.Struct):
    message: _Message
    finish_reason: str | None = None


class _Completion(msgspec.Struct):
    """The fields of a chat completion the gateway reads; any others are ignored."""

    choices: list[_Choice]


_COMPLETION = msgspec.json.Decoder(_Completion)


class _Delta(msgspec.Struct):
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _ChunkChoice(msgspec.Struct):
    delta: _Delta = msgspec.field(default_factory=_Delta)
    finish_reason: str | None = None


class _Chunk(msgspec.Struct):
    """The fields of a chat.completion.chunk the gateway reads (an error event carries ``error``)."""

    choices: list[_ChunkChoice] = msgspec.field(default_factory=list)
    error: Any = None


_CHUNK = msgspec.json.Decoder(_Chunk)
_DONE = "[DONE]"
EVENT_STREAM = "text/event-stream"
log = structlog.get_logger("gateway.models")


class OpenAIChatModel:
    """ChatModel over an OpenAI-compatible endpoint; owns its ``openai.AsyncOpenAI`` client."""

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout: float,
        retries: int,
        response_format: ResponseFormat = "json_schema",
    ) -> None:
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=retries
        )
        self._model = model
        self._response_format = response_format

    @classmethod
    def from_endpoint(cls, endpoint: Endpoint) -> OpenAIChatModel:
        return cls(
            base_url=endpoint.base_url,
            api_key=endpoint.api_key.reveal(),
            model=endpoint.model,
            timeout=endpoint.timeout,
            retries=endpoint.retries,
            response_format=endpoint.response_format,
        )

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
        """One chat completion; returns the message text or raises an UpstreamError."""
        body: dict[str, Any] = {"model": self._model, "messages": messages}
        if temperature is not None:
            body["temperature"] = temperature
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if user:
            body["user"] = user
        response_format = self._format(schema, schema_name)
        if response_format is not None:
            body["response_format"] = response_format
        response = await self._post(body, stream=False)
        return _content(_read(response))

    async def stream(
        self,
        messages: Messages,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        user: str | None = None,
        tools: ToolOffer | None = None,
    ) -> AsyncGenerator[StreamPiece, None]:
        """The reply's text as it streams (see the module doc), and the fragments of the tool calls the
        model makes when offered ``tools``; raises an UpstreamError, also mid-stream."""
        body: dict[str, Any] = {"model": self._model, "messages": messages, "stream": True}
        if tools is not None:
            body.update(tools.body())
        if temperature is not None:
            body["temperature"] = temperature
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if user:
            body["user"] = user
        response = await self._post(body, stream=True)
        try:
            content_type = response.headers.get("content-type", "").partition(";")[0].strip()
            if content_type != EVENT_STREAM:  # it ignored ``stream``: one whole completion, or garbage
                await response.aread()
                log.warning("upstream_ignored_stream", content_type=content_type or None)
                for piece in _pieces(_read(response)):
                    yield piece
                return
            finished = False
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == _DONE:
                    finished = True
                    break
                pieces, finish = _chunk(data)
                for piece in pieces:
                    yield piece
                finished = finished or finish
            if not finished:
                raise UpstreamUnavailable("the upstream's stream ended before it finished (cut off)")
        except httpx2.TimeoutException as err:
            raise UpstreamTimeout(f"the upstream's stream stalled: {type(err).__name__}") from err
        except httpx2.TransportError as err:
            raise UpstreamUnavailable(f"the upstream's stream broke off: {type(err).__name__}") from err
        finally:
            await response.aclose()

    async def _post(self, body: dict[str, Any], *, stream: bool) -> httpx2.Response:
        try:
            return await self._client.post(
                "/chat/completions", cast_to=httpx2.Response, body=body, stream=stream
            )
        except openai.APITimeoutError as err:
            raise UpstreamTimeout(f"the upstream did not answer in time: {err}") from err
        except openai.APIConnectionError as err:
            raise UpstreamUnavailable(f"cannot connect to the upstream: {err}") from err
        except openai.RateLimitError as err:
            raise UpstreamRateLimited("the upstream is rate limiting the gateway") from err
        except openai.APIStatusError as err:
            raise UpstreamHTTPError(
                f"the upstream answered HTTP {err.status_code}", status_code=err.status_code
            ) from err
        except openai.OpenAIError as err:
            raise UpstreamError(f"upstream call failed: {type(err).__name__}") from err

    def _format(self, schema: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
        if schema is None or self._response_format == "text":
            return None
        if self._response_format == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}
        return {"type": "json_object"}

    async def aclose(self) -> None:
        await self._client.close()

    @property
    def closed(self) -> bool:
        """``aclose`` closed the client: no call reaches the endpoint any more."""
        return self._client.is_closed()


def _content(completion: _Completion) -> str:
    if not completion.choices:
        raise MalformedDraft("the upstream returned no choices")
    choice = completion.choices[0]
    if choice.finish_reason == "length":
        raise MalformedDraft("the upstream's answer was cut off by the token limit")
    return choice.message.content or ""


def _pieces(completion: _Completion) -> list[StreamPiece]:
    """A whole completion as the pieces a stream would have given: its text, then each tool call whole."""
    text = _content(completion)
    calls = completion.choices[0].message.tool_calls or []
    pieces: list[StreamPiece] = [text] if text else []
    return pieces + [_delta(call, index) for index, call in enumerate(calls)]


def _delta(call: _ToolCall, index: int) -> ToolCallDelta:
    return ToolCallDelta(
        call.index if call.index is not None else index,
        call.id,
        call.function.name,
        call.function.arguments or "",
    )


def _chunk(data: str) -> tuple[list[StreamPiece], bool]:
    """One event's pieces (text, tool-call fragments) and whether it finished the reply; MalformedDraft /
    UpstreamError otherwise."""
    try:
        chunk = _CHUNK.decode(data)
    except msgspec.MsgspecError as err:
        raise MalformedDraft(f"an event of the upstream's stream is not a completion chunk: {err}") from err
    if chunk.error is not None:
        raise UpstreamUnavailable("the upstream sent an error event in its stream")
    if not chunk.choices:
        return [], False
    choice = chunk.choices[0]
    if choice.finish_reason == "length":
        raise MalformedDraft("the upstream's answer was cut off by the token limit")
    pieces: list[StreamPiece] = [choice.delta.content] if choice.delta.content else []
    pieces += [_delta(call, index) for index, call in enumerate(choice.delta.tool_calls or [])]
    return pieces, choice.finish_reason is not None


def _read(response: httpx2.Response) -> _Completion:
    """The completion in a 2xx response's body; a MalformedDraft naming what is wrong with it.

    As the SDK did, the body is read whatever its content type says; the content type only names the
    failure when the body is not JSON (an event stream where a completion was expected).
    """
    try:
        return _COMPLETION.decode(response.content)
    except msgspec.ValidationError as err:
        raise MalformedDraft(f"the upstream's response is not a chat completion: {err}") from err
    except msgspec.DecodeError as err:
        content_type = response.headers.get("content-type", "").partition(";")[0].strip()
        if not content_type.endswith("json"):
            raise MalformedDraft(
                f"the upstream's response is not a chat completion (content type {content_type or 'none'!r}, "
                "e.g. an event stream)"
            ) from err
        raise MalformedDraft(f"the upstream's response body is not valid JSON: {err}") from err
