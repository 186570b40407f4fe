"""Who may call what: client API keys, staff credentials, an optional metrics token, per-key rate limits.

One ASGI middleware (``access_control(settings, ...)``, wired in ``app.py``) decides for every routed
request, by path, which credential it needs:

============================  =====================================================================
``/v1/*``                     a client API key (``Authorization: Bearer <key>``), then the per-key
                              token bucket (429 with ``Retry-After`` when empty)
``/clinician*``, ``/audit*``  a staff credential (``gateway.web.clinician_auth``: Bearer clinician key
``/admin*``, ``/v1/ingest*``  or the signed session cookie; browsers are sent to the login page)
``/v1/admin*``
``/metrics``                  ``GATEWAY_METRICS_TOKEN`` as a Bearer token when set, else open
``/``, ``/healthz``,          open
``/readyz``, ``/static/*``,
``/schema*``, login/logout
anything else                 a staff credential (fail closed: a new route is private until listed)
============================  =====================================================================

Client keys are stored hashed: ``GATEWAY_API_KEYS_FILE`` holds ``name:sha256hex`` lines (``#`` comments
and blank lines allowed; ``trust-gateway keys hash`` prints a line), and plain ``GATEWAY_API_KEYS`` /
``GATEWAY_PAGE_API_KEY`` are hashed when loaded. A presented key is hashed and compared with every
stored digest by ``hmac.compare_digest``; the key's *name* (never the key) identifies it in logs, rate
limits and request state.

With no client key configured the gateway runs open (no identity, no per-key limit), which is allowed
only when it is bound to a loopback address and is announced by a warning at start-up; on any other
host ``check_exposure`` refuses to start with a ConfigurationError naming ``GATEWAY_API_KEYS``.

Failures are OpenAI-shaped errors: 401 ``authentication_error`` (missing or unknown credential), 403
``permission_error`` (a valid credential of the wrong role, e.g. a client key on the audit pages or a
clinician key on ``/v1``), 429 ``rate_limit_error``. Each is counted in
``gateway_auth_failures_total{area,reason}`` / ``gateway_rate_limited_total``; no credential is logged.

The token buckets live in this process, or in Redis when ``GATEWAY_REDIS_URL`` is set so that every
replica draws from the same bucket (``gateway.web.redis_limiter``); when Redis does not answer the
request gets a 503 ``rate_limiter_unavailable`` (fail closed), counted in
``gateway_rate_limiter_errors_total``.

This module is the guard and its middleware; the keys are ``client_keys.py``, the token buckets
``rate_limits.py``.
"""

from __future__ import annotations

import hmac
import math
from collections.abc import Callable
from typing import Any, Literal

import anyio.to_thread
import structlog
from litestar import Request
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from gateway.errors import (
    AuthenticationError,
    LoginRequired,
    PermissionDeniedError,
    RateLimitedError,
    RequestError,
)
from gateway.settings import Settings
from gateway.web.auth_state import MAX_ENTRIES, FailedAuthThrottle, SessionRevocations
from gateway.web.client_keys import ClientKeyring, check_exposure
from gateway.web.clinician_auth import LOGIN_PATH, StaffAuth, bearer_token, login_location
from gateway.web.rate_limits import MetricsSource, RateLimiter, TokenBucketLimiter

log = structlog.get_logger("gateway.auth")

Area = Literal["public", "client", "staff", "metrics"]

PUBLIC_PATHS = frozenset({"/", "/healthz", "/readyz", "/favicon.ico", LOGIN_PATH, "/clinician/logout"})
"""Exact paths anyone may call."""
PUBLIC_PREFIXES = ("/static/", "/schema")
"""Path prefixes anyone may call: static assets and the OpenAPI schema."""
STAFF_PREFIXES = ("/clinician", "/audit", "/admin", "/v1/ingest", "/v1/admin")
"""Path prefixes that need a staff (clinician or admin) credential."""
CLIENT_PREFIX = "/v1/"
METRICS_PATH = "/metrics"


