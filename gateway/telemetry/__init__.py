"""OpenTelemetry traces of the gateway: off by default, and then free.

With an OTLP endpoint configured through the standard variables (``OTEL_EXPORTER_OTLP_ENDPOINT`` or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``; ``exporter.tracer_provider_from_env``), every ``/v1/*`` request
is a trace: a server span (``http.TracingMiddleware``) with one child span per pipeline stage (triage,
retrieve, draft, split, verify, cleanup, badge, record), opened by the one place that runs every stage,
``gateway.pipeline.stages.StageRunner``, through ``tracing.stage_span``. The draft span follows the
GenAI semantic conventions (``gen_ai.operation.name``, ``gen_ai.request.model``, ...). Spans carry no
patient text unless ``GATEWAY_OTEL_CAPTURE_CONTENT`` is on (PHI: see docs/observability.md).

When tracing is off no middleware is installed and ``stage_span`` is one context-variable read.
"""
