"""Who may call what: client API keys, staff credentials, an optional metrics token, per-key rate limits.

Access is decided by Litestar guards on the routers (``Access``, built once in ``app.py`` with the keys,
the staff credentials, the rate limiter and the failed-authentication throttle). Every route has
exactly one ``AccessRule`` among its guards, one per group of routes:

==========================================  ===========================================================
``access.client``: the JSON API (``/v1/*``)  a client API key (``Authorization: Bearer <key>``), then
                                            the per-key token bucket (429 with ``Retry-After`` when
                                            empty)
``access.staff``: clinician and audit pages  a staff credential (``gateway.web.clinician_auth``: Bearer
                                            clinician key or the signed session cookie; browsers are
                                            sent to the login page)
``access.metrics``: ``/metrics``            ``GATEWAY_METRICS_TOKEN`` as a Bearer token when set, else
                                            open
``access.public``: ``/``, ``/healthz``,     open
``/readyz``, ``/static/*``, ``/schema*``,
login/logout
==========================================  ===========================================================

``Access.check_routes(app)`` runs at start-up: a route with no rule or two (a handler registered outside
the routers, say) stops the app, so no route is open by omission. Which rule each route has is stated
route by route in ``tests/security/test_access_rules.py`` (a new route fails that test until it is
listed there). A path no route matches is a 404 before any guard runs.

The staff rule keeps the ``Principal`` it found in the request's scope state; ``provide_staff``, the
dependency the staff pages take, hands that one to the handler instead of deciding access again.

Client keys are stored hashed: ``GATEWAY_API_KEYS_FILE`` holds ``name:sha256hex`` lines (``#`` comments
and blank lines allowed; ``trust-gateway keys hash`` prints a line), and plain ``GATEWAY_API_KEYS`` /
``GATEWAY_PAGE_API_KEY`` are hashed when loaded. A presented key is hashed and compared with every
stored digest by ``hmac.compare_digest``; the key's *name* (never the key) identifies it in logs, rate
limits and request state.

With no client key configured the gateway runs open (no identity, no per-key limit), which is allowed
only when it is bound to a loopback address and is announced by a warning at start-up; on any other
host ``check_exposure`` refuses to start with a ConfigurationError naming ``GATEWAY_API_KEYS``.

Failures are OpenAI-shaped errors, rendered by the app's one exception map (``web/errors.py``): 401
``authentication_error`` (missing or unknown credential), 403 ``permission_error`` (a valid credential
of the wrong role, e.g. a client key on the audit pages or a clinician key on ``/v1``), 429
``rate_limit_error``; a browser without a staff session gets a 303 to the login form (``LoginRequired``).
Each is counted in ``gateway_auth_failures_total{area,reason}`` / ``gateway_rate_limited_total``; no
credential is logged.

The token buckets live in this process, or in Redis when ``GATEWAY_REDIS_URL`` is set so that every
replica draws from the same bucket (``gateway.web.redis_limiter``); when Redis does not answer the
request gets a 503 ``rate_limiter_unavailable`` (fail closed), counted in
``gateway_rate_limiter_errors_total``. A guard then runs its check off the event loop.

This module is the rules and their guards; the keys are ``client_keys.py``, the token buckets
``rate_limits.py``.
"""

from __future__ import annotations

import hmac
import math
from typing import Any, cast

import anyio.to_thread
import structlog
from litestar import Litestar, Request
from litestar.connection import ASGIConnection
from litestar.exceptions import ImproperlyConfiguredException
from litestar.handlers.base import BaseRouteHandler
from litestar.routes import HTTPRoute

from gateway.errors import (
    AuthenticationError,
    LoginRequired,
    PermissionDeniedError,
    RateLimitedError,
)
from gateway.settings import Settings
from gateway.vocabulary import AccessArea, AuthFailure
from gateway.web.auth_state import MAX_ENTRIES, FailedAuthThrottle, SessionRevocations
from gateway.web.client_keys import ClientKeyring, check_exposure
from gateway.web.clinician_auth import Principal, StaffAuth, bearer_token
from gateway.web.rate_limits import MetricsSource, RateLimiter, TokenBucketLimiter

log = structlog.get_logger("gateway.auth")

STAFF_STATE = "staff_principal"
"""The scope-state key under which the staff rule keeps the request's ``Principal``."""


# --- the checks and the guards ----------------------------------------------------------------------


