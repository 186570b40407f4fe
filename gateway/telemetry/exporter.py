"""The tracer provider the serving process exports with, configured by the standard ``OTEL_*`` variables.

Tracing is on when an OTLP endpoint is given (``OTEL_EXPORTER_OTLP_ENDPOINT`` or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``), unless ``OTEL_SDK_DISABLED=true`` or
``OTEL_TRACES_EXPORTER=none``. The protocol is ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`` /
``OTEL_EXPORTER_OTLP_PROTOCOL``: ``http/protobuf`` (the default, port 4318) or ``grpc`` (port 4317).
Everything else the SDK reads itself: headers, timeouts, TLS, ``OTEL_SERVICE_NAME`` and
``OTEL_RESOURCE_ATTRIBUTES``, the sampler (``OTEL_TRACES_SAMPLER``) and the batch processor
(``OTEL_BSP_*``). Spans are exported in batches off the request path.
"""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

from gateway.validation import refuse

DEFAULT_SERVICE_NAME = "clinical-trust-gateway"
PROTOCOLS = ("http/protobuf", "grpc")


def tracing_enabled(environ: Mapping[str, str]) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "none":
        return False
    return bool(
        environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    )


def tracer_provider_from_env(environ: Mapping[str, str]) -> TracerProvider | None:
    """A provider exporting over OTLP, or None when tracing is not configured (the default)."""
    if not tracing_enabled(environ):
        return None
    protocol = (
        environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or PROTOCOLS[0]
    ).strip()
    if protocol not in PROTOCOLS:
        variable = (
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
            if environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            else ("OTEL_EXPORTER_OTLP_PROTOCOL")
        )
        refuse(variable, "otlp_protocol", f"must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    resource = Resource.create(
        {} if environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: DEFAULT_SERVICE_NAME}
    )
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(_exporter(protocol)))
    return provider


def _exporter(protocol: str) -> SpanExporter:
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        return GrpcExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

    return HttpExporter()
