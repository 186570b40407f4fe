"""One request, top to bottom. The HTTP layer, the CLI and the tests all call ``answer``.

``answer`` reads as the request's path: triage, retrieve, then the draft read as it streams, each
sentence checked and released the moment it is final (``draft_check.draft_and_check``, handing
sentences to the ``outlet.Outlet``), then badge and record (``ending.Ending``). With a ``sink``, the
patient gets each released sentence while the run goes, then the rest at the end.

Exactly one audit row per request (``ending``). The provisional row is committed before anything
leaves the gateway: before the model is asked, before any text is sent, and before the final record.
``answer`` writes it while triage runs (triage is local and sends nothing; the write's fsync and the
question's encoding overlap); the streaming handler writes it first with ``open_request``, since its
headers go out before the result exists. An ``AuditError`` from it means nothing was sent: the answer
is refused with a 503.

Every stage, triage to record, runs through one ``StageRunner`` (``gateway.pipeline.stages``): it times
the stage, names it on a failure and counts it; ``answer`` turns a failed stage into a refusal.
``gateway.pipeline.delivery.stream_answer`` wraps ``answer`` as an async iterator for the HTTP layer.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from dataclasses import dataclass

import anyio

from gateway.audit.trail import AuditTrail
from gateway.domain import ChatRequest, RefusalReason, Scope
from gateway.errors import StageError
from gateway.models.limits import request_deadline
from gateway.pipeline.draft_check import draft_and_check
from gateway.pipeline.ending import Ending
from gateway.pipeline.outlet import Outlet, TextSink, WriteAhead
from gateway.pipeline.recording import record_start
from gateway.pipeline.result import PipelineResult
from gateway.pipeline.stages import Stage, StageRunner
from gateway.pipeline.state import RequestState
from gateway.services import AnswerParts
from gateway.tools.passages import no_vetted_passage
from gateway.triage.outcome import answerable_request
from gateway.vocabulary import RequestOutcome, StageName


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
            record_start(opened.request_id, opened.created_at, request, parts.ending.trail)
        )
    calls = parts.ending.tools.calls(request)
    state = RequestState(request, opened.request_id, opened.created_at, calls, parts.draft.drafter.name)
    stage = StageRunner(parts.ending.metrics, state.timings)
    outlet = Outlet(state, parts.ending.metrics, sink, delivery)
    ending = Ending(state, stage, parts.ending, outlet, provisional)
    try:
        with request_deadline(parts.deadline):
            return await _answer(state, stage, parts, outlet, ending)
    except anyio.get_cancelled_exc_class():
        if not state.recorded:
            with anyio.CancelScope(shield=True):
                await ending.interrupted(interruption)
        raise


async def _answer(
    state: RequestState, stage: StageRunner, parts: AnswerParts, outlet: Outlet, ending: Ending
) -> PipelineResult:
    request = state.request
    try:
        triaged = await stage(Stage(StageName.TRIAGE, parts.triager.run), request)  # built at start-up
        state.triage = parts.ending.tools.lift(triaged, request)
        await ending.opened()  # the provisional row is committed before the model is asked or text sent
        if state.triage.scope is not Scope.IN_SCOPE:
            return await ending.refuse(RefusalReason(state.triage.scope.value), state.triage.reason)

        question = " ".join(state.triage.answerable) or request.question
        retrieve = Stage(StageName.RETRIEVE, parts.retriever.run)  # built at start-up
        retrieval = await stage(retrieve, question)
        state.passages, state.best_relevance = retrieval.passages, retrieval.best_relevance
        if (offered := parts.ending.tools.offered(retrieval, request)) is None:
            return await ending.refuse(
                RefusalReason.NO_RELEVANT_CONTEXT, "no vetted passage is relevant enough"
            )
        state.passages = offered

        state.model_started = time.perf_counter()  # the request's model deadline counts from here
        asked = answerable_request(request, state.triage)  # what the model is asked to answer
        outcome = await draft_and_check(asked, state, stage, parts.draft, outlet.release)
    except StageError as err:  # named and counted by the runner; fail closed: refused, never sent
        return await ending.fail(err)

    if outcome is None:  # the model's own read raised the request to an emergency (model_triage)
        return await ending.refuse(RefusalReason.EMERGENCY, state.triage.reason)
    if not state.passages and not state.tools:  # it reached the model for a tool call only, and made none
        outcome = no_vetted_passage(outcome, state.triage)
    if outcome.refused and outcome.refusal_reason is not None:
        return await ending.finish(
            outcome, refusal_message=parts.ending.messages.refusal(outcome.refusal_reason)
        )
    return await ending.finish(outcome)
