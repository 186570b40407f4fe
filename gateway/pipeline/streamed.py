"""The streamed draft's steps, one sentence at a time (``run._Run.draft_and_check`` wires them).

- ``next_part``: the next part of the upstream's stream (the draft stage);
- ``Rewrites``: the rewrites of the failing claims, at once to the source, or as model calls alongside
  the stream (bounded by the cap and the request's model deadline).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator
from typing import Protocol

import anyio

from gateway.cleanup.stage import Cleanup
from gateway.domain import ChatRequest, ClaimResult
from gateway.drafting.contract import DraftPart
from gateway.services import Services

REWRITE_GRACE_SECONDS = 1.0
"""How long after the request's model deadline the rewrite phase is cut off even if a rewrite (or its
re-verification) has not returned; the calls themselves end at the deadline."""


class RunState(Protocol):
    """What the rewrites need of the request's run (``run._Run``)."""

    services: Services
    model_started: float

    async def rewrite_claim(self, failed: ClaimResult, capped: str | None = None) -> ClaimResult: ...

    def skip_rewrite(self, cleaning: Cleanup, index: int, why: str, reason: str) -> None: ...

    async def release(self, *pieces: str) -> None: ...


async def next_part(parts: AsyncGenerator[DraftPart, None], request: ChatRequest) -> DraftPart | None:
    """The next part of the draft (None at its end). ``request`` is the model call's request: it names
    the call on the stage's span (``gateway.telemetry``), one span per part."""
    return await anext(parts, None)


class Rewrites:
    """The rewrites of one streamed answer's failing claims.

    Without a model (the rewrite to the source) a claim is rewritten at once, before the next sentence
    is read. With a model (``rewriter: upstream``/``auto`` with an upstream), up to
    ``max_rewrites_per_request`` rewrites run as tasks alongside the stream (the rest get the source
    rewrite at once); each is resolved when done (``harvest``), and ``finish`` waits for the last ones
    within what is left of the request's model deadline (then they are removed).
    """

    def __init__(self, run: RunState, cleaning: Cleanup) -> None:
        self._run = run
        self._cleaning = cleaning
        self._tasks: dict[int, asyncio.Task[ClaimResult]] = {}
        rewriter = run.services.rewriter
        self._uses_model = rewriter.uses_model
        self._cap = run.services.settings.max_rewrites_per_request
        self._started = 0

    async def start(self, index: int) -> None:
        failed = self._cleaning.results[index]
        if not self._uses_model:
            self._cleaning.resolve(index, await self._run.rewrite_claim(failed))
            return
        if self._started < self._cap:
            self._started += 1
            self._tasks[index] = asyncio.create_task(self._run.rewrite_claim(failed))
            return
        self._run.services.metrics.rewrites_skipped.labels(reason="cap").inc()
        note = f"not rewritten by the model: the per-request cap of {self._cap} model rewrites was reached"
        self._cleaning.resolve(index, await self._run.rewrite_claim(failed, note))

    def harvest(self) -> None:
        """Resolve the model rewrites that are done."""
        for index, task in list(self._tasks.items()):
            if task.done():
                del self._tasks[index]
                self._cleaning.resolve(index, task.result())

    async def finish(self) -> None:
        """Wait for the running rewrites, releasing in order as each is resolved; within the deadline."""
        run = self._run
        deadline = run.services.settings.upstream_deadline
        budget = deadline + REWRITE_GRACE_SECONDS - (time.perf_counter() - run.model_started)
        with anyio.move_on_after(budget):
            for index in sorted(self._tasks):
                result = await self._tasks[index]
                del self._tasks[index]
                self._cleaning.resolve(index, result)
                await run.release(*self._cleaning.ready())
        self.harvest()
        reason = f"not rewritten: the request's {deadline:g}s model deadline passed"
        for index in sorted(self._tasks):
            run.skip_rewrite(self._cleaning, index, "deadline", reason)
        self.cancel()

    def cancel(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        self._tasks.clear()
