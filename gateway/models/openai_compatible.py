"""Any OpenAI-compatible chat endpoint, through the official SDK: the one client of an endpoint.

The call goes through the SDK's generic ``post`` (its documented way to reach any endpoint), so the
SDK still sends the Authorization header and applies the timeout, the retries with backoff (408, 409,
429, 5xx, timeouts and connection errors; ``Retry-After`` honoured) and its error classes; what it
skips is the typed request transform and the pydantic ``ChatCompletion``, which cost about 0.6 ms of
CPU per call (docs/benchmarks.md, "Upstream client"). The body is read back with msgspec into a
struct of the fields used, so a body that is not a chat completion is a MalformedDraft that says why.

The SDK's exceptions are translated here, and only here, into the gateway's UpstreamError family.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx2
import msgspec
import openai

from gateway.errors import (
    MalformedDraft,
    UpstreamError,
    UpstreamHTTPError,
    UpstreamRateLimited,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from gateway.models.base import Messages
from gateway.settings import ResponseFormat, Secret, Settings


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


class _Message(msgspec.Struct):
    content: str | None = None


class _Choice(msgspec.Struct):
    message: _Message
    finish_reason: str | None = None


class _Completion(msgspec.Struct):
    """The fields of a chat completion the gateway reads; any others are ignored."""

    choices: list[_Choice]


_COMPLETION = msgspec.json.Decoder(_Completion)


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
        try:
            response = await self._client.post("/chat/completions", cast_to=httpx2.Response, body=body)
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
        completion = _read(response)
        if not completion.choices:
            raise MalformedDraft("the upstream returned no choices")
        choice = completion.choices[0]
        if choice.finish_reason == "length":
            raise MalformedDraft("the upstream's answer was cut off by the token limit")
        return choice.message.content or ""

    def _format(self, schema: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
        if schema is None or self._response_format == "text":
            return None
        if self._response_format == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}
        return {"type": "json_object"}

    async def aclose(self) -> None:
        await self._client.close()


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
