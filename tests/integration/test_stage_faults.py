"""A fault injected into each stage of a chat request is refused with the right reason, counted under
that stage in ``gateway_stage_errors_total`` (and no other), and audited naming the stage.

The pipeline is the real one (``make_services``: fixture knowledge store, extractive upstream, real
verifier and cleanup); each case breaks one stage with an unexpected ``RuntimeError`` (a bug), either
through the services object (a component built with a broken dependency, or a fake of it) or by
patching the function the stage calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import replace
from typing import Any

import pytest
from prometheus_client import Counter

from gateway.audit import AuditFilter
from gateway.cleanup.cleaner import CleanupStep, SentenceCleaner
from gateway.domain import (
    ChatRequest,
    ClaimToCheck,
    Draft,
    Message,
    Passage,
    RefusalReason,
    Role,
    SplitReply,
    Triage,
    Verdict,
)
from gateway.drafting.contract import DraftPart
from gateway.drafting.drafter import Drafter
from gateway.errors import AuditError, DraftLimitExceeded, StageError, StoreError
from gateway.metric_labels import PIPELINE_STAGES
from gateway.metrics import GatewayMetrics
from gateway.pipeline.draft_check import DRAFT
from gateway.pipeline.ending import RECORD
from gateway.pipeline.run import answer
from gateway.pipeline.stages import REASON_BY_STAGE, Stage, StageRunner, refusal_reason
from gateway.retrieval.retrieve import Retriever
from gateway.services import Services
from gateway.testing import ScriptedVerifier
from gateway.triage.triager import LayeredTriager, Triager
from gateway.trust.badge import TierBadger
from gateway.verification.verifier import operating_point
from gateway.verification.verify import ClaimChecker
from gateway.vocabulary import DraftLimit, StageName
from tests.support.components import with_components
from tests.support.waiting import EventLog

QUESTION = "How much paracetamol can an adult take in a day?"
BUG = "injected fault"


def ask(question: str = QUESTION) -> ChatRequest:
    return ChatRequest(messages=(Message(Role.USER, question),), model="m")


def stage_errors(metrics: GatewayMetrics) -> dict[str, float]:
    """Every non-zero ``gateway_stage_errors_total`` series, by stage."""
    return {
        s.labels["stage"]: s.value
        for family in metrics.registry.collect()
        for s in family.samples
        if s.name == "gateway_stage_errors_total" and s.value
    }


def bug(*_: Any, **__: Any) -> Any:
    raise RuntimeError(BUG)


class FailingEncoder:
    """The embedder with ``encode`` broken: what triage meets when the model fails at run time."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def encode(self, texts: Sequence[str]) -> Any:
        raise RuntimeError(BUG)


class BrokenStore:
    async def search(self, query: str, k: int, filters: Any = None) -> list[Passage]:
        raise RuntimeError(BUG)

    async def count(self) -> int:
        return 0


class BrokenUpstream:
    name = "broken"
    calls_tools = False  # asked at construction (``ToolPassages.calls_tools``)

    async def stream(
        self, request: ChatRequest, passages: Sequence[Passage]
    ) -> AsyncGenerator[DraftPart, None]:
        raise RuntimeError(BUG)
        yield  # an async generator, as the Upstream protocol's stream is

    async def draft(self, request: ChatRequest, passages: Sequence[Passage]) -> Draft:
        raise RuntimeError(BUG)

    async def aclose(self) -> None:
        return None


class BrokenVerifier:
    name = "broken"

    async def verify(self, claims: Sequence[ClaimToCheck]) -> list[Verdict]:
        raise RuntimeError(BUG)


def break_triage(services: Services) -> Services:
    triager = services.triager
    assert isinstance(triager, LayeredTriager)
    broken = LayeredTriager(triager.context, triager.model, FailingEncoder(triager.encoder))
    return with_components(services, triager=broken)


def break_retrieve(services: Services) -> Services:
    retrieval = services.policy.thresholds.retrieval
    broken = Retriever(BrokenStore(), retrieval, services.query_rewriter)  # type: ignore[arg-type]
    return with_components(services, retriever=broken)


def break_draft(services: Services) -> Services:
    return with_components(services, drafter=Drafter(BrokenUpstream()))  # type: ignore[arg-type]


class BrokenSplitter:
    async def run(self, *_: Any) -> SplitReply:
        raise RuntimeError(BUG)


def break_split(services: Services) -> Services:
    return with_components(services, splitter=BrokenSplitter())


def break_verify(services: Services) -> Services:
    return with_components(services, checker=ClaimChecker(BrokenVerifier()))


