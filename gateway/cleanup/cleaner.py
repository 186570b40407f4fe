"""The cleanup stage of a streamed answer, one sentence at a time, and its rewrite scheduling.

``SentenceCleaner`` is built once at start-up with the rewriter, the cleanup policy, the metrics and the
request's bounds on model rewrites (the per-request cap, the model deadline). Each request opens its
own ``CleanupState`` (``start``): the answer's ``Cleanup`` and its rewrites. Per sentence ``run`` judges
the claims and rewrites the failing ones: without a model (the rewrite to the source) at once, before
the next sentence is read; with a model (``rewriter: upstream``/``auto`` with an upstream), up to
``max_rewrites`` rewrites run as tasks alongside the stream (the rest get the source rewrite at once),
each resolved when done; ``finish`` waits for the last ones within what is left of the request's model
deadline (then they are removed), releasing in order as each is resolved. Both return a ``CleanupStep``:
the sentences now final, for the caller to release, and the refusal to stop at, if any.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

import anyio
import structlog

from gateway.cleanup.policy import CleanupPolicy
from gateway.cleanup.rewriter import Rewriter
from gateway.cleanup.stage import Cleanup, judge_claims
from gateway.domain import ChatRequest, ClaimResult, Passage, RefusalReason, Statement, Verdict
from gateway.metrics import GatewayMetrics
from gateway.vocabulary import RewriteSkipReason, StageName

log = structlog.get_logger("gateway.pipeline")

REWRITE_GRACE_SECONDS = 1.0
"""How long after the request's model deadline the rewrite phase is cut off even if a rewrite (or its
re-verification) has not returned; the calls themselves end at the deadline."""

Release = Callable[..., Awaitable[None]]
"""Hands final sentences to the patient (``release(*pieces)``, the run's)."""
Attribute = Callable[[Sequence[ClaimResult]], list[ClaimResult]]
"""Names, in a failing claim's reason, the untrusted tool result it restates (``tools.ToolCalls``)."""


@dataclass(frozen=True)
class CleanupStep:
    """What a cleanup step leaves the caller to do: release ``ready``, then stop when ``stop`` says so."""

    ready: tuple[str, ...]
    """The next sentences that are final, one piece each, in order (``Cleanup.ready``)."""
    stop: tuple[RefusalReason, str] | None
    """A refusal no later sentence can undo (``Cleanup.stop_reason``): the answer stops here."""

    @classmethod
    def of(cls, cleaning: Cleanup) -> CleanupStep:
        """Where ``cleaning`` stands now: the sentences it has just made final (``Cleanup.ready`` hands
        each out once) and its stop."""
        return cls(tuple(cleaning.ready()), cleaning.stop_reason())


@dataclass
class CleanupState:
    """One request's cleanup: its streamed answer's ``Cleanup`` and the model rewrites running."""

    cleaning: Cleanup
    request: ChatRequest
    request_id: str
    passages: tuple[Passage, ...]
    release: Release
    attribute: Attribute
    model_started: float
    """When the draft call started: the request's model deadline counts from here."""
    tasks: dict[int, asyncio.Task[ClaimResult]] = field(default_factory=dict)
    started: int = 0
    """Model rewrites started so far (bounded by the cleaner's ``max_rewrites``)."""


class SentenceCleaner:
    """The cleanup stage: judge each sentence's claims and rewrite (or remove) the failing ones."""

    def __init__(
        self,
        rewriter: Rewriter,
        policy: CleanupPolicy,
        metrics: GatewayMetrics,
        max_rewrites: int,
        deadline: float,
    ) -> None:
        self.rewriter = rewriter
        self.policy = policy
        self.metrics = metrics
        self.max_rewrites = max_rewrites
        """``max_rewrites_per_request``: model rewrites per request; the rest are rewritten to the source."""
        self.deadline = deadline
        """``upstream_deadline``: the request's model deadline, which the rewrites share."""

    def start(
        self,
        request: ChatRequest,
        request_id: str,
        passages: tuple[Passage, ...],
        release: Release,
        attribute: Attribute,
        model_started: float,
    ) -> CleanupState:
        """A request's cleanup, opened when drafting starts."""
        cleaning = Cleanup("", (), (), self.policy)
        return CleanupState(cleaning, request, request_id, passages, release, attribute, model_started)

    async def run(
        self,
        state: CleanupState,
        answer: str,
        statements: Sequence[Statement],
        verdicts: Sequence[Verdict],
    ) -> CleanupStep:
        """The cleanup stage of one sentence: judge its claims and rewrite the failing ones; returns
        what is final (for the caller to release) and whether the answer stops."""
        judged = state.attribute(judge_claims(statements, verdicts, state.passages, self.policy))
        for index in state.cleaning.extend(answer, statements, judged):
            await self._start(state, index)
        self._harvest(state)
        return CleanupStep.of(state.cleaning)

    async def _start(self, state: CleanupState, index: int) -> None:
        cleaning = state.cleaning
        failed = cleaning.results[index]
        if not self.rewriter.uses_model:
            cleaning.resolve(index, await self._rewrite(state, failed))
            return
        if state.started < self.max_rewrites:
            state.started += 1
            state.tasks[index] = asyncio.create_task(self._rewrite(state, failed))
            return
        self.metrics.rewrites_skipped.labels(reason=RewriteSkipReason.CAP).inc()
        cap = self.max_rewrites
        note = f"not rewritten by the model: the per-request cap of {cap} model rewrites was reached"
        cleaning.resolve(index, await self._rewrite(state, failed, note))

    def _harvest(self, state: CleanupState) -> None:
        """Resolve the model rewrites that are done."""
        for index, task in list(state.tasks.items()):
            if task.done():
                del state.tasks[index]
                state.cleaning.resolve(index, task.result())

    async def finish(self, state: CleanupState, removals_refuse: bool) -> CleanupStep:
        """Wait for the running rewrites, releasing in order as each is resolved; within the deadline.

        Then ``removals_refuse`` applies (``Cleanup.removals_refuse``: False for a reply that calls
        tools) and the last step is returned: the rest that is final, and whether the answer stops.
        """
        cleaning, tasks = state.cleaning, state.tasks
        budget = self.deadline + REWRITE_GRACE_SECONDS - (time.perf_counter() - state.model_started)
        with anyio.move_on_after(budget):
            for index in sorted(tasks):
                result = await tasks[index]
                del tasks[index]
                cleaning.resolve(index, result)
                await state.release(*cleaning.ready())
        self._harvest(state)
        reason = f"not rewritten: the request's {self.deadline:g}s model deadline passed"
        for index in sorted(tasks):
            self._skip(cleaning, index, RewriteSkipReason.DEADLINE, reason)
        self.cancel(state)
        cleaning.removals_refuse = removals_refuse
        return CleanupStep.of(cleaning)

    @staticmethod
    def cancel(state: CleanupState) -> None:
        for task in state.tasks.values():
            task.cancel()
        state.tasks.clear()

    def _skip(self, cleaning: Cleanup, index: int, why: RewriteSkipReason, reason: str) -> None:
        failed = cleaning.results[index]
        cleaning.resolve(index, replace(failed, reason=f"{reason}; {failed.reason}"))
        self.metrics.rewrites_skipped.labels(reason=why).inc()

    async def _rewrite(
        self, state: CleanupState, failed: ClaimResult, capped: str | None = None
    ) -> ClaimResult:
        """One claim's rewrite (without a model call when ``capped`` says why). A crash removes that
        claim (counted, logged), never the stream's integrity."""
        try:
            result = await self.rewriter.rewrite(
                failed, state.passages, state.request, use_model=capped is None
            )
        except Exception as err:
            self.metrics.stage_errors.labels(stage=StageName.REWRITE).inc()
            log.error("rewrite_failed", request_id=state.request_id, error=type(err).__name__)
            reason = f"the rewrite failed ({type(err).__name__}); {failed.reason}"
            return ClaimResult(
                failed.statement,
                failed.verdict,
                failed.outcome,
                None,
                reason=reason,
                safety_critical=failed.safety_critical,
            )
        return replace(result, reason=f"{capped}; {result.reason}") if capped else result
