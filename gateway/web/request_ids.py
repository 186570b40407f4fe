"""Every response carries ``x-request-id``: errors (4xx, 503 ``audit_unavailable``, a 500),
``/v1/models``, the pages, everything.

Each HTTP request gets one id (``req_`` and 32 hex digits; a client's own ``x-request-id`` is not
trusted), kept in the ASGI scope's state the first time it is asked for: by the chat handler, which
hands it to the pipeline, by the error handlers' log line, or at the latest by ``add_request_id``,
the app's ``before_send`` hook, which Litestar runs on every response it sends, including the ones
its exception handlers render for a middleware's refusal. So the header, the audit row (provisional
and completed) and the log line (``chat_request``, or ``request_rejected``) carry one id.
"""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.datastructures import MutableScopeHeaders
from litestar.types import Message, Scope

from gateway.pipeline.run import new_request_id

HEADER = "x-request-id"
_STATE_KEY = "request_id"


def scope_request_id(scope: Scope) -> str:
    """The request's id, made the first time it is asked for."""
    state: dict[str, Any] = scope.setdefault("state", {})
    value = state.get(_STATE_KEY)
    if not isinstance(value, str):
        value = state[_STATE_KEY] = new_request_id()
    return value


def request_id_of(request: ASGIConnection[Any, Any, Any, Any]) -> str:
    return scope_request_id(request.scope)


async def add_request_id(message: Message, scope: Scope) -> None:
    """``before_send``: the response's ``x-request-id`` unless a handler already set it."""
    if message["type"] == "http.response.start":
        headers = MutableScopeHeaders.from_message(message)
        if HEADER not in headers:
            headers[HEADER] = scope_request_id(scope)
