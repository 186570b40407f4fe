"""Tracing without a server: the stage runner's spans, the OTEL_* configuration and the log processor."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from gateway.cleanup.cleaner import CleanupStep
from gateway.domain import (
    Passage,
    RefusalReason,
    Retrieval,
    Scope,
    Span,
    SplitReply,
    Statement,
    StatementKind,
    Triage,
    TriageLayer,
)
from gateway.errors import ConfigurationError, StageError
from gateway.logs import add_trace_id
from gateway.metrics import GatewayMetrics
from gateway.pipeline.stages import Stage, StageRunner
from gateway.settings import Settings
from gateway.telemetry import tracing
from gateway.telemetry.attributes import outcome_attributes
from gateway.telemetry.exporter import tracer_provider_from_env
from gateway.telemetry.ids import current_trace_id

SECRET_QUESTION = "my private question about warfarin"


@pytest.fixture
def span_exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(span_exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    yield provider
    provider.shutdown()


@pytest.fixture
def tracing_set(provider: TracerProvider) -> Iterator[tracing.Tracing]:
    """Tracing set for the test, as the HTTP middleware sets it for a request."""
    handle = tracing.tracing_for(provider, Settings())
    token = tracing.CURRENT.set(handle)
    yield handle
    tracing.CURRENT.reset(token)


async def decide(question: str) -> Triage:
    return Triage(Scope.EMERGENCY, "red flag", rule="chest_pain", layer=TriageLayer.RULE)


async def explode(question: str) -> Triage:
    raise ValueError(f"could not read {question}")


async def test_a_stage_runs_in_a_span_with_its_outcome(tracing_set, span_exporter) -> None:  # type: ignore[no-untyped-def]
    run = StageRunner(GatewayMetrics())
    result = await run(Stage("triage", decide), SECRET_QUESTION)
    assert result.scope is Scope.EMERGENCY
    (span,) = span_exporter.get_finished_spans()
    assert span.name == "triage"
    attributes = dict(span.attributes or {})
    assert attributes["gateway.stage"] == "triage"
    assert attributes["gateway.stage.outcome"] == "ok"
    assert attributes["gateway.triage.scope"] == "emergency"
    assert attributes["gateway.triage.rule"] == "chest_pain"
    assert attributes["gateway.triage.layer"] == "rule"
    assert isinstance(attributes["gateway.stage.duration_ms"], float)
    assert "warfarin" not in str(attributes)


def test_the_retrieve_and_split_outcomes_are_counts_not_text() -> None:
    passage = Passage("p1", "d1", SECRET_QUESTION, "Warfarin", "https://x", "NHS", "nhs", None, 0.81234)
    retrieved = outcome_attributes("retrieve", (SECRET_QUESTION,), Retrieval((passage,), 0.81234, True), True)
    assert retrieved == {
        "gateway.retrieve.passages": 1,
        "gateway.retrieve.best_relevance": 0.8123,
        "gateway.retrieve.relevant": True,
    }
    statements = (
        Statement(SECRET_QUESTION, Span(0, 5), StatementKind.CLAIM, (1,)),
        Statement("Hello.", Span(6, 12), StatementKind.ACKNOWLEDGEMENT),
    )
    split = outcome_attributes("split", (), SplitReply(statements, instruction=False), True)
    assert split == {
        "gateway.split.statements": 2,
        "gateway.split.claims": 1,
        "gateway.split.instruction": False,
    }


def test_a_cleanup_step_is_counted_by_what_it_released_and_where_it_stopped() -> None:
    """Each cleanup step (a sentence judged, the draft's end) returns a ``CleanupStep``: its span names
    how many sentences it made final and the refusal it stopped on, never their text."""
    released = outcome_attributes("cleanup", (), CleanupStep((SECRET_QUESTION, "Hello."), None), True)
    assert released == {"gateway.cleanup.released": 2, "gateway.cleanup.stopped": False}
    stopped = CleanupStep((), (RefusalReason.SAFETY_CRITICAL_FAILED, SECRET_QUESTION))
    assert outcome_attributes("cleanup", (), stopped, True) == {
        "gateway.cleanup.released": 0,
        "gateway.cleanup.stopped": True,
        "gateway.cleanup.reason": RefusalReason.SAFETY_CRITICAL_FAILED.value,
    }


async def test_a_failed_stage_is_an_error_span_without_its_message(tracing_set, span_exporter) -> None:  # type: ignore[no-untyped-def]
    metrics = GatewayMetrics()
    with pytest.raises(StageError):
        await StageRunner(metrics)(Stage("triage", explode), SECRET_QUESTION)
    (span,) = span_exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["gateway.stage.outcome"] == "error"
    assert span.attributes["error.type"] == "StageError"
    assert "warfarin" not in (span.status.description or "")
    assert span.events == ()  # no exception event (its message may hold patient text)
    assert metrics.registry.get_sample_value("gateway_stage_errors_total", {"stage": "triage"}) == 1


async def test_without_tracing_the_runner_makes_no_span(span_exporter) -> None:  # type: ignore[no-untyped-def]
    assert tracing.current() is None
    await StageRunner(GatewayMetrics())(Stage("triage", decide), SECRET_QUESTION)
    assert span_exporter.get_finished_spans() == ()


def test_the_log_processor_adds_the_trace_id_inside_a_span(provider) -> None:  # type: ignore[no-untyped-def]
    assert add_trace_id(None, "info", {"event": "x"}) == {"event": "x"}
    with provider.get_tracer("t").start_as_current_span("request") as span:
        event = add_trace_id(None, "info", {"event": "x"})
        assert event["trace_id"] == f"{span.get_span_context().trace_id:032x}" == current_trace_id()


@pytest.mark.parametrize(
    "environ",
    [
        {},
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"},
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_TRACES_EXPORTER": "none"},
    ],
)
def test_tracing_is_off_unless_an_endpoint_is_configured(environ: dict[str, str]) -> None:
    assert tracer_provider_from_env(environ) is None


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_an_otlp_endpoint_turns_tracing_on(protocol: str) -> None:
    environ = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:9",
        "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
    }
    provider = tracer_provider_from_env(environ)
    assert isinstance(provider, TracerProvider)
    assert provider.resource.attributes["service.name"] == "clinical-trust-gateway"
    provider.shutdown()


def test_a_bad_protocol_names_the_variable() -> None:
    environ = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
    }
    with pytest.raises(ConfigurationError, match="OTEL_EXPORTER_OTLP_PROTOCOL"):
        tracer_provider_from_env(environ)
