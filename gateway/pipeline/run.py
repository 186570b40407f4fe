"""One request, top to bottom. The HTTP layer, the CLI and the tests all call ``answer``.

The draft streams in (``Upstream.stream``: the model's urgency read, then one complete sentence at a
time) and each sentence is split, verified, judged and, when it fails, rewritten to its source at
once, while the model writes the next (``_Run.draft_and_check``). A sentence is released as soon as it
is final and the answer, were it to end there, would not be refused; the streaming and the
non-streaming client get the same released text for the same draft. With a ``sink``, ``answer`` hands
each released sentence over while it runs, then the rest (a refusal, the notes) at the end. What is
handed over is never retracted: the pieces always concatenate to ``PipelineResult.answer``. When the
answer must stop after sentences were released (a safety-critical failure, too many removals, a fault
of the stream), it ends with a visible note and ``Outcome.ended_early`` (docs/safety.md).
``gateway.pipeline.delivery.stream_answer`` wraps this as an async iterator for the HTTP layer.

Exactly one audit row per request: it is written provisionally, and the run completes it whatever
happens, including when it is cancelled (a streaming client that went away, a server stop): the
recording is shielded from the cancellation and names the interruption as the outcome. The
provisional row is committed before anything leaves the gateway: before the model is asked, before any
text is sent, and before the final record. ``answer`` writes it while triage runs (triage is local
and sends nothing; the write's fsync and the question's encoding overlap); the streaming handler
writes it first with ``open_request``, since its headers go out before the result exists. An
``AuditError`` from it means nothing was sent: the answer is refused with a 503.

A streamed answer's row is written ahead of its text (``gateway.pipeline.delivery``): each released
piece is committed to the row before it is handed to the sink, the whole record before the final
chunk, and the final outcome only after the final chunk and ``[DONE]`` were written. When a write
fails, nothing more is sent.

Every stage, triage to record, runs through one ``StageRunner`` (``gateway.pipeline.stages``): it times
the stage, names it on a failure and counts it; ``answer`` turns a failed stage into a refusal.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import Protocol

import anyio
import structlog

from gateway.audit.trail import AuditTrail
from gateway.claims.splitter import DraftBounds
from gateway.domain import (
    ChatRequest,
    Outcome,
    RefusalReason,
    Scope,
    TrustReport,
)
from gateway.drafting.contract import DraftEnd, DraftSentence, UrgencyRead, assemble
from gateway.errors import AuditError, NothingToQuote, StageError
from gateway.metrics import count_draft_failure
from gateway.models.limits import request_deadline
from gateway.pipeline.recording import record, record_start
from gateway.pipeline.result import PipelineResult
from gateway.pipeline.stages import Stage, StageRunner, refusal_reason
from gateway.pipeline.state import RequestState
from gateway.pipeline.streamed import next_part
from gateway.retrieval.retrieve import Retriever
from gateway.services import AnswerParts, RunParts
from gateway.tool_calls import ToolCallDelta
from gateway.tools.passages import no_vetted_passage, returned
from gateway.triage import model_read as model_triage
from gateway.triage.outcome import answerable_request, deferred_questions
from gateway.triage.triager import Triager
from gateway.vocabulary import RequestOutcome, StageName

log = structlog.get_logger("gateway.pipeline")

TextSink = Callable[[str | ToolCallDelta], Awaitable[None]]
"""Receives the patient's verified text piece by piece as the pipeline runs, then any tool-call fragments."""


class WriteAhead(Protocol):
    """A stream's audit side (``gateway.pipeline.delivery.Delivery``), as the run uses it."""

    handed: str
    """The text the HTTP layer was given so far: what an interrupted row records as sent."""

    async def ahead(self, text: str) -> None:
        """Commit the row holding ``text`` before its last piece leaves; AuditError when it cannot."""
        ...


def new_request_id() -> str:
    return f"req_{uuid.uuid4().hex}"


@dataclass(frozen=True)
class OpenedRequest:
    """A request's identity; its provisional audit row is written (``open_request``) or being written."""

    request_id: str
    created_at: dt.datetime


def new_opened(request_id: str | None = None) -> OpenedRequest:
    return OpenedRequest(request_id or new_request_id(), dt.datetime.now(dt.UTC))


async def open_request(
    request: ChatRequest, trail: AuditTrail, request_id: str | None = None
) -> OpenedRequest:
    """Write the request's provisional audit row; AuditError (counted) when the store cannot be written."""
    opened = new_opened(request_id)
    await record_start(opened.request_id, opened.created_at, request, trail)
    return opened


