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
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import quote

import anyio.to_thread
import structlog
from litestar import Request
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from gateway.errors import (
    AuthenticationError,
    ConfigurationError,
    PermissionDeniedError,
    RateLimitedError,
    RequestError,
)
from gateway.settings import Secret, Settings
from gateway.web.auth_state import MAX_ENTRIES, FailedAuthThrottle, SessionRevocations
from gateway.web.clinician_auth import LOGIN_PATH, LoginRequired, StaffAuth, bearer_token

if TYPE_CHECKING:
    from gateway.metrics import GatewayMetrics

log = structlog.get_logger("gateway.auth")

Area = Literal["public", "client", "staff", "metrics"]
MetricsSource = Callable[[], "GatewayMetrics | None"]

PUBLIC_PATHS = frozenset({"/", "/healthz", "/readyz", "/favicon.ico", LOGIN_PATH, "/clinician/logout"})
"""Exact paths anyone may call."""
PUBLIC_PREFIXES = ("/static/", "/schema")
"""Path prefixes anyone may call: static assets and the OpenAPI schema."""
STAFF_PREFIXES = ("/clinician", "/audit", "/admin", "/v1/ingest", "/v1/admin")
"""Path prefixes that need a staff (clinician or admin) credential."""
CLIENT_PREFIX = "/v1/"
METRICS_PATH = "/metrics"

_KEY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_HEX_DIGEST = re.compile(r"^[0-9a-f]{64}$")
KEYS_FILE_VAR = "GATEWAY_API_KEYS_FILE"


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


# --- client keys --------------------------------------------------------------------------------


