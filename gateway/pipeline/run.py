"""One request, top to bottom. The HTTP layer, the CLI and the tests all call ``answer``.

With a ``sink``, ``answer`` also hands over the patient's text while it runs: each sentence as soon as
it is final (verified, rewritten-and-verified, or dropped) and no outcome still pending could make the
answer refused, then the rest (a refusal, the notes for declined questions) at the end. What is handed
over is never retracted: the pieces always concatenate to ``PipelineResult.answer``. ``stream_answer``
wraps this as an async iterator for the HTTP layer.

Exactly one audit row per request: it is written provisionally, and the run completes it whatever
happens, including when it is cancelled (a streaming client that went away, a server stop): the
recording is shielded from the cancellation and names the interruption as the outcome. The
provisional row is committed before anything leaves the gateway: before the model is asked, before any
text is sent, and before the final record. ``answer`` writes it while triage runs (triage is local
and sends nothing; the write's fsync and the question's encoding overlap); the streaming handler
writes it first with ``open_request``, since its headers go out before the result exists. An
``AuditError`` from it means nothing was sent: the answer is refused with a 503.

Every stage, triage to record, runs through one ``StageRunner`` (``gateway.pipeline.stages``): it times
the stage, names it on a failure and counts it; ``answer`` turns a failed stage into a refusal.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

import anyio
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
from gateway.errors import AuditError, StageError
from gateway.metrics import count_draft_failure
from gateway.models.limits import request_deadline
from gateway.pipeline.badge import badge, unbadged
from gateway.pipeline.bounds import check_repeats, check_statements, instruction_sentence
from gateway.pipeline.cleanup import Cleanup, judge_claims
from gateway.pipeline.record import record, record_start
from gateway.pipeline.result import PipelineResult, Timings
from gateway.pipeline.retrieve import retrieve
from gateway.pipeline.split import split
from gateway.pipeline.stages import Stage, StageRunner, refusal_reason
from gateway.pipeline.triage import answerable_request, deferred_questions, red_flag_notes, triage
from gateway.pipeline.verify import verify
from gateway.services import Services
from gateway.settings import Settings
from gateway.upstream.base import Upstream

log = structlog.get_logger("gateway.pipeline")

TextSink = Callable[[str], Awaitable[None]]
"""Receives the patient's text piece by piece while the pipeline runs (verified streaming)."""


def new_request_id() -> str:
    return f"req_{uuid.uuid4().hex}"


REWRITE_GRACE_SECONDS = 1.0
"""How long after the request's model deadline the rewrite phase is cut off even if a rewrite (or its
re-verification) has not returned; the calls themselves end at the deadline."""
CLIENT_DISCONNECTED = "client_disconnected"
CANCELLED = "cancelled"


@dataclass(frozen=True)
class OpenedRequest:
    """A request's identity; its provisional audit row is written (``open_request``) or being written."""

    request_id: str
    created_at: dt.datetime


def new_opened(request_id: str | None = None) -> OpenedRequest:
    return OpenedRequest(request_id or new_request_id(), dt.datetime.now(dt.UTC))


async def open_request(
    request: ChatRequest, services: Services, request_id: str | None = None
) -> OpenedRequest:
    """Write the request's provisional audit row; AuditError (counted) when the store cannot be written."""
    opened = new_opened(request_id)
    await record_start(opened.request_id, opened.created_at, request, services)
    return opened


async def answer(
    request: ChatRequest,
    services: Services,
    request_id: str | None = None,
    sink: TextSink | None = None,
    *,
    opened: OpenedRequest | None = None,
    interruption: str = CANCELLED,
) -> PipelineResult:
    """Triage, retrieve, draft, split, verify, clean up, badge and record one chat request.

    Without ``opened`` (a request whose provisional row is already written), the provisional row is
    written while triage runs, and committed before anything leaves the gateway.

    Never raises for a run-time failure of a stage: the patient gets a safe refusal naming the reason,
    and the error is counted and audited. Raises AuditError when the audit row cannot be written
    (provisionally, before anything is sent, or at the end: then the caller must not send the
    answer). When cancelled, completes the audit row with outcome ``interruption`` and re-raises the
    cancellation.
    """
    provisional = None
    if opened is None:
        opened = new_opened(request_id)
        provisional = asyncio.ensure_future(
            record_start(opened.request_id, opened.created_at, request, services)
        )
    run = _Run(request, services, opened, sink, provisional)
    try:
        with request_deadline(services.settings.upstream_deadline):
            return await _answer(run)
    except anyio.get_cancelled_exc_class():
        if not run.recorded:
            with anyio.CancelScope(shield=True):
                await run.interrupted(interruption)
        raise


