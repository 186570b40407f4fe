"""How a request's run ends: refused, failed, finished or interrupted, and recorded.

Exactly one audit row per request: it is written provisionally (``run.answer``, ``run.open_request``),
and the ending completes it whatever happens, including when the run is cancelled (a streaming client
that went away, a server stop): ``interrupted`` records what was sent, shielded from the cancellation,
and names the interruption as the outcome. The final record comes after the provisional one is
committed; an ``AuditError`` from either means the answer must not be sent.

When the answer must stop after sentences were released (a safety-critical failure, too many removals,
a fault of the stream), ``finish`` ends it with a visible note and ``Outcome.ended_early``
(docs/safety.md).
"""

from __future__ import annotations

import asyncio
import time

import structlog

from gateway.domain import Outcome, RefusalReason, TrustReport
from gateway.errors import AuditError, NothingToQuote, StageError
from gateway.metrics import count_draft_failure
from gateway.pipeline.outlet import Outlet
from gateway.pipeline.recording import record
from gateway.pipeline.result import PipelineResult
from gateway.pipeline.stages import Stage, StageRunner, refusal_reason
from gateway.pipeline.state import RequestState
from gateway.services import EndingParts
from gateway.tools.passages import returned
from gateway.triage import model_read as model_triage
from gateway.triage.outcome import deferred_questions
from gateway.vocabulary import RequestOutcome, StageName

log = structlog.get_logger("gateway.pipeline")

RECORD = Stage(StageName.RECORD, record, failure=AuditError)
"""The record stage, run by the pipeline itself (the audit trail is its argument, not a component)."""


class Ending:
    """Badges, hands over and records one request's outcome, whichever way its run ends."""

    def __init__(
        self,
        state: RequestState,
        stage: StageRunner,
        parts: EndingParts,
        outlet: Outlet,
        provisional: asyncio.Future[None] | None = None,
    ) -> None:
        self.state = state
        self.stage = stage
        self.parts = parts
        self.outlet = outlet
        self.provisional = provisional
        """The provisional audit row's write when it runs alongside triage (None: already committed)."""

    async def opened(self) -> None:
        """Wait until the provisional row is committed; AuditError (already counted) when it failed.
        Shielded: a cancelled request still waits for its provisional row before completing it."""
        if self.provisional is not None:
            await asyncio.shield(self.provisional)

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
        self.state.sent = self.outlet.handed()
        detail = f"the request was interrupted ({label}) after {len(self.state.sent)} characters were sent"
        outcome = Outcome(self.state.sent, self.state.statements, (), False, None, detail)
        try:
            report = self.parts.badger.unbadged(outcome, self.state.passages)
            await self._record(outcome, report, None, label, blocking=True)
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
        rest = self.outlet.take_rest(outcome.answer)
        state.tools.hand_over(returned(outcome, error))
        result = await self._record(outcome, report, error, None)  # a stream's rest and calls are in it
        await self.outlet.complete(rest)
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
        delivering = self.outlet.delivery is not None and interruption is None  # Delivery completes it
        self.state.recorded = not delivering
        self.state.timings.total = time.perf_counter() - self.state.timings.started
        result = self.state.result(outcome, report, error, interruption)
        self.parts.tools.count(self.state.tools)
        await self.stage(RECORD, result, self.parts.trail, blocking=blocking, delivering=delivering)
        return result
