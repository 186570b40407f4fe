"""Per-key token buckets: in process (``TokenBucketLimiter``) or shared in Redis by every replica
(``gateway.web.redis_limiter``), chosen by ``build_rate_limiter``. See ``gateway.web.auth``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from gateway.settings import Settings

if TYPE_CHECKING:
    from gateway.metrics import GatewayMetrics


MetricsSource = Callable[[], "GatewayMetrics | None"]


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
