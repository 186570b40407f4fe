"""One request, top to bottom. The HTTP layer, the CLI and the tests all call ``answer``.

With a ``sink``, ``answer`` also hands over the patient's text while it runs: each sentence as soon as
it is final (verified, rewritten-and-verified, or dropped) and no outcome still pending could make the
answer refused, then the rest (a refusal, the notes for declined questions) at the end. What is handed
over is never retracted: the pieces always concatenate to ``PipelineResult.answer``. ``stream_answer``
wraps this as an async iterator for the HTTP layer.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import structlog

from gateway.domain import (
    ChatRequest,
    ClaimResult,
    Draft,
    Outcome,
    Passage,
    RefusalReason,
    Scope,
    Statement,
    Triage,
    TrustReport,
    Verdict,
)
from gateway.errors import MalformedDraft, StageError, StoreError, UpstreamError, VerifierError
from gateway.pipeline.badge import badge
from gateway.pipeline.cleanup import Cleanup, judge_claims
from gateway.pipeline.record import record
from gateway.pipeline.retrieve import retrieve
from gateway.pipeline.split import split
from gateway.pipeline.triage import answerable_request, deferred_questions, red_flag_notes, triage
from gateway.pipeline.verify import verify
from gateway.services import Services

log = structlog.get_logger("gateway.pipeline")

TextSink = Callable[[str], Awaitable[None]]
"""Receives the patient's text piece by piece while the pipeline runs (verified streaming)."""


def new_request_id() -> str:
    return f"req_{uuid.uuid4().hex}"


@dataclass
class Timings:
    started: float = field(default_factory=time.perf_counter)
    retrieval: float = 0.0
    upstream: float = 0.0
    verification: float = 0.0
    total: float = 0.0
    first_token: float | None = None
    """Seconds from the start to the first verified text handed to a sink (streaming only)."""

    @property
    def added(self) -> float:
        return max(0.0, self.total - self.upstream)


@dataclass(frozen=True)
class PipelineResult:
    request_id: str
    created_at: dt.datetime
    request: ChatRequest
    triage: Triage
    passages: tuple[Passage, ...]
    best_relevance: float | None
    draft: Draft | None
    statements: tuple[Statement, ...]
    verdicts: tuple[Verdict, ...]
    outcome: Outcome
    report: TrustReport
    timings: Timings
    error: StageError | None = None

    @property
    def answer(self) -> str:
        return self.outcome.answer


async def answer(
    request: ChatRequest, services: Services, request_id: str | None = None, sink: TextSink | None = None
) -> PipelineResult:
    """Triage, retrieve, draft, split, verify, clean up, badge and record one chat request.

    Never raises for a run-time failure of a stage: the patient gets a safe refusal naming the reason,
    and the error is counted and audited.
    """
    policy = services.policy
    run = _Run(request, services, request_id or new_request_id(), sink)

    run.triage = await triage(request, services)
    if run.triage.scope is not Scope.IN_SCOPE:
        return await run.refuse(RefusalReason(run.triage.scope.value), run.triage.reason)

    stage = "retrieve"
    try:
        started = time.perf_counter()
        question = " ".join(run.triage.answerable) or request.question
        retrieval = await retrieve(question, services.store, policy.thresholds.retrieval)
        run.timings.retrieval = time.perf_counter() - started
        run.passages, run.best_relevance = retrieval.passages, retrieval.best_relevance
        if not retrieval.relevant:
            return await run.refuse(RefusalReason.NO_RELEVANT_CONTEXT, "no vetted passage is relevant enough")

        stage = "draft"
        started = time.perf_counter()
        try:
            run.draft = await services.upstream.draft(answerable_request(request, run.triage), run.passages)
        finally:
            run.timings.upstream = time.perf_counter() - started
        run.statements = tuple(split(run.draft))
        claims = [s for s in run.statements if s.is_claim]

        stage = "verify"
        started = time.perf_counter()
        run.verdicts = tuple(await verify(claims, run.passages, services.verifier))
        stage = "cleanup"
        judged = judge_claims(run.statements, run.verdicts, run.passages, policy.thresholds.cleanup)
        cleaning = Cleanup(run.draft.answer, run.statements, judged, policy.thresholds.cleanup)
        await run.clean_up(cleaning)
        run.timings.verification = time.perf_counter() - started
        outcome = cleaning.outcome()
    except MalformedDraft as err:
        return await run.fail(RefusalReason.MALFORMED_OUTPUT, err)
    except UpstreamError as err:
        return await run.fail(RefusalReason.UPSTREAM_ERROR, err)
    except StoreError as err:
        return await run.fail(RefusalReason.STORE_ERROR, err)
    except (VerifierError, StageError) as err:
        return await run.fail(RefusalReason.VERIFIER_ERROR, err)
    except Exception as err:  # fail closed: an unexpected failure is refused, named and counted, never sent
        return await run.fail(_REASON_BY_STAGE[stage], StageError.from_exception(stage, err))

    if outcome.refused and outcome.refusal_reason is not None:
        return await run.finish(outcome, refusal_message=services.messages.refusal(outcome.refusal_reason))
    return await run.finish(outcome)


async def stream_answer(
    request: ChatRequest, services: Services, request_id: str | None = None
) -> AsyncIterator[str | PipelineResult]:
    """Yields the patient's text as it is verified (never anything later retracted), then the result."""
    queue: asyncio.Queue[str | PipelineResult | Exception] = asyncio.Queue()

    async def produce() -> None:
        try:
            await queue.put(await answer(request, services, request_id, sink=queue.put))
        except Exception as err:  # handed to the consumer, which re-raises it
            await queue.put(err)

    task = asyncio.create_task(produce())
    try:
        while True:
            item = await queue.get()
            if isinstance(item, Exception):
                raise item
            yield item
            if isinstance(item, PipelineResult):
                return
    finally:
        if not task.done():
            task.cancel()


