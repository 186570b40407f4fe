"""The one exception map renders every class of the error tree by its family, never as the catch-all 500.

The classes are found by walking ``GatewayError.__subclasses__()``, so a new class is tested as soon
as it exists: it fails here until it has an example below (when its constructor needs more than a
message) and a rendering other than ``internal_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from litestar import get
from litestar.testing import create_test_client

from gateway.errors import (
    AuditError,
    ConfigurationError,
    DraftLimitExceeded,
    FetchError,
    GatewayError,
    InvalidValue,
    LoginRequired,
    RateLimitedError,
    RequestError,
    RunError,
    StageError,
    UpstreamHTTPError,
)
from gateway.pipeline.stages import refusal_reason
from gateway.vocabulary import DraftLimit
from gateway.web.errors import exception_handlers


def error_classes() -> list[type[GatewayError]]:
    found: set[type[GatewayError]] = set()
    todo = [GatewayError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return sorted(found, key=lambda cls: cls.__name__)


EXAMPLES: dict[type[GatewayError], Callable[[], GatewayError]] = {
    ConfigurationError: lambda: ConfigurationError("policies/thresholds.yaml", "retrieval.top_k", "too big"),
    InvalidValue: lambda: InvalidValue("RetrievalPolicy", "top_k", "must be between 1 and 50, got 99"),
    LoginRequired: lambda: LoginRequired("/audit?outcome=error"),
    RateLimitedError: lambda: RateLimitedError("slow down", retry_after=7),
    UpstreamHTTPError: lambda: UpstreamHTTPError("bad gateway", status_code=502),
    DraftLimitExceeded: lambda: DraftLimitExceeded("too long", limit=DraftLimit.REPLY_CHARS),
    FetchError: lambda: FetchError("blocked", reason="blocked"),
}


def example(cls: type[GatewayError]) -> GatewayError:
    make = EXAMPLES.get(cls)
    return make() if make is not None else cls("boom")  # type: ignore[call-arg]


CLASSES = error_classes()


def render(error: GatewayError) -> Any:
    @get("/raise", sync_to_thread=False)
    def fail() -> None:
        raise error

    with create_test_client([fail], exception_handlers=exception_handlers(lambda: None)) as client:
        return client.get("/raise", follow_redirects=False)


def test_the_walk_finds_every_family() -> None:
    assert {ConfigurationError, RequestError, RunError, AuditError, StageError, LoginRequired} <= set(CLASSES)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_the_exception_map_renders_each_error_class(cls: type[GatewayError]) -> None:
    error = example(cls)
    response = render(error)
    if isinstance(error, LoginRequired):
        assert response.status_code == 303
        assert response.headers["location"] == "/clinician/login?next=/audit%3Foutcome%3Derror"
        return
    body = response.json()["error"]
    assert set(body) == {"message", "type", "param", "code"}
    assert body["code"] != "internal_error", f"{cls.__name__} falls through to the catch-all handler"
    if isinstance(error, ConfigurationError):
        assert (response.status_code, body["code"]) == (500, "configuration_error")
        assert "thresholds.yaml" not in body["message"]  # the operator reads it in the log
    elif isinstance(error, RequestError):
        assert (response.status_code, body["type"]) == (error.status_code, error.error_type)
    elif isinstance(error, AuditError):
        assert (response.status_code, body["code"]) == (503, "audit_unavailable")
        assert response.headers["retry-after"] == "5"
    elif isinstance(error, StageError):
        assert (response.status_code, body["code"]) == (503, refusal_reason(error).value)
    else:
        assert isinstance(error, RunError)
        assert response.status_code == 503


def test_anything_else_is_a_500_that_names_nothing() -> None:
    response = render(RuntimeError("secret detail"))  # type: ignore[arg-type]
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"
    assert "secret" not in response.text