def area_of(path: str) -> Area:
    """Which credential ``path`` needs (see the module docstring's table)."""
    if path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES):
        return "public"
    if path == METRICS_PATH:
        return "metrics"
    if any(path == p or path.startswith(p + "/") or path.startswith(p + "?") for p in STAFF_PREFIXES):
        return "staff"
    if path.startswith(CLIENT_PREFIX):
        return "client"
    return "staff"


# --- the guard and its middleware ---------------------------------------------------------------


class AccessGuard:
    """Checks one request against the access table; raises RequestErrors or LoginRequired."""

    def __init__(
        self,
        settings: Settings,
        *,
        keyring: ClientKeyring | None = None,
        limiter: RateLimiter | None = None,
        metrics: MetricsSource = lambda: None,
        sessions: SessionRevocations | None = None,
        throttle: FailedAuthThrottle | None = None,
    ) -> None:
        self.keyring = keyring or ClientKeyring.from_settings(settings)
        self.sessions = sessions or SessionRevocations()
        self.throttle = throttle or failed_auth_throttle(settings)
        self.staff = StaffAuth.from_settings(settings, self.sessions)
        self.limiter: RateLimiter = limiter or TokenBucketLimiter(
            settings.rate_limit_per_minute, settings.rate_limit_burst
        )
        self.limiter_blocks = bool(settings.redis_url) or not isinstance(self.limiter, TokenBucketLimiter)
        """Limiters in Redis do network I/O: the middleware then runs every non-public check off the
        event loop (any limiter built by ``build_rate_limiter`` for these settings is in Redis too)."""
        self._metrics_token = settings.metrics_token.reveal().encode("utf-8")
        self._metrics = metrics

    def check(self, request: Request[Any, Any, Any]) -> str | None:
        """The client key name for ``/v1`` requests (None when open), after every check passed."""
        area = area_of(request.url.path)
        if area == "public":
            return None
        address = client_address(request)
        blocked = self.throttle.blocked_for(address)
        if blocked > 0:
            raise self._throttled(area, blocked)
        try:
            if area == "metrics":
                self._check_metrics(request)
                return None
            if area == "staff":
                self._check_staff(request)
                return None
            return self._check_client(request)
        except LoginRequired:  # an AuthenticationError that sends a browser to the login page
            self._count(area, "missing")
            raise
        except AuthenticationError as err:
            missing = (err.code or "").startswith("missing")
            self._count(area, "missing" if missing else "invalid")
            if not missing and self.throttle.failed(address) > 0:
                raise self._throttled(area, self.throttle.blocked_for(address)) from None
            raise
        except PermissionDeniedError:
            self._count(area, "forbidden")
            raise

    def _check_client(self, request: Request[Any, Any, Any]) -> str | None:
        if not self.keyring.configured:
            return None
        bearer = bearer_token(request)
        if bearer is None:
            raise AuthenticationError(
                "An API key is required: send it as 'Authorization: Bearer <key>'.",
                code="missing_api_key",
            )
        name = self.keyring.identify(bearer) if bearer else None
        if name is None:
            if bearer and self.staff.verify_key(bearer) is not None:
                raise PermissionDeniedError(
                    "A clinician credential cannot call the client API; use a client API key.",
                    code="insufficient_role",
                )
            raise AuthenticationError("The API key is not valid.", code="invalid_api_key")
        wait = self.limiter.acquire(name)
        if wait > 0:
            metrics = self._metrics()
            if metrics is not None:
                metrics.rate_limited.inc()
            log.info("rate_limited", key_name=name, retry_after=math.ceil(wait))
            raise RateLimitedError(
                "Too many requests for this API key; retry after the time in the Retry-After header.",
                retry_after=max(1, math.ceil(wait)),
            )
        return name

    def _check_staff(self, request: Request[Any, Any, Any]) -> None:
        try:
            self.staff.require(request)
        except LoginRequired:  # a browser goes to the login page, whatever key it sent
            raise
        except AuthenticationError:
            bearer = bearer_token(request)
            if bearer and self.keyring.identify(bearer) is not None:
                raise PermissionDeniedError(
                    "A client API key does not give access to clinician or admin pages.",
                    code="insufficient_role",
                ) from None
            raise

    def _check_metrics(self, request: Request[Any, Any, Any]) -> None:
        if not self._metrics_token:
            return
        bearer = bearer_token(request)
        if bearer is None:
            raise AuthenticationError(
                "/metrics needs the metrics token (Authorization: Bearer <token>).",
                code="missing_metrics_token",
            )
        if not hmac.compare_digest(bearer.encode("utf-8"), self._metrics_token):
            raise AuthenticationError("The metrics token is not valid.", code="invalid_metrics_token")

    def _throttled(self, area: str, wait: float) -> RateLimitedError:
        metrics = self._metrics()
        if metrics is not None:
            metrics.auth_throttled.inc()
        log.info("auth_throttled", area=area, retry_after=math.ceil(wait))
        return throttled_error(wait)

    def _count(self, area: str, reason: str) -> None:
        metrics = self._metrics()
        if metrics is not None:
            metrics.auth_failures.labels(area=area, reason=reason).inc()
        log.info("access_denied", area=area, reason=reason)