async def answer(
    request: ChatRequest,
    parts: AnswerParts,
    request_id: str | None = None,
    sink: TextSink | None = None,
    *,
    opened: OpenedRequest | None = None,
    interruption: RequestOutcome = RequestOutcome.CANCELLED,
    delivery: WriteAhead | None = None,
) -> PipelineResult:
    """Triage, retrieve, draft, split, verify, clean up, badge and record one chat request.

    Without ``opened`` (a request whose provisional row is already written), the provisional row is
    written while triage runs, and committed before anything leaves the gateway.

    Never raises for a run-time failure of a stage: the patient gets a safe refusal naming the reason,
    and the error is counted and audited. Raises AuditError when the audit row cannot be written
    (provisionally, before anything is sent, or at the end: then the caller must not send the
    answer). When cancelled, completes the audit row with outcome ``interruption`` and re-raises the
    cancellation. With ``delivery`` (a stream), each piece handed to ``sink`` is written ahead to the
    row first, and the final record is written as ``delivering`` (``Delivery`` completes it).
    """
    provisional = None
    if opened is None:
        opened = new_opened(request_id)
        provisional = asyncio.ensure_future(
            record_start(opened.request_id, opened.created_at, request, parts.run.trail)
        )
    run = _Run(request, parts.run, opened, sink, provisional, delivery)
    try:
        with request_deadline(parts.deadline):
            return await _answer(run, parts.triager, parts.retriever)
    except anyio.get_cancelled_exc_class():
        if not run.state.recorded:
            with anyio.CancelScope(shield=True):
                await run.interrupted(interruption)
        raise


async def _answer(run: _Run, triager: Triager, retriever: Retriever) -> PipelineResult:
    stage, state, parts = run.stage, run.state, run.parts
    request = state.request
    try:
        triaged = await stage(Stage(StageName.TRIAGE, triager.run), request)  # built at start-up
        state.triage = parts.tools.lift(triaged, request)
        await run.opened()  # the provisional row is committed before the model is asked or text sent
        if state.triage.scope is not Scope.IN_SCOPE:
            return await run.refuse(RefusalReason(state.triage.scope.value), state.triage.reason)

        question = " ".join(state.triage.answerable) or request.question
        retrieve = Stage(StageName.RETRIEVE, retriever.run)  # built at start-up
        retrieval = await stage(retrieve, question)
        state.passages, state.best_relevance = retrieval.passages, retrieval.best_relevance
        if (offered := parts.tools.offered(retrieval, request)) is None:
            return await run.refuse(RefusalReason.NO_RELEVANT_CONTEXT, "no vetted passage is relevant enough")
        state.passages = offered

        state.model_started = time.perf_counter()  # the request's model deadline counts from here
        outcome = await run.draft_and_check(answerable_request(request, state.triage))
    except StageError as err:  # named and counted by the runner; fail closed: refused, never sent
        return await run.fail(err)

    if outcome is None:  # the model's own read raised the request to an emergency (model_triage)
        return await run.refuse(RefusalReason.EMERGENCY, state.triage.reason)
    if not state.passages and not state.tools:  # it reached the model for a tool call only, and made none
        outcome = no_vetted_passage(outcome, state.triage)
    if outcome.refused and outcome.refusal_reason is not None:
        return await run.finish(outcome, refusal_message=parts.messages.refusal(outcome.refusal_reason))
    return await run.finish(outcome)


