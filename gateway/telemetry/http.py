"""The server span of each traced request, and the tracing handle set for the stages beneath it.

An ASGI middleware, installed by ``create_app`` only when tracing is on. It traces ``/v1/*`` (the
requests that reach the pipeline or a stage; probes, metrics, pages and static files are not traced),
continues a caller's trace from its ``traceparent`` header (W3C Trace Context), and names the span
``METHOD /path`` with the HTTP semantic conventions' attributes, plus ``gateway.request.id`` (the
audit record's key, from the ``x-request-id`` response header). Nothing of the body is read.
"""

from __future__ import annotations

from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from opentelemetry.trace import SpanKind, Status, StatusCode, use_span
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from gateway.telemetry.tracing import CURRENT, Tracing

TRACED_PREFIX = "/v1/"
REQUEST_ID_HEADER = b"x-request-id"
_PROPAGATOR = TraceContextTextMapPropagator()


class TracingMiddleware:
    """ASGI middleware: one server span per traced HTTP request; ``CURRENT`` set while it runs."""

    def __init__(self, app: ASGIApp, tracing: Tracing) -> None:
        self.app = app
        self.tracing = tracing

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == ScopeType.HTTP else ""
        if not path.startswith(TRACED_PREFIX):
            await self.app(scope, receive, send)
            return
        method = scope.get("method", "GET")
        carrier = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        attributes: dict[str, Any] = {
            "http.request.method": method,
            "url.path": path,
            "url.scheme": scope.get("scheme", "http"),
            "http.route": path,
        }
        span = self.tracing.tracer.start_span(
            f"{method} {path}",
            context=_PROPAGATOR.extract(carrier),
            kind=SpanKind.SERVER,
            attributes=attributes,
        )

        async def traced_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = int(message["status"])
                span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    span.set_status(Status(StatusCode.ERROR))
                    span.set_attribute("error.type", str(status))
                for key, value in message.get("headers", []):
                    if key.lower() == REQUEST_ID_HEADER:
                        span.set_attribute("gateway.request.id", value.decode("latin-1"))
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                span.end()  # before the last bytes leave: the span is complete when the client has them
            await send(message)

        token = CURRENT.set(self.tracing)
        try:
            with use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
                await self.app(scope, receive, traced_send)
        except BaseException as err:
            if span.is_recording():
                span.set_status(Status(StatusCode.ERROR))
                span.set_attribute("error.type", type(err).__name__)
            raise
        finally:
            CURRENT.reset(token)
            if span.is_recording():  # no complete response was sent (a disconnect, an error)
                span.end()


def tracing_middleware(tracing: Tracing) -> Any:
    """The middleware factory to list in ``Litestar(middleware=[...])``."""

    def wrap(app: ASGIApp) -> ASGIApp:
        return TracingMiddleware(app, tracing)

    return wrap