class AccessMiddleware:
    """ASGI middleware running ``AccessGuard.check`` before every routed HTTP request."""

    def __init__(self, app: ASGIApp, guard: AccessGuard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        request: Request[Any, Any, Any] = Request(scope)
        try:
            if self.guard.limiter_blocks and area_of(request.url.path) != "public":
                key_name = await anyio.to_thread.run_sync(self.guard.check, request)
            else:
                key_name = self.guard.check(request)
        except LoginRequired as login:
            await _redirect(send, login_location(login.next_path))
            return
        except RequestError:
            raise  # rendered by the app's RequestError handler in OpenAI's error format
        if key_name is not None:
            scope.setdefault("state", {})["client_key"] = key_name
        await self.app(scope, receive, send)


async def _redirect(send: Send, location: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [(b"location", location.encode("latin-1")), (b"content-length", b"0")],
        }
    )
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def client_address(request: Request[Any, Any, Any]) -> str:
    """The peer address the failed-authentication throttle counts (the proxy's, behind one, unless
    the server is run with forwarded-header support)."""
    client = request.client
    return client.host if client is not None and client.host else "unknown"


def failed_auth_throttle(settings: Settings) -> FailedAuthThrottle:
    """The per-address throttle of failed authentications: a second ``TokenBucketLimiter``."""
    limiter = TokenBucketLimiter(
        settings.auth_failures_per_minute, settings.auth_failures_burst, max_keys=MAX_ENTRIES
    )
    return FailedAuthThrottle(limiter)


def throttled_error(wait: float) -> RateLimitedError:
    return RateLimitedError(
        "Too many failed authentications from this address; retry after the time in the Retry-After header.",
        retry_after=max(1, math.ceil(wait)),
        code="too_many_failed_authentications",
    )


def access_control(
    settings: Settings,
    metrics: MetricsSource = lambda: None,
    sessions: SessionRevocations | None = None,
    throttle: FailedAuthThrottle | None = None,
    limiter: RateLimiter | None = None,
) -> Callable[[ASGIApp], ASGIApp]:
    """The middleware factory to list in ``Litestar(middleware=[...])``.

    Loads the keys (ConfigurationError for a bad keys file) and applies ``check_exposure`` now, so a
    misconfigured gateway stops at start-up rather than at the first request. ``sessions`` and
    ``throttle`` are shared with the login and logout handlers (``app.py``); ``limiter`` defaults to
    the per-process token bucket (``build_rate_limiter`` gives the Redis one when configured).
    """
    guard = AccessGuard(settings, metrics=metrics, sessions=sessions, throttle=throttle, limiter=limiter)
    check_exposure(settings, guard.keyring)

    def wrap(app: ASGIApp) -> ASGIApp:
        return AccessMiddleware(app, guard)

    return wrap