async def _answer(run: _Run) -> PipelineResult:
    request, services, stage = run.request, run.services, run.stage
    policy = services.policy
    try:
        run.triage = await stage(TRIAGE, request, services)
        await run.opened()  # the provisional row is committed before the model is asked or text sent
        if run.triage.scope is not Scope.IN_SCOPE:
            return await run.refuse(RefusalReason(run.triage.scope.value), run.triage.reason)

        question = " ".join(run.triage.answerable) or request.question
        retrieval = await stage(RETRIEVE, question, services.store, policy.thresholds.retrieval)
        run.passages, run.best_relevance = retrieval.passages, retrieval.best_relevance
        if not retrieval.relevant:
            return await run.refuse(RefusalReason.NO_RELEVANT_CONTEXT, "no vetted passage is relevant enough")

        run.model_started = time.perf_counter()  # the request's model deadline counts from here
        draft = await stage(DRAFT, services.upstream, answerable_request(request, run.triage), run.passages)
        run.draft = draft
        reply = await stage(SPLIT, draft, services.settings, policy.thresholds.cleanup.planted_instruction)
        run.statements = reply.statements
        if reply.instruction:
            # claims resting on one are caught by cleanup; this is a sentence shown unverified
            detail = "the draft contains a sentence that reads like an instruction to a model or system"
            return await run.refuse(RefusalReason.SAFETY_CRITICAL_FAILED, detail)

        claims = [s for s in run.statements if s.is_claim]
        verdicts = await stage(VERIFY, claims, run.passages, services.verifier)
        run.verdicts = tuple(verdicts)
        outcome = await stage(CLEANUP, run, draft)
    except StageError as err:  # named and counted by the runner; fail closed: refused, never sent
        return await run.fail(err)

    if outcome.refused and outcome.refusal_reason is not None:
        return await run.finish(outcome, refusal_message=services.messages.refusal(outcome.refusal_reason))
    return await run.finish(outcome)


async def stream_answer(
    request: ChatRequest, services: Services, opened: OpenedRequest
) -> AsyncIterator[str | PipelineResult]:
    """Yields the patient's text as it is verified (never anything later retracted), then the result.

    When the consumer goes away (the client disconnected), the run is cancelled and records itself
    as ``client_disconnected``; closing waits for that record, shielded from the cancellation.
    """
    queue: asyncio.Queue[str | PipelineResult | Exception] = asyncio.Queue()

    async def produce() -> None:
        try:
            result = await answer(
                request, services, sink=queue.put, opened=opened, interruption=CLIENT_DISCONNECTED
            )
            await queue.put(result)
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
            with anyio.CancelScope(shield=True):
                await asyncio.wait({task})


def bounded_split(draft: Draft, settings: Settings) -> tuple[Statement, ...]:
    """The draft's statements, refused (DraftLimitExceeded) when it repeats a sentence too often or
    has too many. CPU work on up to ``upstream_max_reply_chars``: run it off the event loop."""
    check_repeats(draft.answer, settings.max_repeated_sentences)
    statements = split(draft)
    check_statements(len(statements), settings.max_draft_statements)
    return tuple(statements)


@dataclass(frozen=True)
class SplitReply:
    """The draft split into statements (the split stage's output)."""

    statements: tuple[Statement, ...]
    instruction: bool
    """A statement shown unverified (not a claim) reads like an instruction to a model or system."""


async def _split(draft: Draft, settings: Settings, planted: Sequence[str]) -> SplitReply:
    statements = await anyio.to_thread.run_sync(bounded_split, draft, settings)
    return SplitReply(statements, instruction_sentence(statements, planted))