class BrokenCleaner(SentenceCleaner):
    async def run(self, *_: Any) -> CleanupStep:
        raise RuntimeError(BUG)


def break_cleanup(services: Services) -> Services:
    c = services.cleaner
    broken = BrokenCleaner(c.rewriter, c.policy, c.metrics, c.max_rewrites, c.deadline)
    return with_components(services, cleaner=broken)


class FailingFinishCleaner(SentenceCleaner):
    """A cleanup stage whose last step fails: every sentence was judged and released before it."""

    async def finish(self, *_: Any, **__: Any) -> CleanupStep:
        raise RuntimeError(BUG)


def break_cleanup_finish(services: Services) -> Services:
    c = services.cleaner
    broken = FailingFinishCleaner(c.rewriter, c.policy, c.metrics, c.max_rewrites, c.deadline)
    return with_components(services, cleaner=broken)


def break_badge(services: Services) -> Services:
    point = operating_point(services.checker.verifier)
    return with_components(services, badger=TierBadger(services.policy.tiers, bug, point))  # its clock fails


FAULTS: dict[str, tuple[Callable[[Services], Services], RefusalReason]] = {
    "triage": (break_triage, RefusalReason.TRIAGE_ERROR),
    "retrieve": (break_retrieve, RefusalReason.STORE_ERROR),
    "draft": (break_draft, RefusalReason.UPSTREAM_ERROR),
    "split": (break_split, RefusalReason.VERIFIER_ERROR),
    "verify": (break_verify, RefusalReason.VERIFIER_ERROR),
    "cleanup": (break_cleanup, RefusalReason.VERIFIER_ERROR),
}
"""Stages that fail before any sentence was released (badge runs after: see its own test)."""


async def test_the_unbroken_pipeline_answers(make_services) -> None:  # type: ignore[no-untyped-def]
    """The baseline every fault case departs from: this question is answered, with claims."""
    services = make_services()
    result = await answer(ask(), services.answer_parts)
    assert not result.outcome.refused
    assert result.outcome.claims
    assert stage_errors(services.metrics) == {}


@pytest.mark.parametrize("stage", list(FAULTS))
async def test_a_failing_stage_is_refused_counted_and_audited_under_its_name(  # type: ignore[no-untyped-def]
    make_services, stage: str
) -> None:
    inject, reason = FAULTS[stage]
    services = inject(make_services())
    result = await answer(ask(), services.answer_parts)

    assert result.outcome.refused
    assert result.outcome.refusal_reason is reason
    assert result.report.summary.reason is reason
    assert result.answer == services.messages.refusal(reason, rule=None)
    assert "paracetamol" not in result.answer.lower()  # nothing of the answer leaves
    assert isinstance(result.error, StageError)
    assert result.error.stage == stage
    assert BUG in str(result.error)

    assert stage_errors(services.metrics) == {stage: 1.0}
    m = services.metrics.registry
    assert m.get_sample_value("gateway_requests_total", {"outcome": "error"}) == 1.0
    assert m.get_sample_value("gateway_refusals_total", {"reason": reason.value}) == 1.0
    upstream_errors = [
        s.value
        for family in m.collect()
        for s in family.samples
        if s.name == "gateway_upstream_errors_total" and s.value
    ]
    assert upstream_errors == []  # a bug is never counted as an upstream failure

    (row,) = services.audit.list(AuditFilter())
    assert (row.id, row.outcome, row.refused, row.reason) == (result.request_id, "error", True, reason.value)
    record = services.audit.get(result.request_id)
    assert record is not None
    assert record["error"] == {"type": "StageError", "message": str(result.error), "stage": stage}
    assert record["trust"]["summary"]["reason"] == reason.value
    # the refusal's report is built without badges, and still names the verifier of the chat path
    assert record["trust"]["operating_point"] == operating_point(services.checker.verifier) != ""


async def test_a_badge_failure_after_the_answer_was_released_ends_it_with_a_note(  # type: ignore[no-untyped-def]
    make_services,
) -> None:
    """Badging runs after the last sentence was released (a streaming client already holds it; the
    non-streamed path gives the same text): the answer ends with the note, counted and audited."""
    services = break_badge(make_services())
    result = await answer(ask(), services.answer_parts)
    assert result.outcome.ended_early
    assert result.outcome.refusal_reason is RefusalReason.VERIFIER_ERROR
    assert "I have stopped this answer here" in result.answer
    assert isinstance(result.error, StageError)
    assert result.error.stage == "badge"
    assert set(stage_errors(services.metrics)) == {"badge"}  # the ended-early outcome is badged again
    (row,) = services.audit.list(AuditFilter())
    assert (row.id, row.reason) == (result.request_id, RefusalReason.VERIFIER_ERROR.value)


