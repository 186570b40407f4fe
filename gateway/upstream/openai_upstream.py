"""Any OpenAI-compatible chat endpoint, through the official SDK.

The SDK's exceptions are translated here, and only here, into the gateway's UpstreamError family.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import anyio.to_thread
import openai
from openai.types.chat import ChatCompletion

from gateway.domain import ChatRequest, Draft, Passage
from gateway.errors import (
    DraftLimitExceeded,
    MalformedDraft,
    UpstreamError,
    UpstreamHTTPError,
    UpstreamRateLimited,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from gateway.settings import ResponseFormat, Settings
from gateway.upstream.contract import DRAFT_SCHEMA, build_messages, parse_draft


class OpenAIUpstream:
    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout: float,
        retries: int,
        response_format: ResponseFormat,
        max_reply_chars: int = 200_000,
    ) -> None:
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=retries
        )
        self._model = model
        self._response_format = response_format
        self._max_reply_chars = max_reply_chars

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIUpstream:
        return cls(
            base_url=settings.upstream_base_url,
            api_key=settings.upstream_api_key.reveal(),
            model=settings.upstream_model,
            timeout=settings.upstream_timeout,
            retries=settings.upstream_retries,
            response_format=settings.upstream_response_format,
            max_reply_chars=settings.upstream_max_reply_chars,
        )

    async def draft(self, request: ChatRequest, passages: Sequence[Passage]) -> Draft:
        started = time.perf_counter()
        content = await self.complete(
            build_messages(request, passages),
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            user=request.user,
        )
        if len(content) > self._max_reply_chars:
            raise DraftLimitExceeded(
                f"the upstream's reply is {len(content)} characters long; at most "
                f"{self._max_reply_chars} are accepted",
                limit="reply_chars",
            )
        seconds = time.perf_counter() - started
        return await anyio.to_thread.run_sync(parse_draft, content, len(passages), seconds)

    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        user: str | None = None,
        schema: dict[str, Any] | None = None,
        schema_name: str = "cited_answer",
    ) -> str:
        """One chat completion; returns the message text or raises an UpstreamError."""
        kwargs: dict[str, Any] = {"model": self._model, "messages": messages}
        if temperature is not None:
            kwargs["temperature"] = temperature
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if user:
            kwargs["user"] = user
        response_format = self._format(schema or DRAFT_SCHEMA, schema_name)
        if response_format is not None:
            kwargs["response_format"] = response_format
        try:
            completion = await self._client.chat.completions.create(**kwargs)
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
        except openai.APIResponseValidationError as err:
            raise MalformedDraft(f"the upstream's response does not follow the protocol: {err}") from err
        except openai.OpenAIError as err:
            raise UpstreamError(f"upstream call failed: {type(err).__name__}") from err
        except ValueError as err:
            raise MalformedDraft(f"the upstream's response body is not valid JSON: {err}") from err
        if not isinstance(completion, ChatCompletion):  # the SDK hands back str for a non-JSON body
            raise MalformedDraft(
                f"the upstream's response is not a chat completion ({type(completion).__name__}; "
                "wrong content type, e.g. an event stream)"
            )
        if not completion.choices:
            raise MalformedDraft("the upstream returned no choices")
        choice = completion.choices[0]
        if choice.finish_reason == "length":
            raise MalformedDraft("the upstream's answer was cut off by the token limit")
        return choice.message.content or ""

    def _format(self, schema: dict[str, Any], name: str) -> dict[str, Any] | None:
        if self._response_format == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}
        if self._response_format == "json_object":
            return {"type": "json_object"}
        return None

    async def aclose(self) -> None:
        await self._client.close()
