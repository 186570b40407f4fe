"""What one chat request has accumulated so far, stage by stage (``run.answer`` and the pieces it
builds fill it in).

Typed and in one place, so that what a stage may read and what the audit record holds can be read off
one class: ``result`` turns it, with the outcome and its trust report, into the ``PipelineResult``.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field

from gateway.cleanup.stage import Cleanup
from gateway.domain import (
    ChatRequest,
    Draft,
    Outcome,
    Passage,
    Scope,
    Statement,
    Triage,
    TrustReport,
    Verdict,
)
from gateway.drafting.contract import UrgencyRead
from gateway.errors import StageError
from gateway.pipeline.result import PipelineResult, Timings
from gateway.tools.passages import ToolCalls
from gateway.vocabulary import RequestOutcome


def _not_triaged() -> Triage:
    return Triage(Scope.IN_SCOPE, "not triaged")


@dataclass
class RequestState:
    """One request's state: its identity, what each stage produced, and what was sent."""

    request: ChatRequest
    request_id: str
    created_at: dt.datetime
    tools: ToolCalls
    """The model's tool calls and the conversation's untrusted tool results."""
    upstream: str
    """The name of the request's drafter's upstream (recorded and logged)."""
    timings: Timings = field(default_factory=Timings)
    triage: Triage = field(default_factory=_not_triaged)
    passages: tuple[Passage, ...] = ()
    best_relevance: float | None = None
    draft: Draft | None = None
    statements: tuple[Statement, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    model_started: float = field(default_factory=time.perf_counter)
    """When the draft call started: the request's model deadline counts from here."""
    cleaning: Cleanup | None = None
    """The streamed answer's cleanup once drafting started: its ``text`` is what was released."""
    urgency: UrgencyRead | None = None
    """The model's urgency read, once it came (``model_triage``)."""
    sent: str = ""
    """The text handed to the sink so far."""
    recorded: bool = False
    """The row holds the run's final state (a stream's ``delivering`` record is not final)."""

    def result(
        self,
        outcome: Outcome,
        report: TrustReport,
        error: StageError | None,
        interruption: RequestOutcome | None,
    ) -> PipelineResult:
        """The request's result as it stands, with its outcome and trust report."""
        return PipelineResult(
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
            tool_calls=self.tools.calls,
            tool_calls_returned=self.tools.returned,
            upstream=self.upstream,
        )
