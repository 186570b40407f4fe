"""Rate limits shared by every replica: the per-key token bucket kept in Redis (``GATEWAY_REDIS_URL``).

A drop-in for ``gateway.web.rate_limits.TokenBucketLimiter`` (``enabled``, ``acquire(key) -> float``): the
same bucket (``burst`` tokens, refilled at ``per_minute / 60`` per second), but its state lives in one
Redis hash per key and is updated by one Lua script, so a check-and-take is atomic across replicas and
two replicas together allow the configured rate, not twice it. The script reads Redis's own clock
(``TIME``), so the replicas' clocks need not agree. Buckets expire once they would be full again.

When Redis does not answer within ``GATEWAY_REDIS_TIMEOUT`` the request is refused (fail closed):
``RateLimiterUnavailable``, a 503 in OpenAI's error format with code ``rate_limiter_unavailable``,
counted in ``gateway_rate_limiter_errors_total``. Why fail closed rather than open: see
docs/operations.md ("When a shared service is down").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis
import structlog
from redis.backoff import NoBackoff
from redis.retry import Retry

from gateway.errors import RateLimiterUnavailable

log = structlog.get_logger("gateway.auth")

BUCKET_SCRIPT = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local ttl_ms = tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local last = tonumber(state[2])
if tokens == nil or last == nil then
  tokens = burst
  last = now
end
tokens = math.min(burst, tokens + math.max(0, now - last) * rate)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = (1 - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'ts', string.format('%.17g', now))
redis.call('PEXPIRE', KEYS[1], ttl_ms)
return string.format('%.17g', wait)
"""
"""KEYS[1]: the bucket; ARGV: tokens per second, burst, expiry in ms. Returns the wait in seconds."""


def redis_client(url: str, timeout: float) -> redis.Redis:
    """A client that gives up after ``timeout`` seconds and retries once at once (a stale pooled
    connection after a Redis restart), never with a back-off that would hold the request."""
    client: redis.Redis = redis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 1),
        health_check_interval=30,
    )
    return client


class RedisTokenBucketLimiter:
    """One token bucket per key name, in Redis, shared by every replica. Thread-safe."""

    def __init__(
        self,
        client: redis.Redis,
        per_minute: float,
        burst: int,
        *,
        prefix: str = "gateway:ratelimit:",
        on_error: Callable[[], None] = lambda: None,
    ) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self.prefix = prefix
        self._client = client
        self._script: Any = client.register_script(BUCKET_SCRIPT)
        self._ttl_ms = int((self.burst / self.rate + 1) * 1000) if self.rate > 0 else 0
        self._on_error = on_error

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def acquire(self, key: str) -> float:
        """Take a token for ``key``: 0.0 when granted, else the seconds until one is available.

        Raises RateLimiterUnavailable when Redis does not answer (after counting it via ``on_error``).
        """
        if not self.enabled:
            return 0.0
        try:
            wait = self._script(
                keys=[self.prefix + key], args=[repr(self.rate), repr(self.burst), self._ttl_ms]
            )
            return float(wait)
        except redis.RedisError as err:
            self._on_error()
            log.warning("rate_limiter_unavailable", key_name=key, error_type=type(err).__name__)
            raise RateLimiterUnavailable(
                "The rate limiter is unavailable, so the request was not processed; retry shortly."
            ) from err

    def check(self) -> None:
        """Raise RateLimiterUnavailable unless Redis answers a PING now (used by ``/readyz``)."""
        try:
            self._client.ping()
        except redis.RedisError as err:
            raise RateLimiterUnavailable(f"Redis did not answer: {type(err).__name__}: {err}") from err

    def close(self) -> None:
        self._client.close()
