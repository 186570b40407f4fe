"""The stage contract and the one runner every stage of a request goes through.

A ``Stage`` is a name and a typed ``run``. ``StageRunner`` runs one: it times it (into the request's
``Timings``), and when it fails wraps the error once, naming the stage (an error that already names its
stage keeps it), counts it in ``gateway_stage_errors_total{stage}`` and raises it. The caller turns a
``StageError`` into a refusal whose reason ``refusal_reason`` chooses; an ``AuditError`` (the record
stage) fails the request as a whole. When the request is traced (OpenTelemetry, ``gateway.telemetry``)
the runner also wraps each stage in a span carrying its outcome and timing. Nothing here knows what any
stage does: the wiring is ``gateway.pipeline.run.answer``, and the web handlers run their one stage
through the same runner.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, ParamSpec, TypeVar

from gateway.domain import RefusalReason
from gateway.errors import (
    MalformedDraft,
    NothingToQuote,
    RunError,
    StageError,
    StoreError,
    UpstreamError,
    VerifierError,
)
from gateway.metric_labels import stage_label
from gateway.metrics import GatewayMetrics
from gateway.pipeline.result import Timings
from gateway.telemetry import tracing
from gateway.vocabulary import StageName

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class Stage(Generic[P, T]):
    """One step of a request: its name (the metric, audit and log label) and what it runs."""

    name: StageName
    """Its failures are counted under it (``gateway.metric_labels.PIPELINE_STAGES``: ``StageName``'s
    values)."""
    run: Callable[P, Awaitable[T]]
    failure: type[RunError] = StageError
    """What an unexpected exception becomes: a StageError (the request is refused with a reason) or,
    for the record stage, an AuditError (nothing may be sent without its record)."""
    passes: tuple[type[Exception], ...] = ()
    """Errors that are not this stage's failure: passed on untouched and not counted here (the
    cleanup's last step releases sentences, and a stream's write-ahead failing there, an AuditError,
    is counted where it fails: ``delivery.Delivery.ahead``)."""


class StageRunner:
    """Runs the stages of one request (or of one web call, without timings)."""

    def __init__(self, metrics: GatewayMetrics, timings: Timings | None = None) -> None:
        self._metrics = metrics
        self._timings = timings

    async def __call__(self, stage: Stage[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        traced = tracing.current()  # None unless this request is traced (``gateway.telemetry``)
        if traced is None:
            return await self._run(stage, *args, **kwargs)
        with traced.stage_span(stage.name, args) as span:
            result = await self._run(stage, *args, **kwargs)
            span.finish(result)
            return result

    async def _run(self, stage: Stage[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        started = time.perf_counter()
        try:
            return await stage.run(*args, **kwargs)
        except NothingToQuote:  # a refusal the pipeline makes, not a failure: not counted here
            raise
        except stage.passes:  # not this stage's failure (none unless the stage names some)
            raise
        except Exception as err:  # a cancellation is not an Exception: it passes untouched
            failure = err if isinstance(err, RunError) else stage.failure.from_exception(stage.name, err)
            failure.stage = failure.stage or stage.name
            self._metrics.stage_errors.labels(stage=stage_label(failure.stage)).inc()
            if failure is err:
                raise
            raise failure from err
        finally:
            if self._timings is not None:
                self._timings.add(stage.name, time.perf_counter() - started)


_REASON_BY_ERROR: tuple[tuple[type[StageError], RefusalReason], ...] = (
    (NothingToQuote, RefusalReason.NOTHING_TO_QUOTE),
    (MalformedDraft, RefusalReason.MALFORMED_OUTPUT),
    (UpstreamError, RefusalReason.UPSTREAM_ERROR),
    (StoreError, RefusalReason.STORE_ERROR),
    (VerifierError, RefusalReason.VERIFIER_ERROR),
)
"""Errors whose type says more than the stage they surfaced in (a malformed reply is no outage)."""

REASON_BY_STAGE: dict[str, RefusalReason] = {
    StageName.TRIAGE: RefusalReason.TRIAGE_ERROR,
    StageName.RETRIEVE: RefusalReason.STORE_ERROR,
    StageName.DRAFT: RefusalReason.UPSTREAM_ERROR,
    StageName.SPLIT: RefusalReason.VERIFIER_ERROR,
    StageName.VERIFY: RefusalReason.VERIFIER_ERROR,
    StageName.CLEANUP: RefusalReason.VERIFIER_ERROR,
    StageName.BADGE: RefusalReason.VERIFIER_ERROR,
}
"""The refusal when a stage fails with an untyped error. Splitting, cleanup and badging are part of
producing a checked answer: when they fail the answer could not be checked (``verifier_error``)."""


def refusal_reason(error: StageError) -> RefusalReason:
    """Why a request whose stage failed is refused.

    Triage keeps its own reason whatever failed there: an emergency was not ruled out, and that
    refusal points to urgent help. Elsewhere a typed error names the failure, else the stage does.
    """
    if error.stage == StageName.TRIAGE:
        return RefusalReason.TRIAGE_ERROR
    for kind, reason in _REASON_BY_ERROR:
        if isinstance(error, kind):
            return reason
    return REASON_BY_STAGE.get(error.stage, RefusalReason.VERIFIER_ERROR)
