"""The Upstream contract: something that drafts a cited answer from numbered passages."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

from gateway.domain import ChatRequest, Draft, Passage


class Upstream(Protocol):
    """Drafts an answer under the citation contract (see ``contract.py``).

    Raises an UpstreamError subclass when no usable draft can be had; never returns partial text.
    """

    name: str

    async def draft(self, request: ChatRequest, passages: Sequence[Passage]) -> Draft: ...

    async def aclose(self) -> None: ...


T = TypeVar("T")


class CallGate(Protocol):
    """Runs a model call under the process's shared limits (``LimitedUpstream.call``)."""

    async def call(self, purpose: str, fn: Callable[[], Awaitable[T]]) -> T: ...


class CompletionClient(Protocol):
    """One chat completion under a JSON schema: what the rewriter and question generation need of
    ``OpenAIUpstream``."""

    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        user: str | None = None,
        schema: dict[str, Any] | None = None,
        schema_name: str = "cited_answer",
    ) -> str: ...