class AccessGuard:
    """The checks of every area, with the credentials, limiter and throttle they use; raises
    RequestErrors or LoginRequired. ``Access`` wraps it in one Litestar guard per area."""

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
        """Limiters in Redis do network I/O: the guards then run every non-public check off the
        event loop (any limiter built by ``build_rate_limiter`` for these settings is in Redis too)."""
        self._metrics_token = settings.metrics_token.reveal().encode("utf-8")
        self._metrics = metrics

    def check(self, request: Request[Any, Any, Any], area: AccessArea) -> str | Principal | None:
        """After every check of ``area`` passed: the client key name for the client area (None when
        open), the staff ``Principal`` for the staff area, else None."""
        if area is AccessArea.PUBLIC:
            return None
        address = client_address(request)
        blocked = self.throttle.blocked_for(address)
        if blocked > 0:
            raise self._throttled(area, blocked)
        try:
            if area is AccessArea.METRICS:
                self._check_metrics(request)
                return None
            if area is AccessArea.STAFF:
                return self._check_staff(request)
            return self._check_client(request)
        except LoginRequired:  # an AuthenticationError that sends a browser to the login page
            self._count(area, AuthFailure.MISSING)
            raise
        except AuthenticationError as err:
            missing = (err.code or "").startswith("missing")
            self._count(area, AuthFailure.MISSING if missing else AuthFailure.INVALID)
            if not missing and self.throttle.failed(address) > 0:
                raise self._throttled(area, self.throttle.blocked_for(address)) from None
            raise
        except PermissionDeniedError:
            self._count(area, AuthFailure.FORBIDDEN)
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

    def _check_staff(self, request: Request[Any, Any, Any]) -> Principal:
        try:
            return self.staff.require(request)
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

    def _throttled(self, area: AccessArea, wait: float) -> RateLimitedError:
        metrics = self._metrics()
        if metrics is not None:
            metrics.auth_throttled.inc()
        log.info("auth_throttled", area=area, retry_after=math.ceil(wait))
        return throttled_error(wait)

    def _count(self, area: AccessArea, reason: AuthFailure) -> None:
        metrics = self._metrics()
        if metrics is not None:
            metrics.auth_failures.labels(area=area, reason=reason).inc()
        log.info("access_denied", area=area, reason=reason)


class AccessRule:
    """A Litestar guard: the one access rule of a group of routes (``area``), checked by ``checks``."""

    def __init__(self, area: AccessArea, checks: AccessGuard) -> None:
        self.area = area
        self._checks = checks

    async def __call__(self, connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
        if self.area is AccessArea.PUBLIC:
            return
        request = cast("Request[Any, Any, Any]", connection)  # every route is HTTP: a Request
        if self._checks.limiter_blocks:
            found = await anyio.to_thread.run_sync(self._checks.check, request, self.area)
        else:
            found = self._checks.check(request, self.area)
        if isinstance(found, Principal):
            connection.scope.setdefault("state", {})[STAFF_STATE] = found
        elif found is not None:
            connection.scope.setdefault("state", {})["client_key"] = found

    def __deepcopy__(self, memo: dict[int, Any]) -> AccessRule:
        """Litestar copies a router when it registers it: every copy must keep this one rule, with
        the one keyring, limiter and throttle of the app (a copy would start empty buckets)."""
        return self

    def __repr__(self) -> str:
        return f"AccessRule({self.area.value!r})"


class Access:
    """The app's access rules, built once at start-up: one guard per area, to put on the routers.

    Loads the keys (ConfigurationError for a bad keys file) and applies ``check_exposure`` now, so a
    misconfigured gateway stops at start-up rather than at the first request. ``sessions`` and
    ``throttle`` are shared with the login and logout handlers (``app.py``); ``limiter`` defaults to
    the per-process token bucket (``build_rate_limiter`` gives the Redis one when configured).
    """

    def __init__(
        self,
        settings: Settings,
        metrics: MetricsSource = lambda: None,
        sessions: SessionRevocations | None = None,
        throttle: FailedAuthThrottle | None = None,
        limiter: RateLimiter | None = None,
    ) -> None:
        checks = AccessGuard(settings, metrics=metrics, sessions=sessions, throttle=throttle, limiter=limiter)
        check_exposure(settings, checks.keyring)
        self.public = AccessRule(AccessArea.PUBLIC, checks)
        self.client = AccessRule(AccessArea.CLIENT, checks)
        self.staff = AccessRule(AccessArea.STAFF, checks)
        self.metrics = AccessRule(AccessArea.METRICS, checks)

    @staticmethod
    def check_routes(app: Litestar) -> None:
        """Every route handler of ``app`` (all HTTP) has exactly one access rule; otherwise
        ImproperlyConfiguredException names the route."""
        for route in app.routes:
            if not isinstance(route, HTTPRoute):  # the gateway serves HTTP only: fail closed
                raise ImproperlyConfiguredException(
                    f"{route.path} is not an HTTP route; no access rule covers it."
                )
            for handler in route.route_handlers:
                rules = access_rules(handler)
                if len(rules) != 1:
                    methods = ",".join(sorted(handler.http_methods))
                    raise ImproperlyConfiguredException(
                        f"{methods} {route.path} has {len(rules)} access rules; it needs exactly one "
                        "(a guard of gateway.web.auth.Access on its router)."
                    )


async def provide_staff(request: Request[Any, Any, Any]) -> Principal:
    """Litestar dependency of the staff pages: the ``Principal`` the staff rule found. Access was
    decided by the rule, which runs before any dependency; a route that takes ``staff`` without the
    staff rule is refused (fail closed)."""
    principal = request.scope.get("state", {}).get(STAFF_STATE)
    if not isinstance(principal, Principal):
        raise PermissionDeniedError(
            "This page needs the staff access rule; none checked the request.", code="insufficient_role"
        )
    return principal


def access_rules(handler: BaseRouteHandler) -> list[AccessRule]:
    """The access rules among ``handler``'s guards (every layer's); exactly one in a built app."""
    return [g for g in handler.resolve_guards() if isinstance(g, AccessRule)]


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
