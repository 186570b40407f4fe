"""Delivery of a streamed answer: its text written ahead to the audit row, and its final state.

A streamed answer leaves the gateway piece by piece, so "the record is committed before the answer
leaves" is kept piece by piece (write-ahead):

1. the provisional row (``incomplete``) is committed before the headers (``run.open_request``);
2. before each released piece leaves, the row is committed holding everything sent so far plus that
   piece (``Delivery.ahead``: outcome and ``status`` ``delivering``, the text in ``sent`` and in the
   ``answer`` column, sealed like the rest when an audit key is configured); one write per release,
   so sentences released together share it;
3. the whole record (verdicts, trust, the rest of the text such as a refusal's note), still
   ``delivering``, before the final chunk (``record(..., delivering=True)``, the run's record stage);
4. the final outcome (``answered``, ``rewritten``, ``ended_early``, ...) only after the final chunk
   and ``[DONE]`` were written to the connection (``Delivery.delivered``), or ``client_disconnected``
   when they were not (``Delivery.disconnected``).

When a write fails (AuditError) nothing more is sent: the row holds exactly the text that was sent,
and the HTTP layer ends the stream with its ``audit_unavailable`` error event. A process killed at any
point leaves ``incomplete`` (nothing was sent) or ``delivering`` (``sent`` holds every piece that may
have left; the last may not have arrived; with ``trust`` present the answer was complete and its final
chunk was being sent).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncGenerator
from dataclasses import replace
from typing import TYPE_CHECKING

import anyio
import msgspec
import structlog

from gateway.audit.record import DELIVERING, encode_record, scrub
from gateway.audit.trail import AuditTrail
from gateway.domain import ChatRequest
from gateway.errors import AuditError
from gateway.pipeline.recording import LOG_EVENT, provisional_record, record
from gateway.pipeline.result import PipelineResult, StreamItem
from gateway.pipeline.run import OpenedRequest, answer
from gateway.vocabulary import AuditOperation, RequestOutcome, StageName

if TYPE_CHECKING:
    from gateway.services import AnswerParts

log = structlog.get_logger("gateway.request")


class Delivery:
    """The audit side of one streamed answer: its text written ahead, then its final state.

    - ``ahead`` commits the row, before a piece leaves, with everything sent so far plus that piece
      (outcome and ``status`` ``delivering``, the text in ``sent`` and the ``answer`` column; sealed
      like the rest when an audit key is configured). When that fails (AuditError, counted as
      ``gateway_audit_errors_total{operation="deliver"}`` and logged) the piece is not sent, nor
      anything after it: the row holds exactly what was sent.
    - ``record(..., delivering=True)`` (the run's record stage) commits the whole record, still
      ``delivering``, before the final chunk.
    - ``delivered`` writes the final outcome once the final chunk and ``[DONE]`` were written to the
      connection; ``disconnected`` writes ``client_disconnected`` when they were not.

    ``handed`` is the text the HTTP layer was given so far: what an interrupted row records as sent.
    """

    def __init__(
        self, request_id: str, created_at: dt.datetime, request: ChatRequest, trail: AuditTrail
    ) -> None:
        self.trail = trail
        self.request_id = request_id
        self.handed = ""
        self.committed = ""
        """The text the row held at its last write-ahead."""
        self._row, self._record = provisional_record(request_id, created_at, request, trail)

    async def ahead(self, text: str) -> None:
        """Commit the row holding ``text`` (all that will have been sent) before the last piece of it
        leaves; AuditError (counted, logged) when it cannot: then that piece must not be sent."""
        row = {**self._row, "outcome": DELIVERING, "answer": scrub(text)}
        record = msgspec.structs.replace(self._record, status=DELIVERING, sent=text)
        try:
            await self.trail.store.write(row, encode_record(record))
        except Exception as err:
            self._failed(err)
            if isinstance(err, AuditError):
                raise
            raise AuditError(f"cannot write the audit record: {type(err).__name__}: {err}") from err
        self.committed = text

    def _failed(self, err: Exception) -> None:
        metrics = self.trail.metrics
        metrics.audit_errors.labels(operation=AuditOperation.DELIVER).inc()
        metrics.requests.labels(outcome=RequestOutcome.ERROR).inc()
        metrics.stage_errors.labels(stage=StageName.RECORD).inc()
        log.error(
            LOG_EVENT,
            request_id=self.request_id,
            outcome=RequestOutcome.ERROR,
            stream=True,
            error_type=type(err).__name__,
            error_stage=StageName.RECORD,
            sent_chars=len(self.committed),
            detail="the streamed text could not be written ahead; the stream stops here",
        )

    async def delivered(self, result: PipelineResult) -> None:
        """The final chunk and ``[DONE]`` were written: the final outcome, counted and logged. A failure
        is counted and logged by ``record``; the row then stays ``delivering`` (not confirmed)."""
        try:
            await record(result, self.trail)
        except AuditError:
            return

    async def disconnected(self, result: PipelineResult) -> None:
        """The answer was complete but its final chunk or ``[DONE]`` was not written (the client went
        away): ``client_disconnected`` with what was handed over. Writes on the calling thread (see
        ``record``); never raises."""
        outcome = result.outcome.with_answer(self.handed)  # the answer as far as it was handed over
        stopped = replace(
            result, interruption=RequestOutcome.CLIENT_DISCONNECTED, sent=self.handed, outcome=outcome
        )
        try:
            await record(stopped, self.trail, blocking=True)
        except AuditError:
            return


async def stream_answer(
    request: ChatRequest, parts: AnswerParts, opened: OpenedRequest
) -> AsyncGenerator[StreamItem, None]:
    """Yields the patient's text as it is verified (never anything later retracted), the model's tool
    calls (fragments, recorded with the whole record before they leave), then the result.

    Every piece was committed to the request's audit row before it is yielded, and the whole record
    (outcome ``delivering``) before the result; when a write fails the iterator raises AuditError and
    nothing more is yielded (``Delivery``). The consumer asks for the next item
    after the result only once everything it sends for it (the final chunk, ``[DONE]``) was written to
    the connection: that resumption records the final outcome. Closing the iterator instead (the
    client went away) records ``client_disconnected``: mid-answer by cancelling the run, which records
    itself; after the result, here. Both are shielded from the cancellation.
    """
    delivery = Delivery(opened.request_id, opened.created_at, request, parts.ending.trail)
    queue: asyncio.Queue[StreamItem | Exception] = asyncio.Queue()
    produced: list[PipelineResult] = []

    async def produce() -> None:
        try:
            result = await answer(
                request,
                parts,
                sink=queue.put,
                opened=opened,
                interruption=RequestOutcome.CLIENT_DISCONNECTED,
                delivery=delivery,
            )
            produced.append(result)
            await queue.put(result)
        except Exception as err:  # handed to the consumer, which re-raises it
            await queue.put(err)

    task = asyncio.create_task(produce())
    confirmed = False
    try:
        while True:
            item = await queue.get()
            if isinstance(item, Exception):
                raise item
            if isinstance(item, str):
                delivery.handed += item
                yield item
                continue
            if not isinstance(item, PipelineResult):  # a tool-call fragment
                yield item
                continue
            yield item
            with anyio.CancelScope(shield=True):  # the last chunk was written: a late cancel changes nothing
                await delivery.delivered(item)
            confirmed = True
            return
    finally:
        if not task.done():
            task.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.wait({task})
        if produced and not confirmed:  # the answer was complete, its last chunk never confirmed
            with anyio.CancelScope(shield=True):
                await delivery.disconnected(produced[0])
