"""One request, top to bottom. The HTTP layer, the CLI and the tests all call ``answer``."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from dataclasses import dataclass, field

from gateway.domain import (
    ChatRequest,
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
from gateway.pipeline.cleanup import cleanup, judge_claims
from gateway.pipeline.record import record
from gateway.pipeline.retrieve import retrieve
from gateway.pipeline.split import split
from gateway.pipeline.triage import triage
from gateway.pipeline.verify import verify
from gateway.services import Services


@dataclass
class Timings:
    started: float = field(default_factory=time.perf_counter)
    retrieval: float = 0.0
    upstream: float = 0.0
    verification: float = 0.0
    total: float = 0.0

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


async def answer(request: ChatRequest, services: Services, request_id: str | None = None) -> PipelineResult:
    """Triage, retrieve, draft, split, verify, clean up, badge and record one chat request.

    Never raises for a run-time failure of a stage: the patient gets a safe refusal naming the reason,
    and the error is counted and audited.
    """
    policy = services.policy
    run = _Run(request, services, request_id or f"req_{uuid.uuid4().hex}")

    run.triage = triage(request.question, policy.context)
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
            run.draft = await services.upstream.draft(request, run.passages)
        finally:
            run.timings.upstream = time.perf_counter() - started
        run.statements = tuple(split(run.draft))
        claims = [s for s in run.statements if s.is_claim]

        stage = "verify"
        started = time.perf_counter()
        run.verdicts = tuple(await verify(claims, run.passages, services.verifier))
        stage = "cleanup"
        results = judge_claims(run.statements, run.verdicts, policy.thresholds.cleanup)
        results = await services.rewriter.rewrite_failed(results, run.passages, request)
        run.timings.verification = time.perf_counter() - started
        outcome = cleanup(run.draft.answer, run.statements, results, policy.thresholds.cleanup)
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
    return await run.finish(outcome.with_declined(_declined_notes(run.triage, services)))


_REASON_BY_STAGE = {
    "retrieve": RefusalReason.STORE_ERROR,
    "draft": RefusalReason.UPSTREAM_ERROR,
    "verify": RefusalReason.VERIFIER_ERROR,
    "cleanup": RefusalReason.VERIFIER_ERROR,
}


def _declined_notes(triage_result: Triage, services: Services) -> str:
    notes = [
        services.messages.render("declined_question", scope=q.scope.value, question=q.text)
        for q in triage_result.declined
    ]
    return " ".join(notes)


class _Run:
    """The state one request accumulates; turns it into a recorded PipelineResult."""

    def __init__(self, request: ChatRequest, services: Services, request_id: str) -> None:
        self.request = request
        self.services = services
        self.request_id = request_id
        self.created_at = dt.datetime.now(dt.UTC)
        self.timings = Timings()
        self.triage = Triage(Scope.IN_SCOPE, "not triaged")
        self.passages: tuple[Passage, ...] = ()
        self.best_relevance: float | None = None
        self.draft: Draft | None = None
        self.statements: tuple[Statement, ...] = ()
        self.verdicts: tuple[Verdict, ...] = ()

    async def refuse(self, reason: RefusalReason, detail: str) -> PipelineResult:
        rule = self.triage.rule if reason is RefusalReason.EMERGENCY else None
        message = self.services.messages.refusal(reason, rule=rule)
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
