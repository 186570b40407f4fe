"""The gateway's error tree: three families, as pydantic-ai's ``UserError`` / ``AgentRunError``.

GatewayError
 ├── ConfigurationError        the operator's mistake: a setting, policy, keys or shipped data file is
 │    │                        invalid (stale trained weights included); stops start-up (CLI exit 2)
 │    └── InvalidValue         a policy dataclass's own check failed (also a ValueError, so that pydantic
 │                             records it where the dataclass sits in the file: ``gateway.validation``)
 ├── RequestError              refused at the HTTP boundary, before the pipeline, in OpenAI's error
 │    │                        format: the client's mistake (4xx) or a gateway that cannot take it now
 │    ├── AuthenticationError (401) ── LoginRequired   a browser without a staff session: to the login page
 │    ├── PermissionDeniedError (403) / NotFoundError (404) / PayloadTooLargeError (413)
 │    ├── UnsupportedMediaTypeError (415)   a JSON endpoint sent a form, text or XML
 │    ├── RateLimitedError (429)
 │    └── ServiceUnavailableError (503) ── RateLimiterUnavailable   the shared limiter cannot be asked
 └── RunError                  something failed at run time; ``stage`` names where
      ├── AuditError           the audit store could not be written or checked: the request fails as a
      │                        whole with a 503, nothing is sent
      └── StageError           a pipeline stage failed: the request is refused with a reason, counted, audited
           ├── UpstreamError   the chat model could not give a usable draft
           │    ├── UpstreamTimeout / UpstreamUnavailable / UpstreamHTTPError / UpstreamRateLimited
           │    ├── UpstreamBusy ── UpstreamQueueTimeout   no upstream slot free (concurrency limit)
           │    └── MalformedDraft ── DraftLimitExceeded   it answered, but not under the citation contract
           ├── StoreError      the knowledge store could not be read
           ├── NothingToQuote  the extractive responder found no passage sentence close enough to the
           │                   question: a refusal (``nothing_to_quote``), not a failure nor a stage error
           ├── VerifierError   a verifier could not decide
           │    └── JudgeOutputError   the judge answered, but not with its JSON verdict
           └── FetchError      a cited URL could not be fetched (or was refused by the SSRF rules)

Run-time errors never become a 500 with model text: the stage runner (``gateway.pipeline.stages``)
names and counts a failed stage and the pipeline refuses with a reason. Every class here is rendered
by the one exception map (``gateway.web.errors.exception_handlers``). Modules may keep private
control-flow exceptions that never leave them (``fetching.fetcher._Refused``, ``knowledge.loaders._Bad``).
"""

from __future__ import annotations

from typing import Self

from gateway.vocabulary import DraftLimit, StageName, UpstreamErrorType


class GatewayError(Exception):
    """Base of every error the gateway raises on purpose."""


class ConfigurationError(GatewayError):
    """A setting or a policy file is invalid. Names the source, the key and the reason."""

    def __init__(self, source: str, key: str, reason: str) -> None:
        super().__init__(f"{source}: {key}: {reason}")
        self.source = source
        self.key = key
        self.reason = reason


class InvalidValue(ConfigurationError, ValueError):
    """A check in a policy dataclass failed; ``source`` is the dataclass, ``key`` its field.

    Built directly, it is the ConfigurationError; validated from a file, pydantic records it at the
    dataclass's location and ``gateway.validation.configuration_error`` names the file and dotted key.
    """


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


class LoginRequired(AuthenticationError):
    """A browser asked for a staff page without a valid session: it is sent to the login page."""

    def __init__(self, next_path: str) -> None:
        super().__init__("Log in to see this page.", code="login_required")
        self.next_path = next_path


class PermissionDeniedError(RequestError):
    status_code = 403
    error_type = "permission_error"


class NotFoundError(RequestError):
    status_code = 404
    error_type = "not_found_error"


class PayloadTooLargeError(RequestError):
    status_code = 413


class UnsupportedMediaTypeError(RequestError):
    """A JSON endpoint was sent a body that is not ``application/json`` (a form post, text, XML)."""

    status_code = 415


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
    stage: str = StageName.RECORD


class StageError(RunError):
    """A pipeline stage failed at run time: the request is refused with a reason, counted and audited."""


class UpstreamError(StageError):
    kind: str = UpstreamErrorType.UPSTREAM_ERROR


class UpstreamTimeout(UpstreamError):
    kind = UpstreamErrorType.TIMEOUT


class UpstreamUnavailable(UpstreamError):
    kind = UpstreamErrorType.CONNECTION


class UpstreamRateLimited(UpstreamError):
    kind = UpstreamErrorType.RATE_LIMITED


class UpstreamBusy(UpstreamError):
    """Every upstream slot is taken and the wait queue is full (``models.limits.CallLimits``)."""

    kind = UpstreamErrorType.QUEUE_FULL


class UpstreamQueueTimeout(UpstreamBusy):
    """A call waited too long for an upstream slot (``models.limits.CallLimits``)."""

    kind = UpstreamErrorType.QUEUE_TIMEOUT


class UpstreamHTTPError(UpstreamError):
    kind = UpstreamErrorType.HTTP_STATUS

    def __init__(self, message: str, *, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class NothingToQuote(StageError):
    """The built-in extractive responder found no passage sentence close enough to the question.

    A correct refusal (``RefusalReason.NOTHING_TO_QUOTE``), not an outage: the stage runner does not
    count it as a stage error and the request is counted as refused, not as an error."""

    stage: str = StageName.DRAFT


class MalformedDraft(UpstreamError):
    """The model answered, but not under the citation contract or over a bound on its reply."""

    kind = UpstreamErrorType.MALFORMED
    stage: str = StageName.DRAFT
    """The model's reply is at fault wherever it is measured (also the bounds checked when splitting)."""


class DraftLimitExceeded(MalformedDraft):
    """The model's reply exceeds a bound (``limit``: ``DraftLimit``)."""

    def __init__(self, message: str, *, limit: DraftLimit) -> None:
        super().__init__(message)
        self.limit = limit


class StoreError(StageError):
    kind = "store"


class VerifierError(StageError):
    kind = "verifier"


class JudgeOutputError(VerifierError):
    """The judge answered, but not with the JSON verdict it was asked for (its claim fails closed)."""


class FetchError(StageError):
    """A URL could not be fetched. `reason` is a bounded label (blocked, timeout, status, too_large, ...)."""

    kind = "fetch"

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
