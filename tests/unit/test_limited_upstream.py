"""LimitedModel: concurrency slots, a bounded wait queue, a total deadline; slots never leak.

The drafts are made through ``ModelUpstream`` over the limited model, as in the gateway.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest

from gateway.domain import Draft
from gateway.drafting.model_upstream import ModelUpstream
from gateway.errors import UpstreamBusy, UpstreamQueueTimeout, UpstreamTimeout, UpstreamUnavailable
from gateway.metrics import GatewayMetrics
from gateway.models import CallLimits, ChatModel, LimitedModel
from gateway.testing import ScriptedChatModel
from tests.support.model_limits import REQUEST
from tests.support.waiting import reached


def held(error: Exception | None = None) -> ScriptedChatModel:
    """A model whose calls answer "ok" once released (or raise ``error`` at once)."""
    if error is not None:
        return ScriptedChatModel(default=error)
    return ScriptedChatModel(default='["ok"]', held=True)


def limited(inner: ChatModel, **overrides: float) -> LimitedModel:
    options: dict[str, float] = {"max_concurrency": 1, "queue_size": 0, "queue_timeout": 5.0, "deadline": 5.0}
    options.update(overrides)
    limits = CallLimits(
        max_concurrency=int(options["max_concurrency"]),
        queue_size=int(options["queue_size"]),
        queue_timeout=options["queue_timeout"],
        deadline=options["deadline"],
        metrics=GatewayMetrics(),
    )
    return LimitedModel(inner, limits)


def draft(model: ChatModel) -> Coroutine[Any, Any, Draft]:
    return ModelUpstream(model).draft(REQUEST, ())


async def test_a_full_queue_refuses_at_once_without_calling_the_model() -> None:
    inner = held()
    upstream = limited(inner)
    first = asyncio.create_task(draft(upstream))
    await inner.wait_for_calls(1)  # the first call holds the slot: it is inside the model
    with pytest.raises(UpstreamBusy) as info:
        await draft(upstream)
    assert info.value.kind == "queue_full"
    inner.release()
    assert (await first).answer == "ok"
    assert inner.calls == 1


async def test_a_waiter_gives_up_after_the_queue_timeout() -> None:
    inner = held()
    upstream = limited(inner, queue_size=1, queue_timeout=0.05)
    first = asyncio.create_task(draft(upstream))
    await inner.wait_for_calls(1)  # the first call holds the slot: it is inside the model
    with pytest.raises(UpstreamQueueTimeout) as info:
        await draft(upstream)
    assert info.value.kind == "queue_timeout"
    assert upstream.waiting == 0
    inner.release()
    await first
    assert upstream.in_flight == 0


async def test_a_waiter_gets_the_slot_when_it_frees() -> None:
    inner = held()
    upstream = limited(inner, queue_size=1)
    first = asyncio.create_task(draft(upstream))
    await inner.wait_for_calls(1)  # the first call holds the slot: it is inside the model
    second = asyncio.create_task(draft(upstream))
    await reached(
        upstream.limits.changes, lambda: upstream.waiting == 1, "the second call waits for the slot"
    )
    assert upstream.in_flight == 1
    inner.release()
    assert [d.answer for d in await asyncio.gather(first, second)] == ["ok", "ok"]
    assert (upstream.in_flight, upstream.waiting) == (0, 0)


async def test_the_deadline_bounds_a_call_that_never_ends() -> None:
    upstream = limited(held(), deadline=0.05)
    with pytest.raises(UpstreamTimeout, match="deadline"):
        await draft(upstream)
    assert upstream.in_flight == 0


async def test_errors_pass_through_and_release_the_slot() -> None:
    upstream = limited(held(error=UpstreamUnavailable("down")))
    for _ in range(3):
        with pytest.raises(UpstreamUnavailable):
            await draft(upstream)
    assert upstream.in_flight == 0


def test_bad_limits_are_rejected() -> None:
    with pytest.raises(ValueError):
        limited(held(), max_concurrency=0)
