"""OpenTelemetry traces over real HTTP, collected by the SDK's in-memory exporter.

Each traced request is one trace: a server span and a child span per stage, with the stage's outcome
and timing, the GenAI attributes on the draft span, no patient text unless content capture is on, and
the trace id in the audit record and the request's log line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from gateway.testing import Reply
from tests.support.chat_answers import supported_answer
from tests.support.stack import openai_client, running_gateway

QUESTION = "How much paracetamol can an adult take?"
STAGES = ["triage", "retrieve", "draft", "split", "verify", "cleanup", "badge", "record"]
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


@pytest.fixture(scope="module")
def tracer() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """One provider for the module, exporting to memory as each span ends."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


@pytest.fixture
def exporter(tracer) -> InMemorySpanExporter:  # type: ignore[no-untyped-def]
    tracer[1].clear()
    return tracer[1]


@pytest.fixture(scope="module")
def traced_gateways(upstream, module_services, tracer):  # type: ignore[no-untyped-def]
    """Traced gateways built once per module and per settings: ``get(**settings)`` -> (url, services)."""
    _, base_url = upstream
    running: dict[tuple[tuple[str, Any], ...], tuple[str, Any]] = {}
    managers: list[Any] = []

    def get(**overrides: Any) -> tuple[str, Any]:
        key = tuple(sorted(overrides.items()))
        if key not in running:
            services = module_services(upstream_base_url=base_url, upstream_retries=0, **overrides)
            manager = running_gateway(services, tracer_provider=tracer[0])
            managers.append(manager)
            running[key] = (manager.__enter__(), services)
        return running[key]

    yield get
    for manager in managers:
        manager.__exit__(None, None, None)


@pytest.fixture
def traced(upstream, traced_gateways, exporter):  # type: ignore[no-untyped-def]
    """``traced(**settings)`` -> (scripted upstream, url, services) of a traced gateway."""
    scripted = upstream[0]
    scripted.reset()

    def start(**overrides: Any) -> tuple[Any, str, Any]:
        url, services = traced_gateways(**overrides)
        return scripted, url, services

    return start


