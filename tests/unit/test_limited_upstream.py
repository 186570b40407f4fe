"""LimitedUpstream: concurrency slots, a bounded wait queue, a total deadline; slots never leak."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from gateway.domain import ChatRequest, Draft, DraftFormat, Message, Passage, Role
from gateway.errors import UpstreamBusy, UpstreamQueueTimeout, UpstreamTimeout, UpstreamUnavailable
from gateway.metrics import GatewayMetrics
from gateway.upstream.limited import LimitedUpstream

REQUEST = ChatRequest(messages=(Message(Role.USER, "q"),), model="m")


class SlowUpstream:
    name = "slow"

    def __init__(self, seconds: float = 0.0, error: Exception | None = None) -> None:
        self.seconds = seconds
        self.error = error
        self.calls = 0
        self.release = asyncio.Event()

    async def draft(self, request: ChatRequest, passages: Sequence[Passage]) -> Draft:
        self.calls += 1
        if self.error is not None:
            raise self.error
        if self.seconds:
            await asyncio.sleep(self.seconds)
        else:
            await self.release.wait()
        return Draft(answer="ok", claims=(), format=DraftFormat.JSON, raw="ok")

    async def aclose(self) -> None:
        return None


def limited(inner: SlowUpstream, **overrides: float) -> LimitedUpstream:
    options: dict[str, float] = {"max_concurrency": 1, "queue_size": 0, "queue_timeout": 5.0, "deadline": 5.0}
    options.update(overrides)
    return LimitedUpstream(
        inner,
        max_concurrency=int(options["max_concurrency"]),
        queue_size=int(options["queue_size"]),
        queue_timeout=options["queue_timeout"],
        deadline=options["deadline"],
        metrics=GatewayMetrics(),
    )


async def test_a_full_queue_refuses_at_once_without_calling_the_model() -> None:
    inner = SlowUpstream()
    upstream = limited(inner)
    first = asyncio.create_task(upstream.draft(REQUEST, ()))
    await asyncio.sleep(0.01)
    with pytest.raises(UpstreamBusy) as info:
        await upstream.draft(REQUEST, ())
    assert info.value.kind == "queue_full"
    inner.release.set()
    assert (await first).answer == "ok"
    assert inner.calls == 1


async def test_a_waiter_gives_up_after_the_queue_timeout() -> None:
    inner = SlowUpstream()
    upstream = limited(inner, queue_size=1, queue_timeout=0.05)
    first = asyncio.create_task(upstream.draft(REQUEST, ()))
    await asyncio.sleep(0.01)
    with pytest.raises(UpstreamQueueTimeout) as info:
        await upstream.draft(REQUEST, ())
    assert info.value.kind == "queue_timeout"
    assert upstream.waiting == 0
    inner.release.set()
    await first
    assert upstream.in_flight == 0


async def test_a_waiter_gets_the_slot_when_it_frees() -> None:
    inner = SlowUpstream()
    upstream = limited(inner, queue_size=1)
    first = asyncio.create_task(upstream.draft(REQUEST, ()))
    await asyncio.sleep(0.01)
    second = asyncio.create_task(upstream.draft(REQUEST, ()))
    await asyncio.sleep(0.01)
    assert upstream.waiting == 1
    inner.release.set()
    assert [d.answer for d in await asyncio.gather(first, second)] == ["ok", "ok"]
    assert (upstream.in_flight, upstream.waiting) == (0, 0)


async def test_the_deadline_bounds_a_call_that_never_ends() -> None:
    upstream = limited(SlowUpstream(), deadline=0.05)
    with pytest.raises(UpstreamTimeout, match="deadline"):
        await upstream.draft(REQUEST, ())
    assert upstream.in_flight == 0


async def test_errors_pass_through_and_release_the_slot() -> None:
    upstream = limited(SlowUpstream(error=UpstreamUnavailable("down")))
    for _ in range(3):
        with pytest.raises(UpstreamUnavailable):
            await upstream.draft(REQUEST, ())
    assert upstream.in_flight == 0


def test_bad_limits_are_rejected() -> None:
    with pytest.raises(ValueError):
        limited(SlowUpstream(), max_concurrency=0)