class _Run:
    """One request's run: its state (``RequestState``) through the stages, into a recorded PipelineResult."""

    def __init__(
        self,
        request: ChatRequest,
        parts: RunParts,
        opened: OpenedRequest,
        sink: TextSink | None = None,
        provisional: asyncio.Future[None] | None = None,
        delivery: WriteAhead | None = None,
    ) -> None:
        self.delivery = delivery
        """A stream's audit side: text is written ahead to the row before the sink gets it."""
        self.provisional = provisional
        """The provisional audit row's write when it runs alongside triage (None: already committed)."""
        self.parts = parts
        self.sink = sink
        calls = parts.tools.calls(request)
        self.state = RequestState(request, opened.request_id, opened.created_at, calls, parts.drafter.name)
        self.stage = StageRunner(parts.metrics, self.state.timings)

    async def opened(self) -> None:
        """Wait until the provisional row is committed; AuditError (already counted) when it failed.
        Shielded: a cancelled request still waits for its provisional row before completing it."""
        if self.provisional is not None:
            await asyncio.shield(self.provisional)

    async def draft_and_check(self, request: ChatRequest) -> Outcome | None:
        """Read the draft as it streams and check each sentence the moment it is complete.

        Per sentence: split (bounded), verify, judge, and a failing claim rewritten at once (to its
        source: no model call; a model rewrite, where the policy asks for one, runs alongside and holds
        only the sentences after it); then release what is final. Stops the model early on a refusal
        no later sentence can undo (``Cleanup.stop_reason``, an instruction-like sentence). Returns the
        outcome, or None when the model's urgency read raised the request to an emergency. A failing
        stage raises StageError (named, counted); what was released stays released (``finish``).
        """
        parts, cleaner = self.parts, self.parts.cleaner
        state = self.state
        split = Stage(StageName.SPLIT, parts.splitter.run)  # the components: built at start-up
        verify = Stage(StageName.VERIFY, parts.checker.run)
        clean = Stage(StageName.CLEANUP, cleaner.run)
        bounds = DraftBounds()
        release, attribute = self.release, state.tools.attributed
        cleanup = cleaner.start(
            state.request, state.request_id, state.passages, release, attribute, state.model_started
        )
        cleaning = state.cleaning = cleanup.cleaning
        sentences: list[DraftSentence] = []
        answer = ""
        try:
            async with aclosing(parts.drafter.stream(request, state.passages)) as stream:
                while (part := await self.stage(DRAFT, stream, request)) is not None:
                    if isinstance(part, UrgencyRead):
                        state.urgency = part
                        state.draft = assemble(sentences, "", 0.0, part)
                        if model_triage.raises_emergency(part, state.triage):
                            state.triage = model_triage.model_emergency(part, state.triage)
                            return None
                        continue
                    if isinstance(part, ToolCallDelta):  # outside the contract: released after the text
                        state.tools.add(part)
                        continue
                    if isinstance(part, DraftEnd):
                        state.draft = assemble(sentences, part.raw, part.seconds, state.urgency)
                        break
                    sentences.append(part)
                    state.draft = assemble(sentences, "", 0.0, state.urgency)
                    offset = len(answer) + 1 if answer else 0
                    answer = f"{answer} {part.cited}" if answer else part.cited
                    first_index = state.statements[-1].sentence_index + 1 if state.statements else 0
                    reply = await self.stage(split, part, offset, first_index, bounds)
                    state.statements += reply.statements
                    if reply.instruction:  # a sentence shown unverified reads like an instruction
                        detail = "the draft contains a sentence that reads like an instruction to a model"
                        return self._stopped(RefusalReason.SAFETY_CRITICAL_FAILED, detail)
                    claims = [st for st in reply.statements if st.is_claim]
                    verdicts = await self.stage(verify, claims, state.passages)
                    state.verdicts += tuple(verdicts)
                    await self.stage(clean, cleanup, answer, reply.statements, verdicts)
                    await self.release(*cleaning.ready())  # outside the stage: its write-ahead is no check
                    stop = cleaning.stop_reason()
                    if stop is not None:
                        return self._stopped(*stop)
            await cleaner.finish(cleanup)
            cleaning.removals_refuse = not state.tools  # a reply that calls tools: failing claims removed
            await self.release(*cleaning.ready())
            stop = cleaning.stop_reason()
            return self._stopped(*stop) if stop is not None else cleaning.outcome()
        finally:
            cleaner.cancel(cleanup)

    def _stopped(self, reason: RefusalReason, detail: str) -> Outcome:
        """The answer refused from here on (``finish`` ends it with a note when sentences were released)."""
        claims = tuple(self.state.cleaning.results) if self.state.cleaning is not None else ()
        return Outcome("", self.state.statements, claims, True, reason, detail)

    async def release(self, *pieces: str) -> None:
        """Hand verified sentences to the sink; the first stamps the time to the first verified token.

        With a delivery (a stream) the row is committed holding them first, in one write; an
        AuditError from it propagates and nothing of them is handed over.
        """
        if self.sink is None or not pieces:
            return
        if self.delivery is not None:
            await self.delivery.ahead(self.state.sent + "".join(pieces))
        for piece in pieces:
            if self.state.timings.first_token is None:
                self.state.timings.first_token = time.perf_counter() - self.state.timings.started
                self.parts.metrics.first_token_latency.observe(self.state.timings.first_token)
            self.state.sent += piece
            await self.sink(piece)

    def _rest(self, answer_text: str) -> str:
        """What the sink has not had yet; released text is always a prefix of the final answer."""
        if self.sink is None:
            return ""
        if not answer_text.startswith(self.state.sent):
            log.error("stream_diverged", request_id=self.state.request_id, sent=len(self.state.sent))
            return ""
        return answer_text[len(self.state.sent) :]

    async def refuse(self, reason: RefusalReason, detail: str) -> PipelineResult:
        emergency = reason is RefusalReason.EMERGENCY
        rule = self.state.triage.rule if emergency else None
        deferred = deferred_questions(self.state.triage) if emergency else ()
        recognised = self.state.triage.recognised if emergency else None
        signs = tuple(e.text for e in self.state.triage.evidence) if emergency else ()
        message = self.parts.messages.refusal(
            reason, rule=rule, deferred=deferred, recognised=recognised, signs=signs
        )
        outcome = Outcome("", self.state.statements, (), True, reason, detail)
        return await self.finish(outcome, refusal_message=message)

    async def fail(self, error: StageError) -> PipelineResult:
        """Refuse the request whose stage failed (already named and counted by the runner); a failed
        draft is counted now by its type, before anything else can fail."""
        if isinstance(error, NothingToQuote):  # the extractive responder's refusal, not a failure
            return await self.refuse(RefusalReason.NOTHING_TO_QUOTE, str(error))
        count_draft_failure(error, self.parts.metrics)
        reason = refusal_reason(error)
        message = self.parts.messages.refusal(reason, rule=None)
        outcome = Outcome("", self.state.statements, (), True, reason, f"{type(error).__name__}: {error}")
        return await self.finish(outcome, refusal_message=message, error=error)

    async def interrupted(self, label: RequestOutcome) -> None:
        """Complete the audit row of a run stopped from outside; what was sent is what is recorded.

        Never raises: the cancellation that brought us here is what the caller re-raises. A stream
        records what its consumer handed to the connection (``Delivery.handed``).
        """
        if self.delivery is not None:
            self.state.sent = self.delivery.handed
        detail = f"the request was interrupted ({label}) after {len(self.state.sent)} characters were sent"
        outcome = Outcome(self.state.sent, self.state.statements, (), False, None, detail)
        try:
            await self._record(
                outcome, self.parts.badger.unbadged(outcome, self.state.passages), None, label, blocking=True
            )
        except Exception as err:  # counted and logged by the runner and record(); nothing more to do
            log.error("interrupted_record_failed", request_id=self.state.request_id, error=type(err).__name__)

    async def finish(
        self, outcome: Outcome, refusal_message: str | None = None, error: StageError | None = None
    ) -> PipelineResult:
        """Badge the outcome, hand the sink what it has not had, and record it.

        A refusal that comes after sentences were released ends the answer instead: the released text
        stays, followed by a visible note (the emergency message, or ``ended_early``), never silence.
        Fails closed: an answer whose badging fails is refused (or ended) instead (no text leaves
        without its badges); a refusal keeps its reason (an emergency stays an emergency) with an
        unbadged report.
        """
        state = self.state
        cleaning = state.cleaning
        released = cleaning.text if cleaning is not None else ""
        if outcome.refused and outcome.refusal_reason is not None and released and cleaning is not None:
            reason = outcome.refusal_reason
            note = refusal_message if reason is RefusalReason.EMERGENCY else None
            note = note or self.parts.messages.render("ended_early", reason=reason.value)
            outcome = cleaning.ended(reason, outcome.refusal_detail, note)
            refusal_message = None
            log.warning("answer_ended_early", request_id=state.request_id, reason=reason.value)
        if refusal_message is not None:
            outcome = outcome.with_answer(refusal_message)
        outcome = outcome.with_declined(self.parts.notes.run(state.triage))
        if not outcome.refused and model_triage.raises_urgent(state.urgency, state.triage):
            outcome = outcome.with_declined(self.parts.messages.render("model_urgent"))
        if error is not None and not outcome.ended_early:  # a failed stage's refusal: nothing to badge
            report = self.parts.badger.unbadged(outcome, state.passages)
        else:
            try:
                badge = Stage(StageName.BADGE, self.parts.badger.run)  # built at start-up
                report = await self.stage(badge, outcome, state.passages)
            except StageError as err:
                if not outcome.refused and not outcome.ended_early:
                    return await self.fail(err)
                report, error = self.parts.badger.unbadged(outcome, state.passages), err
        rest = self._rest(outcome.answer)
        state.sent += rest
        state.tools.hand_over(returned(outcome, error))
        result = await self._record(outcome, report, error, None)  # a stream's rest and calls are in it
        if rest and self.sink is not None:
            await self.sink(rest)
        await state.tools.send(self.sink)  # after the verified text: the reply is complete by then
        return result

    async def _record(
        self,
        outcome: Outcome,
        report: TrustReport,
        error: StageError | None,
        interruption: RequestOutcome | None,
        *,
        blocking: bool = False,
    ) -> PipelineResult:
        await self.opened()  # the final record comes after the provisional one (AuditError: no answer)
        delivering = self.delivery is not None and interruption is None
        self.state.recorded = not delivering
        self.state.timings.total = time.perf_counter() - self.state.timings.started
        result = self.state.result(outcome, report, error, interruption)
        self.parts.tools.count(self.state.tools)
        trail = self.parts.trail
        await self.stage(RECORD, result, trail, blocking=blocking, delivering=delivering)
        return result


DRAFT = Stage(StageName.DRAFT, next_part)
RECORD = Stage(StageName.RECORD, record, failure=AuditError)
"""The stages of a chat request run by the pipeline itself, in order (``answer`` wires them; triage,
retrieve, split, verify, cleanup and badge are components of the services, built at start-up)."""
