"""One error shape for every failure: OpenAI's ``{"error": {"message", "type", "param", "code"}}``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import structlog
from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException

from gateway.errors import AuditError, RateLimitedError, RateLimiterUnavailable, RequestError
from gateway.metrics import REJECTED_STATUSES, GatewayMetrics, bounded

log = structlog.get_logger("gateway.http")

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
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


def audit_error_handler(_: Request[Any, Any, Any], exc: AuditError) -> Response[Any]:
    """The audit record was not committed: no answer leaves without its trace (already counted and
    logged by ``gateway.pipeline.record``)."""
    return Response(
        error_body(
            "The request could not be recorded in the audit trail, so no answer was released; retry shortly.",
            "service_unavailable",
            None,
            "audit_unavailable",
        ),
        status_code=503,
        media_type=MediaType.JSON,
        headers={"Retry-After": "5"},
    )


def internal_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    log.error("unhandled_error", path=request.url.path, error_type=type(exc).__name__, exc_info=exc)
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
        code = exc.code if isinstance(exc, RequestError) else None
        log.info("request_rejected", path=request.url.path, status=response.status_code, code=code)
        return response

    return handle
