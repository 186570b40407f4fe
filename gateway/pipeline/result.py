"""What one run of the pipeline produced (``PipelineResult``) and how long each stage took (``Timings``).

Its own module so that ``run`` (which builds it) and ``record`` (which audits and counts it) both import
it downward.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field

from gateway.domain import ChatRequest, Draft, Outcome, Passage, Statement, Triage, TrustReport, Verdict
from gateway.errors import StageError
from gateway.tool_calls import ToolCall, ToolCallDelta
from gateway.vocabulary import RequestOutcome, StageName

_FIELDS: dict[StageName, str] = {
    StageName.TRIAGE: "triage",
    StageName.RETRIEVE: "retrieval",
    StageName.DRAFT: "upstream",
    StageName.VERIFY: "verification",
    StageName.BADGE: "badge",
    StageName.RECORD: "record",
}
"""The ``Timings`` field of each stage timed on its own."""

_COUNTED_WITH = {StageName.CLEANUP: StageName.VERIFY}
"""A stage whose time is counted under another's."""


@dataclass
class Timings:
    started: float = field(default_factory=time.perf_counter)
    triage: float = 0.0
    retrieval: float = 0.0
    upstream: float = 0.0
    verification: float = 0.0
    badge: float = 0.0
    total: float = 0.0
    """Seconds from the start to the trust report (badges included); the audit write comes after."""
    record: float = 0.0
    """Seconds to write the audit record (committed before the reply) and count the metrics."""
    first_token: float | None = None
    """Seconds from the start to the first verified text handed to a sink (streaming only)."""

    def add(self, stage: StageName, seconds: float) -> None:
        """Count a stage's run time (``StageRunner``). Verification is verify and cleanup together;
        splitting and rewrites are not reported on their own."""
        name = _FIELDS.get(_COUNTED_WITH.get(stage, stage))
        if name is not None:
            setattr(self, name, getattr(self, name) + seconds)

    def of(self, stage: StageName) -> float:
        """Seconds counted under a stage timed on its own (verify's include cleanup's); a stage not
        counted on its own (split, cleanup, rewrite) is refused."""
        if stage not in _FIELDS:
            raise ValueError(f"the {stage} stage is not timed on its own")
        return float(getattr(self, _FIELDS[stage]))

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
    interruption: RequestOutcome | None = None
    """``CLIENT_DISCONNECTED`` or ``CANCELLED`` when the run was stopped before it finished."""
    sent: str = ""
    """The text handed to the sink (streaming): what the client may have received."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The tool calls the model made, whole (audited and counted, never verified)."""
    tool_calls_returned: bool = False
    """They were handed to the client (``tools.passages.returned``): not with an emergency or a failure."""
    upstream: str = ""
    """The name of the upstream that drafted (or would have drafted) this request (recorded and logged)."""

    @property
    def answer(self) -> str:
        return self.outcome.answer


StreamItem = str | ToolCallDelta | PipelineResult
"""What a streamed run hands the HTTP layer: verified text, then tool-call fragments, then the result."""