def hash_key(key: str) -> str:
    """The SHA-256 hex digest a keys file stores for ``key``."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ClientKey:
    """A client application's key, as stored: a non-secret name and the key's SHA-256 digest."""

    name: str
    digest: bytes


def parse_keys_file(text: str, source: str = KEYS_FILE_VAR) -> list[ClientKey]:
    """Read ``name:sha256hex`` lines; ``#`` comments and blank lines are skipped.

    Raises ConfigurationError naming the line for a malformed line or a repeated name (the line's
    content is never echoed: it may be a pasted plain key).
    """
    keys: list[ClientKey] = []
    names: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, digest = line.partition(":")
        name, digest = name.strip(), digest.strip().lower()
        if not sep or not _KEY_NAME.match(name) or not _HEX_DIGEST.match(digest):
            raise ConfigurationError(
                source,
                f"line {number}",
                "expected 'name:sha256hex' (name: letters, digits, '.', '_', '-'; "
                "digest: 64 hex characters from `trust-gateway keys hash`)",
            )
        if name in names:
            raise ConfigurationError(source, f"line {number}", f"key name {name!r} is repeated")
        names.add(name)
        keys.append(ClientKey(name, bytes.fromhex(digest)))
    return keys


class ClientKeyring:
    """The client keys a gateway accepts, compared by digest in constant time."""

    def __init__(self, keys: Sequence[ClientKey]) -> None:
        self._keys = tuple(keys)

    @classmethod
    def from_settings(cls, settings: Settings) -> ClientKeyring:
        keys: list[ClientKey] = []
        if settings.api_keys_file is not None:
            try:
                text = settings.api_keys_file.read_text(encoding="utf-8")
            except OSError as err:
                raise ConfigurationError(
                    KEYS_FILE_VAR, "api_keys_file", f"cannot read {settings.api_keys_file}: {err.strerror}"
                ) from None
            keys += parse_keys_file(text, f"{KEYS_FILE_VAR} ({settings.api_keys_file})")
        keys += _plain_keys(settings.api_keys, "key")
        if settings.page_api_key:
            keys += _plain_keys((settings.page_api_key,), "page")
        return cls(keys)

    @property
    def configured(self) -> bool:
        return bool(self._keys)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self._keys)

    def identify(self, candidate: str) -> str | None:
        """The name of the key ``candidate`` is, or None; compares against every key."""
        given = hashlib.sha256(candidate.encode("utf-8")).digest()
        found: str | None = None
        for key in self._keys:
            if hmac.compare_digest(key.digest, given) and found is None:
                found = key.name
        return found


def _plain_keys(secrets: Iterable[Secret], prefix: str) -> list[ClientKey]:
    present = [s for s in secrets if s]
    if len(present) == 1 and prefix == "page":
        return [ClientKey("page", hashlib.sha256(present[0].reveal().encode("utf-8")).digest())]
    return [
        ClientKey(f"{prefix}{index}", hashlib.sha256(secret.reveal().encode("utf-8")).digest())
        for index, secret in enumerate(present, start=1)
    ]


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_exposure(settings: Settings, keyring: ClientKeyring) -> None:
    """Refuse to serve without client keys on a non-loopback host; warn when running open on loopback."""
    if keyring.configured:
        return
    if not is_loopback_host(settings.host):
        raise ConfigurationError(
            "GATEWAY_API_KEYS",
            "api_keys",
            f"no client API key is configured but the gateway is bound to {settings.host!r}; set "
            "GATEWAY_API_KEYS_FILE or GATEWAY_API_KEYS, or bind to 127.0.0.1",
        )
    log.warning(
        "running_without_api_keys",
        host=settings.host,
        detail="no client API key configured: /v1/* is open to anyone who can reach this loopback "
        "address; configure GATEWAY_API_KEYS_FILE before exposing the gateway",
    )


# --- rate limiting ------------------------------------------------------------------------------


class RateLimiter(Protocol):
    """What the guard needs of a limiter: per process (``TokenBucketLimiter``) or shared in Redis
    (``gateway.web.redis_limiter.RedisTokenBucketLimiter``)."""

    @property
    def enabled(self) -> bool: ...

    def acquire(self, key: str) -> float:
        """0.0 when granted, else the seconds until a token is available."""
        ...

    def check(self) -> None:
        """Raise when the limiter cannot answer now (``/readyz``); a no-op in process."""
        ...

    def close(self) -> None: ...


class TokenBucketLimiter:
    """One token bucket per key name: ``burst`` tokens, refilled at ``per_minute / 60`` per second.

    The number of buckets is bounded by the number of configured keys. Thread-safe.
    """

    def __init__(
        self,
        per_minute: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int | None = None,
    ) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self._clock = clock
        self._max_keys = max_keys
        """Keys are client addresses for the failed-authentication throttle: bound them."""
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def acquire(self, key: str) -> float:
        """Take a token for ``key``: 0.0 when granted, else the seconds until one is available."""
        if not self.enabled:
            return 0.0
        now = self._clock()
        with self._lock:
            if self._max_keys is not None and len(self._buckets) >= self._max_keys:
                self._forget_full(now)
                if len(self._buckets) >= self._max_keys:  # still full: forget the oldest key
                    del self._buckets[next(iter(self._buckets))]
            tokens, last = self._buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate

    def _forget_full(self, now: float) -> None:
        """Drop buckets that have refilled (indistinguishable from new ones); called under the lock."""
        full = [k for k, (t, last) in self._buckets.items() if t + (now - last) * self.rate >= self.burst]
        for key in full:
            del self._buckets[key]

    def check(self) -> None:
        """Always ready: the buckets are in this process."""

    def close(self) -> None:
        """Nothing to release."""


class LimiterHandle:
    """The app's limiter as a handler dependency (Litestar checks a dependency's type, and cannot
    check one against a Protocol)."""

    def __init__(self, limiter: RateLimiter) -> None:
        self.limiter = limiter


def build_rate_limiter(
    settings: Settings,
    metrics: MetricsSource = lambda: None,
    *,
    per_minute: float | None = None,
    burst: int | None = None,
    prefix: str = "gateway:ratelimit:client:",
) -> RateLimiter:
    """A token-bucket limiter: in Redis when ``GATEWAY_REDIS_URL`` is set (shared by every replica),
    else in process. Defaults to the per-client-key limits of the settings; build another limiter
    (e.g. failed logins per address) with its own ``per_minute``, ``burst`` and ``prefix``.
    """
    rate = settings.rate_limit_per_minute if per_minute is None else per_minute
    size = settings.rate_limit_burst if burst is None else burst
    if not settings.redis_url:
        return TokenBucketLimiter(rate, size)
    from gateway.web.redis_limiter import RedisTokenBucketLimiter, redis_client

    def count_error() -> None:
        registry = metrics()
        if registry is not None:
            registry.rate_limiter_errors.inc()

    return RedisTokenBucketLimiter(
        redis_client(settings.redis_url.reveal(), settings.redis_timeout),
        rate,
        size,
        prefix=prefix,
        on_error=count_error,
    )


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
        except AuthenticationError as err:
            missing = (err.code or "").startswith("missing")
            self._count(area, "missing" if missing else "invalid")
            if not missing and self.throttle.failed(address) > 0:
                raise self._throttled(area, self.throttle.blocked_for(address)) from None
            raise
        except PermissionDeniedError:
            self._count(area, "forbidden")
            raise
        except LoginRequired:
            self._count(area, "missing")
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
            await _redirect(send, f"{LOGIN_PATH}?next={quote(login.next_path, safe='/')}")
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
