"""The trace id of the running span, for the audit record and the log lines (no other import needed)."""

from __future__ import annotations

from opentelemetry import trace


def current_trace_id() -> str | None:
    """The W3C trace id (32 hex digits) of the span running now, or None outside a trace (tracing off)."""
    context = trace.get_current_span().get_span_context()
    return trace.format_trace_id(context.trace_id) if context.is_valid else None
