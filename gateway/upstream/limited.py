"""A wrapper that bounds what any Upstream may cost: concurrency, queueing and total time.

``LimitedUpstream(inner, ...)`` implements the Upstream protocol around another upstream:

* at most ``max_concurrency`` drafts run at once;
* up to ``queue_size`` further calls wait for a slot, each at most ``queue_timeout`` seconds;
* a call that finds the queue full fails at once with ``UpstreamBusy`` (kind ``queue_full``), one that
  waits too long with ``UpstreamQueueTimeout`` (kind ``queue_timeout``);
* a running draft that takes longer than ``deadline`` seconds in total (retries, a slow drip of bytes
  or a stalled body included: the SDK's own timeout is per read) is cancelled with ``UpstreamTimeout``;
* within ``request_deadline(seconds)`` (set by the pipeline for each request), every call also ends
  by the request's deadline, counted from its first model call: the draft, its rewrites and the
  judge's calls share one budget, waiting for a slot included.

All three are UpstreamErrors, so the pipeline fails closed as for any upstream failure: the patient
gets the upstream-error refusal, the request is audited, and ``gateway_upstream_errors_total{type}``
counts it. The gauges ``gateway_upstream_in_flight`` and ``gateway_upstream_waiting`` show the state.

The same slots, queue and deadline bound every other model call of the process: the rewriter's
completions (``complete``, purpose ``rewrite``) and the LLM judge's (``call("judge", ...)``). Their
failures are counted here in ``gateway_upstream_errors_total{type}`` (a draft's are counted with the
request in ``pipeline.record``), and every call in ``gateway_model_calls_total{purpose,result}``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from gateway.domain import ChatRequest, Draft, Passage
from gateway.errors import UpstreamBusy, UpstreamError, UpstreamQueueTimeout, UpstreamTimeout
from gateway.metrics import upstream_error_label
from gateway.upstream.base import Upstream

if TYPE_CHECKING:
    from gateway.metrics import GatewayMetrics
    from gateway.settings import Settings

T = TypeVar("T")


class _Budget:
    """One request's model-call budget; its clock starts at the request's first model call."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started: float | None = None

    def remaining(self) -> float:
        now = time.monotonic()
        if self.started is None:
            self.started = now
        return max(0.0, self.seconds - (now - self.started))


_REQUEST_BUDGET: ContextVar[_Budget | None] = ContextVar("request_budget", default=None)


@contextmanager
def request_deadline(seconds: float) -> Iterator[None]:
    """Bound every model call made in this context (and in tasks it starts) to end within ``seconds``
    of the first one: the draft (its queue wait included), its rewrites and the judge's calls share
    one per-request deadline."""
    token = _REQUEST_BUDGET.set(_Budget(seconds))
    try:
        yield
    finally:
        _REQUEST_BUDGET.reset(token)


def _remaining(limit: float) -> float:
    """``limit``, or less when the request's deadline comes first."""
    budget = _REQUEST_BUDGET.get()
    return limit if budget is None else min(limit, budget.remaining())


class LimitedUpstream:
    def __init__(
        self,
        inner: Upstream,
        *,
        max_concurrency: int,
        queue_size: int,
        queue_timeout: float,
        deadline: float,
        metrics: GatewayMetrics | None = None,
    ) -> None:
        if max_concurrency < 1 or queue_size < 0 or queue_timeout <= 0 or deadline <= 0:
            raise ValueError("max_concurrency >= 1, queue_size >= 0, queue_timeout and deadline > 0")
        self.inner = inner
        self.name = inner.name
        self.max_concurrency = max_concurrency
        self.queue_size = queue_size
        self.queue_timeout = queue_timeout
        self.deadline = deadline
        self._metrics = metrics
        self._slots = asyncio.Semaphore(max_concurrency)
        self.in_flight = 0
        self.waiting = 0

    @classmethod
    def from_settings(
        cls, inner: Upstream, settings: Settings, metrics: GatewayMetrics | None = None
    ) -> LimitedUpstream:
        return cls(
            inner,
            max_concurrency=settings.upstream_max_concurrency,
            queue_size=settings.upstream_queue_size,
            queue_timeout=settings.upstream_queue_timeout,
            deadline=settings.upstream_deadline,
            metrics=metrics,
        )

    async def draft(self, request: ChatRequest, passages: Sequence[Passage]) -> Draft:
        return await self.call("draft", lambda: self.inner.draft(request, passages))

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
        """One completion of the inner upstream (``CompletionClient``), as a ``rewrite`` call."""
        complete = getattr(self.inner, "complete", None)
        if complete is None:
            raise UpstreamError(f"the {self.name!r} upstream cannot make free-form completions")

        async def run() -> str:
            text: str = await complete(
                messages,
                temperature=temperature,
                max_tokens=max_tokens,
                user=user,
                schema=schema,
                schema_name=schema_name,
            )
            return text

        return await self.call("rewrite", run)

    async def call(self, purpose: str, fn: Callable[[], Awaitable[T]]) -> T:
        """Run one model call under the slots, queue and deadline; count it by ``purpose``."""
        try:
            result = await self._bounded(fn)
        except Exception as err:
            self._count(purpose, err)
            raise
        if self._metrics is not None:
            self._metrics.model_calls.labels(purpose=purpose, result="ok").inc()
        return result

    async def _bounded(self, fn: Callable[[], Awaitable[T]]) -> T:
        async with self._slot():
            with anyio.move_on_after(_remaining(self.deadline)) as scope:
                return await fn()
        if scope.cancelled_caught:
            raise UpstreamTimeout(
                f"the upstream did not finish within the {self.deadline:g}s deadline (per call and "
                "per request)"
            )
        raise UpstreamTimeout("the upstream call was cancelled")  # pragma: no cover - unreachable

    def _count(self, purpose: str, error: Exception) -> None:
        if self._metrics is None:
            return
        self._metrics.model_calls.labels(purpose=purpose, result="error").inc()
        if purpose != "draft":  # a draft's error is counted once, with its request (pipeline.record)
            kind = error.kind if isinstance(error, UpstreamError) else "upstream_error"
            self._metrics.upstream_errors.labels(type=upstream_error_label(kind)).inc()

    async def aclose(self) -> None:
        await self.inner.aclose()

    @asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        if self._slots.locked():
            if self.waiting >= self.queue_size:
                raise UpstreamBusy(
                    f"all {self.max_concurrency} upstream slots are busy and {self.waiting} calls are "
                    "already waiting"
                )
            self._set_waiting(+1)
            try:
                with anyio.move_on_after(_remaining(self.queue_timeout)) as scope:
                    await self._slots.acquire()
            finally:
                self._set_waiting(-1)
            if scope.cancelled_caught:
                raise UpstreamQueueTimeout(f"no upstream slot became free within {self.queue_timeout:g}s")
        else:
            await self._slots.acquire()
        self._set_in_flight(+1)
        try:
            yield
        finally:
            self._set_in_flight(-1)
            self._slots.release()

    def _set_waiting(self, delta: int) -> None:
        self.waiting += delta
        if self._metrics is not None:
            self._metrics.upstream_waiting.set(self.waiting)

    def _set_in_flight(self, delta: int) -> None:
        self.in_flight += delta
        if self._metrics is not None:
            self._metrics.upstream_in_flight.set(self.in_flight)