_REASON_BY_STAGE = {
    "retrieve": RefusalReason.STORE_ERROR,
    "draft": RefusalReason.UPSTREAM_ERROR,
    "verify": RefusalReason.VERIFIER_ERROR,
    "cleanup": RefusalReason.VERIFIER_ERROR,
}


def _notes(triage_result: Triage, services: Services) -> str:
    """After an in-scope reply: a note per declined question, and the safety note per red flag asked about."""
    if triage_result.scope is not Scope.IN_SCOPE:
        return ""
    notes = [
        services.messages.render("declined_question", scope=q.scope.value, question=q.text)
        for q in triage_result.declined
    ]
    notes += [
        services.messages.render("red_flag_information", rule=rule) for rule in red_flag_notes(triage_result)
    ]
    return " ".join(notes)


class _Run:
    """The state one request accumulates; turns it into a recorded PipelineResult."""

    def __init__(
        self, request: ChatRequest, services: Services, request_id: str, sink: TextSink | None = None
    ) -> None:
        self.request = request
        self.services = services
        self.request_id = request_id
        self.sink = sink
        self.sent = ""
        self.created_at = dt.datetime.now(dt.UTC)
        self.timings = Timings()
        self.triage = Triage(Scope.IN_SCOPE, "not triaged")
        self.passages: tuple[Passage, ...] = ()
        self.best_relevance: float | None = None
        self.draft: Draft | None = None
        self.statements: tuple[Statement, ...] = ()
        self.verdicts: tuple[Verdict, ...] = ()

    async def clean_up(self, cleaning: Cleanup) -> None:
        """Rewrite the failing claims concurrently; release each sentence as soon as it is final."""
        await self.release(*cleaning.ready())
        tasks = {
            i: asyncio.create_task(self._rewrite(cleaning.results[i])) for i in cleaning.start_rewrites()
        }
        try:
            for index, task in tasks.items():
                cleaning.resolve(index, await task)
                await self.release(*cleaning.ready())
        finally:
            for task in tasks.values():
                task.cancel()

    async def _rewrite(self, failed: ClaimResult) -> ClaimResult:
        """One claim's rewrite. A crash removes that claim (counted, logged), never the stream's integrity."""
        try:
            return await self.services.rewriter.rewrite(failed, self.passages, self.request)
        except Exception as err:
            self.services.metrics.stage_errors.labels(stage="rewrite").inc()
            log.error("rewrite_failed", request_id=self.request_id, error=type(err).__name__)
            reason = f"the rewrite failed ({type(err).__name__}); {failed.reason}"
            return ClaimResult(
                failed.statement,
                failed.verdict,
                failed.outcome,
                None,
                reason=reason,
                safety_critical=failed.safety_critical,
            )

    async def release(self, *pieces: str) -> None:
        """Hand verified sentences to the sink; the first stamps the time to the first verified token."""
        if self.sink is None:
            return
        for piece in pieces:
            if self.timings.first_token is None:
                self.timings.first_token = time.perf_counter() - self.timings.started
                self.services.metrics.first_token_latency.observe(self.timings.first_token)
            self.sent += piece
            await self.sink(piece)

    async def _flush(self, answer_text: str) -> None:
        """Send what the sink has not had yet; released text is always a prefix of the final answer."""
        if self.sink is None:
            return
        if not answer_text.startswith(self.sent):
            log.error("stream_diverged", request_id=self.request_id, sent=len(self.sent))
            return
        rest = answer_text[len(self.sent) :]
        if rest:
            self.sent += rest
            await self.sink(rest)

    async def refuse(self, reason: RefusalReason, detail: str) -> PipelineResult:
        emergency = reason is RefusalReason.EMERGENCY
        rule = self.triage.rule if emergency else None
        deferred = deferred_questions(self.triage) if emergency else ()
        recognised = self.triage.recognised if emergency else None
        message = self.services.messages.refusal(reason, rule=rule, deferred=deferred, recognised=recognised)
        outcome = Outcome("", self.statements, (), True, reason, detail)
        return await self.finish(outcome, refusal_message=message)

    async def fail(self, reason: RefusalReason, error: StageError) -> PipelineResult:
        message = self.services.messages.refusal(reason, rule=None)
        outcome = Outcome("", self.statements, (), True, reason, f"{type(error).__name__}: {error}")
        return await self.finish(outcome, refusal_message=message, error=error)

    async def finish(
        self, outcome: Outcome, refusal_message: str | None = None, error: StageError | None = None
    ) -> PipelineResult:
        if refusal_message is not None:
            outcome = outcome.with_answer(refusal_message)
        outcome = outcome.with_declined(_notes(self.triage, self.services))
        await self._flush(outcome.answer)
        self.timings.total = time.perf_counter() - self.timings.started
        report = badge(outcome, self.passages, self.services.policy.tiers, self.services.today())
        result = PipelineResult(
            request_id=self.request_id,
            created_at=self.created_at,
            request=self.request,
            triage=self.triage,
            passages=self.passages,
            best_relevance=self.best_relevance,
            draft=self.draft,
            statements=self.statements,
            verdicts=self.verdicts,
            outcome=outcome,
            report=report,
            timings=self.timings,
            error=error,
        )
        await record(result, self.services)
        return result