def stage_spans(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    return {
        str(s.attributes["gateway.stage"]): s
        for s in exporter.get_finished_spans()
        if s.attributes and "gateway.stage" in s.attributes
    }


def spans_of(exporter: InMemorySpanExporter, stage: str) -> list[ReadableSpan]:
    """Every span of one stage, in the order they started: the draft, split, verify and cleanup stages
    run once per part of the streamed draft (docs/contract.md)."""
    spans = [s for s in exporter.get_finished_spans() if (s.attributes or {}).get("gateway.stage") == stage]
    return sorted(spans, key=lambda s: s.start_time or 0)


def total(spans: list[ReadableSpan], attribute: str) -> int:
    return sum(int((s.attributes or {}).get(attribute, 0)) for s in spans)  # type: ignore[arg-type]


def server_span(exporter: InMemorySpanExporter) -> ReadableSpan:
    (span,) = [s for s in exporter.get_finished_spans() if s.name.startswith("POST /v1/")]
    return span


def all_attribute_text(exporter: InMemorySpanExporter) -> str:
    return json.dumps([dict(s.attributes or {}) for s in exporter.get_finished_spans()])


def test_a_request_is_one_trace_with_a_span_per_stage(traced, exporter, log_stream) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = traced()
    scripted.queue(supported_answer())
    completion = openai_client(url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": QUESTION}]
    )
    stages = stage_spans(exporter)
    assert sorted(stages) == sorted(STAGES)
    server = server_span(exporter)
    trace_id = server.context.trace_id
    for span in stages.values():
        assert span.context.trace_id == trace_id
        assert span.parent is not None
        assert span.parent.span_id == server.context.span_id
        assert span.attributes["gateway.stage.outcome"] == "ok"
        assert span.attributes["gateway.stage.duration_ms"] >= 0
    request_id = completion.model_extra["trust"]["request_id"]
    assert server.attributes["gateway.request.id"] == request_id
    assert server.attributes["http.response.status_code"] == 200
    assert stages["triage"].attributes["gateway.triage.scope"] == "in_scope"
    assert stages["retrieve"].attributes["gateway.retrieve.relevant"] is True
    drafts = spans_of(exporter, "draft")  # one span per part: the urgency read, each sentence, the end
    assert [d.attributes["gateway.draft.part"] for d in drafts] == ["urgency", "sentence", "sentence", "end"]
    for draft in drafts:
        assert draft.name == f"chat {services.settings.upstream_model}"
        assert draft.attributes["gen_ai.operation.name"] == "chat"
        assert draft.attributes["gen_ai.request.model"] == services.settings.upstream_model
    assert total(spans_of(exporter, "split"), "gateway.split.claims") == 2
    assert total(spans_of(exporter, "verify"), "gateway.verify.supported") == 2
    cleanups = spans_of(exporter, "cleanup")  # each sentence's step, then the draft's end
    assert total(cleanups, "gateway.cleanup.released") == 2
    assert not any((c.attributes or {}).get("gateway.cleanup.stopped") for c in cleanups)
    assert stages["badge"].attributes["gateway.badge.supported"] == 2
    assert stages["record"].attributes["gateway.request.id"] == request_id
    # no patient text in any span by default
    text = all_attribute_text(exporter)
    assert "paracetamol" not in text.lower()
    assert "gen_ai.input.messages" not in text
    # the trace id is in the audit record and in the request's log line
    hex_id = f"{trace_id:032x}"
    assert services.audit.get(request_id)["trace_id"] == hex_id
    logged = [json.loads(line) for line in log_stream.getvalue().splitlines() if line.strip()]
    (request_line,) = [line for line in logged if line.get("event") == "chat_request"]
    assert request_line["trace_id"] == hex_id


def test_content_capture_is_an_explicit_opt_in(traced, exporter) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = traced(otel_capture_content=True)
    scripted.queue(supported_answer())
    openai_client(url).chat.completions.create(model="m", messages=[{"role": "user", "content": QUESTION}])
    drafts = spans_of(exporter, "draft")
    (message,) = json.loads(str(drafts[0].attributes["gen_ai.input.messages"]))
    assert message["parts"][0]["content"] == QUESTION
    assert "paracetamol" in str(drafts[-1].attributes["gen_ai.output.messages"])  # the end: the whole reply


def test_a_failed_stage_is_an_error_span_and_the_caller_trace_continues(traced, exporter) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = traced()
    scripted.queue(Reply(status=500))
    response = httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": QUESTION}]},
        headers={"traceparent": f"00-{CALLER_TRACE}-00f067aa0ba902b7-01"},
        timeout=30,
    )
    assert response.json()["trust"]["summary"]["reason"] == "upstream_error"
    stages = stage_spans(exporter)
    draft = stages["draft"]
    assert draft.status.status_code is StatusCode.ERROR
    assert draft.attributes["gateway.stage.outcome"] == "error"
    assert draft.attributes["error.type"]
    assert "verify" not in stages  # the refused request stopped at the draft
    assert f"{server_span(exporter).context.trace_id:032x}" == CALLER_TRACE
    record = services.audit.get(response.headers["x-request-id"])
    assert record["trace_id"] == CALLER_TRACE


def test_a_streamed_response_is_traced_to_its_record(traced, exporter) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = traced()
    scripted.queue(supported_answer())
    with openai_client(url).responses.stream(model="m", input=QUESTION) as stream:
        final = stream.get_final_response()
    stages = stage_spans(exporter)
    assert sorted(stages) == sorted(STAGES)
    server = server_span(exporter)
    assert server.name == "POST /v1/responses"
    assert {s.context.trace_id for s in stages.values()} == {server.context.trace_id}
    request_id = final.model_extra["trust"]["request_id"]
    assert services.audit.get(request_id)["trace_id"] == f"{server.context.trace_id:032x}"


def test_without_a_provider_nothing_is_traced(traced, exporter) -> None:  # type: ignore[no-untyped-def]
    scripted, _, services = traced()  # the same services, served by an app without a tracer provider
    scripted.queue(supported_answer())
    with running_gateway(services) as url:
        completion = openai_client(url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": QUESTION}]
        )
    record = services.audit.get(completion.model_extra["trust"]["request_id"])
    assert "trace_id" not in record
    assert exporter.get_finished_spans() == ()
