"""The gateway's error tree.

GatewayError
 ├── ConfigurationError        the operator's mistake: bad setting or policy file (stops start-up)
 ├── RequestError              the client's mistake: rendered as a 4xx in OpenAI's error format
 │    ├── AuthenticationError / PermissionDeniedError / RateLimitedError / PayloadTooLargeError
 │    └── ServiceUnavailableError (503) ── RateLimiterUnavailable   the shared limiter cannot be asked
 ├── AuditError                the audit store (SQLite or PostgreSQL) could not be written or checked:
 │                             the request fails closed with a 503, nothing is sent
 └── StageError                something failed at run time inside a pipeline stage
      ├── UpstreamError        the chat model could not give a usable draft
      │    ├── UpstreamTimeout / UpstreamUnavailable / UpstreamHTTPError / UpstreamRateLimited
      │    ├── UpstreamBusy / UpstreamQueueTimeout   no upstream slot free (concurrency limit)
      │    └── MalformedDraft  it answered, but not under the citation contract
      ├── StoreError           the knowledge store could not be read
      ├── VerifierError        a verifier could not decide
      └── FetchError           a cited URL could not be fetched (or was refused by the SSRF rules)

Run-time errors never become a 500 with model text: the pipeline turns each into a refusal with a
reason, and the error is counted.
"""

from __future__ import annotations

from typing import Self


class GatewayError(Exception):
    """Base of every error the gateway raises on purpose."""


class ConfigurationError(GatewayError):
    """A setting or a policy file is invalid. Names the source, the key and the reason."""

    def __init__(self, source: str, key: str, reason: str) -> None:
        super().__init__(f"{source}: {key}: {reason}")
        self.source = source
        self.key = key
        self.reason = reason


class RequestError(GatewayError):
    """The client sent something the gateway will not process."""

    status_code = 400
    error_type = "invalid_request_error"

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code


class AuthenticationError(RequestError):
    status_code = 401
    error_type = "authentication_error"


class PermissionDeniedError(RequestError):
    status_code = 403
    error_type = "permission_error"


class NotFoundError(RequestError):
    status_code = 404
    error_type = "not_found_error"


class PayloadTooLargeError(RequestError):
    status_code = 413


class RateLimitedError(RequestError):
    status_code = 429
    error_type = "rate_limit_error"

    def __init__(self, message: str, *, retry_after: int, code: str | None = "rate_limit_exceeded") -> None:
        super().__init__(message, code=code)
        self.retry_after = retry_after


class ServiceUnavailableError(RequestError):
    status_code = 503
    error_type = "service_unavailable"


class RateLimiterUnavailable(ServiceUnavailableError):
    """The shared rate limiter (Redis) could not be asked: the request is refused (fail closed)."""

    def __init__(self, message: str, *, retry_after: int = 1) -> None:
        super().__init__(message, code="rate_limiter_unavailable")
        self.retry_after = retry_after


class RunError(GatewayError):
    """Something failed at run time. ``stage`` names the stage it failed in (set by the stage runner,
    ``gateway.pipeline.stages``); ``kind`` is a bounded label used in metrics."""

    kind = "error"
    stage = ""

    @classmethod
    def from_exception(cls, stage: str, error: BaseException) -> Self:
        """Wrap an unexpected exception once, naming the stage it escaped from."""
        wrapped = cls(f"{stage} stage failed: {type(error).__name__}: {error}")
        wrapped.stage = stage
        return wrapped


class AuditError(RunError):
    """The audit store could not record a request (locked, deleted, unwritable, closed).

    Raised by every ``AuditStore`` backend (``write``, ``check``) in place of the driver's own error.
    The web layer turns it into a 503 ``audit_unavailable`` and releases no text (see
    docs/hardening.md, "Audit records").
    """

    kind = "audit"
    stage = "record"


class StageError(RunError):
    """A pipeline stage failed at run time: the request is refused with a reason, counted and audited."""


class UpstreamError(StageError):
    kind = "upstream_error"


class UpstreamTimeout(UpstreamError):
    kind = "timeout"


class UpstreamUnavailable(UpstreamError):
    kind = "connection"


class UpstreamRateLimited(UpstreamError):
    kind = "rate_limited"


class UpstreamBusy(UpstreamError):
    """Every upstream slot is taken and the wait queue is full (``LimitedUpstream``)."""

    kind = "queue_full"


class UpstreamQueueTimeout(UpstreamBusy):
    """A call waited too long for an upstream slot (``LimitedUpstream``)."""

    kind = "queue_timeout"


class UpstreamHTTPError(UpstreamError):
    kind = "http_status"

    def __init__(self, message: str, *, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class MalformedDraft(UpstreamError):
    """The model answered, but not under the citation contract or over a bound on its reply."""

    kind = "malformed"
    stage = "draft"
    """The model's reply is at fault wherever it is measured (also the bounds checked when splitting)."""


class DraftLimitExceeded(MalformedDraft):
    """The model's reply exceeds a bound (``limit``: reply_chars, repeated_sentences, statements)."""

    def __init__(self, message: str, *, limit: str) -> None:
        super().__init__(message)
        self.limit = limit


class StoreError(StageError):
    kind = "store"


class VerifierError(StageError):
    kind = "verifier"


class FetchError(StageError):
    """A URL could not be fetched. `reason` is a bounded label (blocked, timeout, status, too_large, ...)."""

    kind = "fetch"

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
