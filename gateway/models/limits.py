"""The limits on model calls: concurrency, queueing and total time, as a wrapper around a ChatModel.

``LimitedModel(model, limits)`` is a ChatModel whose calls run under ``CallLimits``:

* at most ``max_concurrency`` calls run at once;
* up to ``queue_size`` further calls wait for a slot, each at most ``queue_timeout`` seconds;
* a call that finds the queue full fails at once with ``UpstreamBusy`` (kind ``queue_full``), one that
  waits too long with ``UpstreamQueueTimeout`` (kind ``queue_timeout``);
* a running call that takes longer than ``deadline`` seconds in total (retries, a slow drip of bytes
  or a stalled body included: the SDK's own timeout is per read) is cancelled with ``UpstreamTimeout``;
  a streamed call holds its slot until its stream ends, and each wait for its next piece is bounded
  by what is left of the deadline (a stall mid-stream ends there too);
* within ``request_deadline(seconds)`` (set by the pipeline for each request), every call also ends
  by the request's deadline, counted from its first model call: the draft, its rewrites and the
  judge's calls share one budget, waiting for a slot included.

All three are UpstreamErrors, so the pipeline fails closed as for any upstream failure. The limits are
per endpoint (``ModelPool``): the draft and the rewriter share one endpoint's slots and queue. The
gauges ``gateway_upstream_in_flight`` and ``gateway_upstream_waiting`` show the state (summed over
endpoints); calls are counted by ``MeteredModel``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import aclosing, asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

import anyio

from gateway.errors import UpstreamBusy, UpstreamQueueTimeout, UpstreamTimeout
from gateway.models.changes import Changes
from gateway.models.chat_model import Call, ChatModel, StreamCall, StreamPiece, WrapperModel

if TYPE_CHECKING:
    from gateway.metrics import GatewayMetrics
    from gateway.settings import Settings


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


class CallLimits:
    """Slots, a bounded wait queue and a deadline: shared by every model of one endpoint."""

    def __init__(
        self,
        *,
        max_concurrency: int,
        queue_size: int,
        queue_timeout: float,
        deadline: float,
        metrics: GatewayMetrics | None = None,
    ) -> None:
        if max_concurrency < 1 or queue_size < 0 or queue_timeout <= 0 or deadline <= 0:
            raise ValueError("max_concurrency >= 1, queue_size >= 0, queue_timeout and deadline > 0")
        self.max_concurrency = max_concurrency
        self.queue_size = queue_size
        self.queue_timeout = queue_timeout
        self.deadline = deadline
        self._metrics = metrics
        self._slots = asyncio.Semaphore(max_concurrency)
        self.in_flight = 0
        self.waiting = 0
        self.changes = Changes()
        """Notified whenever ``in_flight`` or ``waiting`` changes (a test waits for calls to queue)."""

    @classmethod
    def from_settings(cls, settings: Settings, metrics: GatewayMetrics | None = None) -> CallLimits:
        return cls(
            max_concurrency=settings.upstream_max_concurrency,
            queue_size=settings.upstream_queue_size,
            queue_timeout=settings.upstream_queue_timeout,
            deadline=settings.upstream_deadline,
            metrics=metrics,
        )

    async def run(self, call: Call) -> str:
        """Make ``call`` in a slot, within the deadline (per call, and the request's)."""
        async with self._slot():
            with anyio.move_on_after(_remaining(self.deadline)) as scope:
                return await call()
        if scope.cancelled_caught:
            raise UpstreamTimeout(
                f"the upstream did not finish within the {self.deadline:g}s deadline (per call and "
                "per request)"
            )
        raise UpstreamTimeout("the upstream call was cancelled")  # pragma: no cover - unreachable

    async def stream(self, call: StreamCall) -> AsyncGenerator[StreamPiece, None]:
        """Iterate ``call`` in a slot held until the stream ends, within the deadline: each wait for the
        next piece is bounded by what is left of it, so a stall or a slow drip ends at the deadline."""
        async with self._slot():
            ends = time.monotonic() + _remaining(self.deadline)
            async with aclosing(call()) as chunks:
                while True:
                    with anyio.move_on_after(max(0.0, ends - time.monotonic())) as scope:
                        chunk = await anext(chunks, None)
                    if scope.cancelled_caught:
                        raise UpstreamTimeout(
                            f"the upstream's stream did not finish within the {self.deadline:g}s deadline "
                            "(per call and per request)"
                        )
                    if chunk is None:
                        return
                    yield chunk

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
            self._metrics.upstream_waiting.inc(delta)
        self.changes.notify()

    def _set_in_flight(self, delta: int) -> None:
        self.in_flight += delta
        if self._metrics is not None:
            self._metrics.upstream_in_flight.inc(delta)
        self.changes.notify()


class LimitedModel(WrapperModel):
    """A ChatModel whose calls run under ``limits`` (see the module doc)."""

    def __init__(self, wrapped: ChatModel, limits: CallLimits) -> None:
        super().__init__(wrapped)
        self.limits = limits

    @property
    def in_flight(self) -> int:
        """Calls running now under these limits (every model sharing them)."""
        return self.limits.in_flight

    @property
    def waiting(self) -> int:
        """Calls waiting for a slot now."""
        return self.limits.waiting

    async def around(self, call: Call) -> str:
        return await self.limits.run(call)

    async def around_stream(self, call: StreamCall) -> AsyncGenerator[StreamPiece, None]:
        async with aclosing(self.limits.stream(call)) as chunks:
            async for chunk in chunks:
                yield chunk