async def test_a_failing_cleanup_finish_is_a_cleanup_failure_ending_the_answer_with_a_note(  # type: ignore[no-untyped-def]
    make_services,
) -> None:
    """The cleanup's last step (``SentenceCleaner.finish``) runs through the stage runner like its
    ``run``: a bug there is named (cleanup), counted and refused, never an unhandled error. Its
    sentences were released before it, so the answer ends with the note naming the refusal."""
    services = break_cleanup_finish(make_services())
    pieces: list[str] = []

    async def sink(piece: object) -> None:
        pieces.append(str(piece))

    result = await answer(ask(), services.answer_parts, sink=sink)

    assert result.outcome.ended_early
    assert result.outcome.refusal_reason is RefusalReason.VERIFIER_ERROR
    assert result.report.summary.reason is RefusalReason.VERIFIER_ERROR
    assert "I have stopped this answer here" in pieces[-1]
    assert "".join(pieces) == result.answer
    assert isinstance(result.error, StageError)
    assert result.error.stage == StageName.CLEANUP
    assert BUG in str(result.error)

    assert stage_errors(services.metrics) == {"cleanup": 1.0}
    m = services.metrics.registry
    assert m.get_sample_value("gateway_requests_total", {"outcome": "error"}) == 1.0
    (row,) = services.audit.list(AuditFilter())
    assert (row.id, row.outcome, row.reason) == (result.request_id, "error", "verifier_error")
    record = services.audit.get(result.request_id)
    assert record is not None
    assert record["error"] == {"type": "StageError", "message": str(result.error), "stage": "cleanup"}
    assert record["answer"] == result.answer


async def test_an_error_a_stage_passes_on_is_neither_wrapped_nor_counted_again() -> None:
    """The cleanup's last step releases sentences: a stream's write-ahead failing there is an
    AuditError already counted by the write-ahead, passed on as it is (``Stage.passes``)."""
    metrics = GatewayMetrics()

    async def write_ahead_fails() -> None:
        raise AuditError("cannot write the audit record")

    with pytest.raises(AuditError) as caught:
        await StageRunner(metrics)(Stage(StageName.CLEANUP, write_ahead_fails, passes=(AuditError,)))
    assert caught.value.stage == StageName.RECORD
    assert stage_errors(metrics) == {}


async def test_a_refusal_whose_badging_fails_keeps_its_reason(make_services) -> None:  # type: ignore[no-untyped-def]
    """An emergency stays an emergency when badging fails: its message points to urgent help."""
    services = break_badge(make_services())
    result = await answer(
        ask("I have crushing chest pain and I can't catch my breath"), services.answer_parts
    )
    assert result.outcome.refusal_reason is RefusalReason.EMERGENCY
    assert result.report.claims == ()
    assert result.report.operating_point == operating_point(services.checker.verifier) != ""  # unbadged
    assert result.error is not None
    assert result.error.stage == "badge"
    assert set(stage_errors(services.metrics)) == {"badge"}  # the ended-early outcome is badged again
    (row,) = services.audit.list(AuditFilter())
    assert (row.outcome, row.reason) == ("emergency", "emergency")


async def test_a_draft_over_a_bound_is_the_model_fault_not_the_splitter(make_services) -> None:  # type: ignore[no-untyped-def]
    services = make_services(max_draft_statements=1)
    result = await answer(ask(), services.answer_parts)
    assert result.outcome.refusal_reason is RefusalReason.MALFORMED_OUTPUT
    assert isinstance(result.error, DraftLimitExceeded)
    assert stage_errors(services.metrics) == {"draft": 1.0}
    record = services.audit.get(result.request_id)
    assert record is not None
    assert record["error"]["stage"] == "draft"


async def test_a_failing_audit_write_is_an_audit_error_and_sends_nothing(  # type: ignore[no-untyped-def]
    make_services,
) -> None:
    """The final audit write fails: the request fails as a whole (the caller sends nothing and answers
    503), and the provisional row stays incomplete."""
    services = make_services()
    original = services.audit.write
    calls: list[int] = []

    async def fail_second(row: Any, record: Any) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full")
        await original(row, record)

    services.audit.write = fail_second
    with pytest.raises(AuditError) as caught:
        await answer(ask(), services.answer_parts, request_id="req_record_fault")
    assert caught.value.stage == "record"
    assert stage_errors(services.metrics) == {"record": 1.0}
    operation = {"operation": "complete"}
    assert services.metrics.registry.get_sample_value("gateway_audit_errors_total", operation) == 1.0
    (row,) = services.audit.list(AuditFilter())
    assert row.outcome == "incomplete"