async def _draft(upstream: Upstream, request: ChatRequest, passages: Sequence[Passage]) -> Draft:
    return await upstream.draft(request, passages)


async def _badge(outcome: Outcome, passages: Sequence[Passage], services: Services) -> TrustReport:
    return badge(outcome, passages, services.policy.tiers, services.today())


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
        self,
        request: ChatRequest,
        services: Services,
        opened: OpenedRequest,
        sink: TextSink | None = None,
        provisional: asyncio.Future[None] | None = None,
    ) -> None:
        self.request = request
        self.provisional = provisional
        """The provisional audit row's write when it runs alongside triage (None: already committed)."""
        self.services = services
        self.request_id = opened.request_id
        self.sink = sink
        self.sent = ""
        self.recorded = False
        self.created_at = opened.created_at
        self.timings = Timings()
        self.stage = StageRunner(services.metrics, self.timings)
        self.triage = Triage(Scope.IN_SCOPE, "not triaged")
        self.passages: tuple[Passage, ...] = ()
        self.best_relevance: float | None = None
        self.draft: Draft | None = None
        self.statements: tuple[Statement, ...] = ()
        self.verdicts: tuple[Verdict, ...] = ()
        self.model_started = time.perf_counter()
        """When the draft call started: the request's model deadline counts from here."""

    async def opened(self) -> None:
        """Wait until the provisional row is committed; AuditError (already counted) when it failed.

        Shielded: a cancelled request still waits for its provisional row before completing it.
        """
        if self.provisional is not None:
            await asyncio.shield(self.provisional)

    async def clean_up(self, draft: Draft) -> Outcome:
        """The cleanup stage: judge each claim by its verdict, then ``rewrite`` the failing ones."""
        policy = self.services.policy.thresholds.cleanup
        judged = await anyio.to_thread.run_sync(
            judge_claims, self.statements, self.verdicts, self.passages, policy
        )
        cleaning = Cleanup(draft.answer, self.statements, judged, policy)
        await self.rewrite(cleaning)
        return cleaning.outcome()

    async def rewrite(self, cleaning: Cleanup) -> None:
        """Rewrite the failing claims concurrently; release each sentence as soon as it is final.

        Bounded: at most ``max_rewrites_per_request`` rewrites may call the model (the rest get only
        the rewrite to their quoted source, which needs none), and all of them must finish within what
        is left of the request's model deadline (``upstream_deadline`` from the start of the draft); a
        rewrite still running then is cancelled and its claim removed.
        """
        await self.release(*cleaning.ready())
        wanted = cleaning.start_rewrites()
        rewriter = self.services.rewriter
        cap = self.services.settings.max_rewrites_per_request if rewriter.uses_model else len(wanted)
        tasks = {i: asyncio.create_task(self._rewrite(cleaning.results[i])) for i in wanted[:cap]}
        note = f"not rewritten by the model: the per-request cap of {cap} model rewrites was reached"
        for index in wanted[cap:]:
            self.services.metrics.rewrites_skipped.labels(reason="cap").inc()
            tasks[index] = asyncio.create_task(self._rewrite(cleaning.results[index], note))
        deadline = self.services.settings.upstream_deadline
        resolved: set[int] = set()
        try:  # each call ends by the request deadline (LimitedModel); this is the backstop
            budget = deadline + REWRITE_GRACE_SECONDS - (time.perf_counter() - self.model_started)
            with anyio.move_on_after(budget):
                for index, task in tasks.items():
                    cleaning.resolve(index, await task)
                    resolved.add(index)
                    await self.release(*cleaning.ready())
            for index, task in tasks.items():
                if index in resolved:
                    continue
                if task.done() and not task.cancelled():
                    cleaning.resolve(index, task.result())
                    continue
                reason = f"not rewritten: the request's {deadline:g}s model deadline passed"
                self._skip(cleaning, index, "deadline", reason)
        finally:
            for task in tasks.values():
                task.cancel()

    def _skip(self, cleaning: Cleanup, index: int, why: str, reason: str) -> None:
        failed = cleaning.results[index]
        cleaning.resolve(index, replace(failed, reason=f"{reason}; {failed.reason}"))
        self.services.metrics.rewrites_skipped.labels(reason=why).inc()

    async def _rewrite(self, failed: ClaimResult, capped: str | None = None) -> ClaimResult:
        """One claim's rewrite (without a model call when ``capped`` says why). A crash removes that
        claim (counted, logged), never the stream's integrity."""
        try:
            result = await self.services.rewriter.rewrite(
                failed, self.passages, self.request, use_model=capped is None
            )
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
        return replace(result, reason=f"{capped}; {result.reason}") if capped else result

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
        signs = tuple(e.text for e in self.triage.evidence) if emergency else ()
        message = self.services.messages.refusal(
            reason, rule=rule, deferred=deferred, recognised=recognised, signs=signs
        )
        outcome = Outcome("", self.statements, (), True, reason, detail)
        return await self.finish(outcome, refusal_message=message)

    async def fail(self, error: StageError) -> PipelineResult:
        """Refuse the request whose stage failed (already named and counted by the runner); a failed
        draft is counted now by its type, before anything else can fail."""
        count_draft_failure(error, self.services.metrics)
        reason = refusal_reason(error)
        message = self.services.messages.refusal(reason, rule=None)
        outcome = Outcome("", self.statements, (), True, reason, f"{type(error).__name__}: {error}")
        return await self.finish(outcome, refusal_message=message, error=error)

    async def interrupted(self, label: str) -> None:
        """Complete the audit row of a run stopped from outside; what was sent is what is recorded.

        Never raises: the cancellation that brought us here is what the caller re-raises.
        """
        detail = f"the request was interrupted ({label}) after {len(self.sent)} characters were sent"
        outcome = Outcome(self.sent, self.statements, (), False, None, detail)
        try:
            await self._record(outcome, unbadged(outcome, self.passages), None, label, blocking=True)
        except Exception as err:  # counted and logged by the runner and record(); nothing more to do
            log.error("interrupted_record_failed", request_id=self.request_id, error=type(err).__name__)

    async def finish(
        self, outcome: Outcome, refusal_message: str | None = None, error: StageError | None = None
    ) -> PipelineResult:
        """Badge the outcome, hand the sink what it has not had, and record it.

        Fails closed: an answer whose badging fails is refused instead (no text leaves without its
        badges); a refusal keeps its reason (an emergency stays an emergency) with an unbadged report.
        """
        if refusal_message is not None:
            outcome = outcome.with_answer(refusal_message)
        outcome = outcome.with_declined(_notes(self.triage, self.services))
        if error is not None:  # a failed stage's refusal carries no claim: nothing to badge
            report = unbadged(outcome, self.passages)
        else:
            try:
                report = await self.stage(BADGE, outcome, self.passages, self.services)
            except StageError as err:
                if not outcome.refused:
                    return await self.fail(err)
                report, error = unbadged(outcome, self.passages), err
        await self._flush(outcome.answer)
        return await self._record(outcome, report, error, None)

    async def _record(
        self,
        outcome: Outcome,
        report: TrustReport,
        error: StageError | None,
        interruption: str | None,
        *,
        blocking: bool = False,
    ) -> PipelineResult:
        await self.opened()  # the final record comes after the provisional one (AuditError: no answer)
        self.recorded = True
        self.timings.total = time.perf_counter() - self.timings.started
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
            interruption=interruption,
            sent=self.sent,
        )
        await self.stage(RECORD, result, self.services, blocking=blocking)
        return result


TRIAGE = Stage("triage", triage)
RETRIEVE = Stage("retrieve", retrieve)
DRAFT = Stage("draft", _draft)
SPLIT = Stage("split", _split)
VERIFY = Stage("verify", verify)
CLEANUP = Stage("cleanup", _Run.clean_up)
BADGE = Stage("badge", _badge)
RECORD = Stage("record", record, failure=AuditError)
"""The stages of a chat request, in order (``answer`` wires them)."""
