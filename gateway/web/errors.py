"""One error shape for every failure: OpenAI's ``{"error": {"message", "type", "param", "code"}}``.

``exception_handlers`` is the app's one map: it renders every class of the error tree
(``gateway.errors``), so no handler builds an error response of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import structlog
from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException
from litestar.response import Redirect
from litestar.types import ExceptionHandlersMap

from gateway.errors import (
    AuditError,
    ConfigurationError,
    LoginRequired,
    RateLimitedError,
    RateLimiterUnavailable,
    RequestError,
    RunError,
    StageError,
)
from gateway.metric_labels import REJECTED_STATUSES, bounded
from gateway.metrics import GatewayMetrics
from gateway.pipeline.stages import refusal_reason
from gateway.web.clinician_auth import login_location
from gateway.web.request_ids import request_id_of

log = structlog.get_logger("gateway.http")

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
}


def error_body(
    message: str, error_type: str, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": param, "code": code}}


def request_error_handler(_: Request[Any, Any, Any], exc: RequestError) -> Response[Any]:
    headers = None
    if isinstance(exc, RateLimitedError | RateLimiterUnavailable):
        headers = {"Retry-After": str(exc.retry_after)}
    return Response(
        error_body(exc.message, exc.error_type, exc.param, exc.code),
        status_code=exc.status_code,
        media_type=MediaType.JSON,
        headers=headers,
    )


def http_exception_handler(_: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    status = exc.status_code
    message = exc.detail or "HTTP error"
    if status == 413:
        message = "The request body is larger than the gateway accepts."
    code = {404: "not_found", 405: "method_not_allowed", 413: "request_too_large"}.get(status)
    return Response(
        error_body(
            message, _TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error"), None, code
        ),
        status_code=status,
        media_type=MediaType.JSON,
        headers=exc.headers,
    )


def audit_unavailable_body() -> dict[str, Any]:
    """The error of a request whose audit record could not be written (also the streamed error event)."""
    return error_body(
        "The request could not be recorded in the audit trail, so no answer was released; retry shortly.",
        "service_unavailable",
        None,
        "audit_unavailable",
    )


def run_error_code(exc: RunError) -> str:
    """``audit_unavailable``, or the refusal reason of the failed stage (``store_error``, ...)."""
    if isinstance(exc, AuditError):
        return "audit_unavailable"
    if isinstance(exc, StageError):
        return refusal_reason(exc).value
    return "service_unavailable"


def run_error_handler(_: Request[Any, Any, Any], exc: RunError) -> Response[Any]:
    """503: a run-time failure outside the chat pipeline's refusals. An AuditError means no answer
    leaves without its trace (already counted and logged by ``gateway.pipeline.recording``); a StageError
    of a web call (``/v1/verify``, ``/v1/retrieve``) was named and counted by the stage runner."""
    if isinstance(exc, AuditError):
        body, headers = audit_unavailable_body(), {"Retry-After": "5"}
    else:
        stage = exc.stage or "request"
        message = f"The {stage} stage could not complete ({type(exc).__name__}); nothing was produced."
        body, headers = error_body(message, "service_unavailable", None, run_error_code(exc)), None
    return Response(body, status_code=503, media_type=MediaType.JSON, headers=headers)


def configuration_error_handler(request: Request[Any, Any, Any], exc: ConfigurationError) -> Response[Any]:
    """500: a configuration found invalid while serving (start-up checks the rest). Logged with the
    source and key for the operator; the client is told no more."""
    log.error("configuration_error", path=request.url.path, source=exc.source, key=exc.key, reason=exc.reason)
    return Response(
        error_body(
            "The gateway's configuration is invalid; an operator must fix it. Nothing was done.",
            "api_error",
            None,
            "configuration_error",
        ),
        status_code=500,
        media_type=MediaType.JSON,
    )


def login_redirect_handler(_: Request[Any, Any, Any], exc: LoginRequired) -> Response[Any]:
    """303 to the login form: a browser asked for a staff page without a session (not counted)."""
    return Redirect(login_location(exc.next_path), status_code=303)


def internal_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    log.error(
        "unhandled_error",
        request_id=request_id_of(request),
        path=request.url.path,
        error_type=type(exc).__name__,
        exc_info=exc,
    )
    return Response(
        error_body(
            "The gateway failed to process the request; nothing was sent to the patient.",
            "api_error",
            None,
            "internal_error",
        ),
        status_code=500,
        media_type=MediaType.JSON,
    )


E = TypeVar("E", bound=Exception)
Handler = Callable[[Request[Any, Any, Any], E], Response[Any]]


def counted_rejections(handler: Handler[E], metrics: Callable[[], GatewayMetrics | None]) -> Handler[E]:
    """``handler``, also counting each error response in ``gateway_rejected_requests_total{status}``
    and logging it (path, status, code; never the body). Rejected requests are not audited: they
    never reach the pipeline and carry no answer."""

    def handle(request: Request[Any, Any, Any], exc: E) -> Response[Any]:
        response = handler(request, exc)
        collectors = metrics()
        if collectors is not None:
            status = bounded(str(response.status_code), REJECTED_STATUSES)
            collectors.rejected_requests.labels(status=status).inc()
        log.info(
            "request_rejected",
            request_id=request_id_of(request),
            path=request.url.path,
            status=response.status_code,
            code=_code(exc),
        )
        return response

    return handle


def _code(exc: Exception) -> str | None:
    if isinstance(exc, RequestError):
        return exc.code
    if isinstance(exc, RunError):
        return run_error_code(exc)
    return None


def exception_handlers(metrics: Callable[[], GatewayMetrics | None]) -> ExceptionHandlersMap:
    """The one map: each family of ``gateway.errors`` (resolved by the class's MRO), Litestar's own
    HTTP errors, and everything else as a 500 that names nothing internal."""
    return {
        ConfigurationError: configuration_error_handler,
        LoginRequired: login_redirect_handler,
        RequestError: counted_rejections(request_error_handler, metrics),
        RunError: counted_rejections(run_error_handler, metrics),
        HTTPException: counted_rejections(http_exception_handler, metrics),
        Exception: internal_error_handler,
    }