class FailsAfterTheFirstPart:
    """Supports the claims of the draft's first part; raises (a bug) for every later part."""

    name = "fails-after-first"

    def __init__(self) -> None:
        self.calls = 0

    async def verify(self, claims: Sequence[ClaimToCheck]) -> list[Verdict]:
        self.calls += 1
        if self.calls > 1:
            raise RuntimeError(BUG)
        supported = ScriptedVerifier.supporting(self.name).each
        assert supported is not None
        return [supported for _ in claims]


async def test_a_verify_failure_after_judged_parts_counts_what_was_judged(make_services) -> None:  # type: ignore[no-untyped-def]
    """The run ends with claims split but not judged (a later part's verification failed, or the
    client left while it ran): the request is counted with the sentences that were judged, and the
    counting itself does not fail (no ``record`` stage error beside the ``verify`` one)."""
    verifier = FailsAfterTheFirstPart()
    services = with_components(make_services(), checker=ClaimChecker(verifier))
    result = await answer(ask(), services.answer_parts)
    assert verifier.calls == 2  # the first part judged, the second part's verification failed
    claims = [s for s in result.statements if s.is_claim]
    assert 0 < len(result.verdicts) < len(claims)
    assert stage_errors(services.metrics) == {"verify": 1.0}
    informative = services.metrics.registry.get_sample_value(
        "gateway_informative_sentences_total", {"grounded": "true"}
    )
    assert informative == len({s.sentence_index for s in claims[: len(result.verdicts)]})


class BrokenCounter(Counter):
    """A request counter with a bug: every count raises."""

    def labels(self, *_: Any, **__: Any) -> Counter:
        raise RuntimeError(BUG)


class CountingBug(GatewayMetrics):
    """Metrics whose per-request outcome count (``gateway_requests_total``) raises."""

    def __init__(self) -> None:
        super().__init__()
        self.requests = BrokenCounter("broken_requests", "a counter with a bug", ["outcome"], registry=None)


async def test_a_bug_after_the_audit_write_is_counted_and_the_recorded_answer_is_sent(  # type: ignore[no-untyped-def]
    make_services,
) -> None:
    """Counting fails after the record is written: the answer the record describes is still returned
    (withholding it would make the record false), and the failure is counted at the record stage."""
    built = make_services()
    metrics = CountingBug()  # the record stage's metrics sink: its first count after the write fails
    services = replace(built, trail=replace(built.trail, metrics=metrics))
    result = await answer(ask(), services.answer_parts, request_id="req_after_write")
    assert not result.outcome.refused
    assert stage_errors(metrics) == {"record": 1.0}
    operation = {"operation": "complete"}
    assert metrics.registry.get_sample_value("gateway_audit_errors_total", operation) == 0.0
    (row,) = services.audit.list(AuditFilter())
    assert row.outcome == "answered"
    assert row.id == result.request_id == "req_after_write"


class SlowProvisionalWrite:
    """The audit store with its provisional write held until ``after`` is in the event log (and
    optionally failing), logging the order in which the provisional commit, triage and the model call
    happen."""

    def __init__(
        self, services: Services, events: EventLog, fail: bool = False, after: str = "triaged"
    ) -> None:
        self.original = services.audit.write
        self.events = events
        self.fail = fail
        self.after = after

    async def __call__(self, row: Any, record: Any) -> None:
        first = not any(e.startswith("provisional") for e in self.events)
        if first:
            self.events.append("provisional started")
            await self.events.reached(self.after, f"{self.after!r} while the provisional row is written")
            if self.fail:
                self.events.append("provisional failed")
                raise OSError("disk full")
            await self.original(row, record)
            self.events.append("provisional committed")
            return
        await self.original(row, record)
        self.events.append("final committed")


class WatchedTriager:
    """The services' triager, noting when it decided."""

    def __init__(self, triager: Triager, events: list[str]) -> None:
        self.triager = triager
        self.events = events

    async def run(self, request: ChatRequest) -> Triage:
        result = await self.triager.run(request)
        self.events.append("triaged")
        return result


class EndlessTriager:
    """A triager that never decides: the request is cancelled while it runs."""

    async def run(self, request: ChatRequest) -> Triage:
        await asyncio.Event().wait()
        raise AssertionError("an endless triage returned")


