"""The per-process tracing handle, found through a context variable while a traced request runs.

``TracingMiddleware`` sets ``CURRENT`` for the request it traces; ``StageRunner`` asks ``current()``
and, when it is set, runs the stage inside ``Tracing.stage_span``. Nothing is global: the tracer comes
from the provider ``create_app`` was given, so tests use their own provider and exporter.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider

from gateway.settings import Settings
from gateway.telemetry.attributes import Attributes, draft_attributes, outcome_attributes
from gateway.vocabulary import StageName

INSTRUMENTATION_NAME = "gateway"
DRAFT_STAGE = StageName.DRAFT
EXTRACTIVE = "extractive"
"""The model and provider name of the draft span without an upstream (the built-in responder)."""


@dataclass(frozen=True)
class Tracing:
    """What the spans of this process need: the tracer and the operator's choices."""

    tracer: Tracer
    request_model: str
    """``gen_ai.request.model`` of the draft span: the upstream's model (or ``extractive``)."""
    provider: str
    """``gen_ai.provider.name`` of the draft span (``openai`` for an OpenAI-compatible upstream)."""
    capture_content: bool = False
    """Put patient text (the conversation, the draft) on the draft span: PHI, off by default."""

    @contextmanager
    def stage_span(self, name: str, args: Sequence[object]) -> Iterator[StageSpan]:
        """A span around one stage; ``StageSpan.finish`` adds the stage's outcome. A failure is recorded
        (``error.type`` and an error status; its message only with content capture) and re-raised."""
        span_name = name
        attributes: Attributes = {"gateway.stage": name}
        if name == DRAFT_STAGE:
            gen_ai = draft_attributes(args, self.request_model, self.provider, self.capture_content)
            attributes.update(gen_ai)
            span_name = f"chat {self.request_model}"
        started = time.perf_counter()
        with self.tracer.start_as_current_span(
            span_name,
            kind=SpanKind.CLIENT if name == DRAFT_STAGE else SpanKind.INTERNAL,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            stage = StageSpan(span, name, args, self.capture_content)
            try:
                yield stage
            except BaseException as err:
                stage.failed(err)
                raise
            finally:
                span.set_attribute(
                    "gateway.stage.duration_ms", round((time.perf_counter() - started) * 1000, 3)
                )


class StageSpan:
    """The span of one running stage."""

    def __init__(self, span: Span, name: str, args: Sequence[object], capture_content: bool) -> None:
        self._span = span
        self._name = name
        self._args = args
        self._capture = capture_content

    def finish(self, result: object) -> None:
        self._span.set_attribute("gateway.stage.outcome", "ok")
        self._span.set_attributes(outcome_attributes(self._name, self._args, result, self._capture))

    def failed(self, err: BaseException) -> None:
        kind = type(err).__name__
        self._span.set_attribute(
            "gateway.stage.outcome", "error" if isinstance(err, Exception) else "cancelled"
        )
        self._span.set_attribute("error.type", kind)
        # an error's message may quote the draft or the question: only with content capture
        self._span.set_status(Status(StatusCode.ERROR, str(err) if self._capture else kind))
        if self._capture and isinstance(err, Exception):
            self._span.record_exception(err)


def tracing_for(provider: TracerProvider, settings: Settings) -> Tracing:
    """The tracing handle of an app: its tracer and what the settings say the draft span names."""
    upstream = bool(settings.upstream_base_url)
    return Tracing(
        tracer=provider.get_tracer(INSTRUMENTATION_NAME),
        request_model=settings.upstream_model if upstream else EXTRACTIVE,
        provider="openai" if upstream else EXTRACTIVE,
        capture_content=settings.otel_capture_content,
    )


CURRENT: ContextVar[Tracing | None] = ContextVar("gateway_tracing", default=None)
"""The tracing of the request being served; None when tracing is off (the default)."""


def current() -> Tracing | None:
    return CURRENT.get()