class WatchedDrafter(Drafter):
    """The drafter over the same upstream, logging when the model is asked."""

    def __init__(self, drafter: Drafter, events: list[str]) -> None:
        super().__init__(drafter.upstream)
        self.events = events

    def stream(self, request: ChatRequest, passages: Sequence[Passage]) -> AsyncGenerator[DraftPart, None]:
        self.events.append("model asked")
        return super().stream(request, passages)


def watch_stages(services: Services, events: list[str]) -> Services:
    watched = WatchedTriager(services.triager, events)
    return with_components(services, triager=watched, drafter=WatchedDrafter(services.drafter, events))


async def test_the_provisional_row_is_written_alongside_triage_and_committed_before_the_model_is_asked(  # type: ignore[no-untyped-def]
    make_services,
) -> None:
    services = make_services()
    events = EventLog()
    services.audit.write = SlowProvisionalWrite(services, events)
    services = watch_stages(services, events)
    result = await answer(ask(), services.answer_parts)
    assert not result.outcome.refused
    assert events == [
        "provisional started",
        "triaged",  # triage ran while the row was being written
        "provisional committed",
        "model asked",
        "final committed",
    ]


@pytest.mark.parametrize("question", [QUESTION, "I have crushing chest pain and I can't catch my breath"])
async def test_a_failing_provisional_write_alongside_triage_sends_nothing(  # type: ignore[no-untyped-def]
    make_services, question: str
) -> None:
    """Whatever triage decided (an answer to draft, an emergency to refuse), a provisional row that
    cannot be written fails the request (a 503 at the handler): no model call, no final record."""
    services = make_services()
    events = EventLog()
    services.audit.write = SlowProvisionalWrite(services, events, fail=True)
    services = watch_stages(services, events)
    with pytest.raises(AuditError, match="disk full"):
        await answer(ask(question), services.answer_parts)
    # triage decided by its rule layers needs no encoding and may finish before the write starts
    assert sorted(events[:2]) == ["provisional started", "triaged"]
    assert events[2:] == ["provisional failed"]
    m = services.metrics.registry
    assert m.get_sample_value("gateway_audit_errors_total", {"operation": "begin"}) == 1.0
    assert m.get_sample_value("gateway_requests_total", {"outcome": "error"}) == 1.0
    assert services.audit.list(AuditFilter()) == []


async def test_a_request_cancelled_during_triage_waits_for_its_provisional_row_then_completes_it(  # type: ignore[no-untyped-def]
    make_services,
) -> None:
    services = make_services()
    events = EventLog()
    services.audit.write = SlowProvisionalWrite(services, events, after="cancelled")
    services = with_components(services, triager=EndlessTriager())
    task = asyncio.create_task(answer(ask(), services.answer_parts, request_id="req_cancelled_in_triage"))
    await events.reached("provisional started", "the provisional write started")
    task.cancel()
    events.append("cancelled")
    with pytest.raises(asyncio.CancelledError):
        await task
    assert events == ["provisional started", "cancelled", "provisional committed"]  # then completed:
    (row,) = services.audit.list(AuditFilter())
    assert (row.id, row.outcome) == ("req_cancelled_in_triage", "cancelled")


def test_refusal_reasons() -> None:
    assert set(REASON_BY_STAGE) <= set(PIPELINE_STAGES)
    names = [StageName.TRIAGE, StageName.RETRIEVE, DRAFT.name, StageName.SPLIT, StageName.VERIFY]
    names = [*names, StageName.CLEANUP, StageName.BADGE, RECORD.name]  # the others: components
    assert names == [*REASON_BY_STAGE, "record"]
    assert all(name in PIPELINE_STAGES for name in names)

    def failed(error: StageError, stage: str) -> StageError:
        error.stage = error.stage or stage
        return error

    # triage keeps its reason whatever failed there: an emergency was not ruled out
    assert refusal_reason(failed(StoreError("x"), "triage")) is RefusalReason.TRIAGE_ERROR
    # elsewhere a typed error names the failure; a malformed reply is no outage of the upstream
    assert refusal_reason(failed(StoreError("x"), "cleanup")) is RefusalReason.STORE_ERROR
    too_long = failed(DraftLimitExceeded("x", limit=DraftLimit.STATEMENTS), "split")
    assert (too_long.stage, refusal_reason(too_long)) == ("draft", RefusalReason.MALFORMED_OUTPUT)
    assert refusal_reason(failed(StageError("x"), "retrieve")) is RefusalReason.STORE_ERROR
