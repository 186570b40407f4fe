"""Shared rate limits in a real redis-server on loopback: one bucket for every replica, atomic,
refilling, and failing closed (503, counted) when Redis does not answer."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import ExitStack

import httpx
import pytest

from gateway.errors import RateLimiterUnavailable
from gateway.settings import Secret, Settings
from gateway.testing import refused_port
from gateway.web.rate_limits import TokenBucketLimiter, build_rate_limiter
from gateway.web.redis_limiter import RedisTokenBucketLimiter, redis_client
from tests.support.waiting import wait_until

KEY = "shared-limit-key"


@pytest.fixture
def prefix() -> str:
    return f"test:{uuid.uuid4().hex}:"


def limiter(url: str, prefix: str, per_minute: float, burst: int, **kw) -> RedisTokenBucketLimiter:  # type: ignore[no-untyped-def]
    return RedisTokenBucketLimiter(redis_client(url, 0.5), per_minute, burst, prefix=prefix, **kw)


def test_two_replicas_draw_from_one_bucket(redis_server, prefix: str) -> None:  # type: ignore[no-untyped-def]
    a = limiter(redis_server.url, prefix, per_minute=1, burst=3)
    b = limiter(redis_server.url, prefix, per_minute=1, burst=3)
    granted = [a.acquire("client"), b.acquire("client"), a.acquire("client")]
    assert granted == [0.0, 0.0, 0.0]
    wait_a, wait_b = a.acquire("client"), b.acquire("client")
    assert 0 < wait_a <= 60
    assert 0 < wait_b <= 60  # the bucket is empty for both replicas
    assert a.acquire("another-client") == 0.0  # buckets are per key
    a.close()
    b.close()


def test_concurrent_takes_never_exceed_the_burst(redis_server, prefix: str) -> None:  # type: ignore[no-untyped-def]
    """Eight 'replicas' x 25 threads race for a bucket of 20: exactly 20 are granted (the script is
    atomic; a read-then-write from Python would over-grant here)."""
    replicas = [limiter(redis_server.url, prefix, per_minute=0.01, burst=20) for _ in range(8)]
    granted: list[float] = []
    lock = threading.Lock()
    barrier = threading.Barrier(8 * 25)

    def take(replica: RedisTokenBucketLimiter) -> None:
        barrier.wait()
        wait = replica.acquire("racer")
        with lock:
            granted.append(wait)

    threads = [threading.Thread(target=take, args=(r,)) for r in replicas for _ in range(25)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(granted) == 200
    assert sum(1 for w in granted if w == 0.0) == 20
    for replica in replicas:
        replica.close()


def test_tokens_refill_at_the_configured_rate(redis_server, prefix: str) -> None:  # type: ignore[no-untyped-def]
    # one token a second: the second take must find the bucket empty, so a pause between the two takes
    # must stay under the refill time (at 0.1 s a scheduling pause on a busy machine refilled it)
    bucket = limiter(redis_server.url, prefix, per_minute=60, burst=1)
    assert bucket.acquire("k") == 0.0
    wait = bucket.acquire("k")
    assert 0 < wait <= 1.0
    wait_until(lambda: bucket.acquire("k") == 0.0, "a token refilled", interval=wait / 2)
    ttl = redis_client(redis_server.url, 1).pttl(prefix + "k")
    assert 0 < ttl <= 2000  # the bucket expires once it would be full again (1 s), plus 1 s
    bucket.close()


def test_disabled_limit_never_calls_redis(prefix: str) -> None:
    with refused_port() as port:
        bucket = limiter(f"redis://127.0.0.1:{port}/0", prefix, per_minute=0, burst=1)
        assert not bucket.enabled
        assert bucket.acquire("k") == 0.0


def test_redis_down_fails_closed_and_is_counted(prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    errors: list[int] = []
    backoffs: list[float] = []  # redis-py's retries sleep through this name, and only when backing off
    monkeypatch.setattr("redis.retry.sleep", backoffs.append)
    with refused_port() as port:
        bucket = limiter(f"redis://127.0.0.1:{port}/0", prefix, 60, 5, on_error=lambda: errors.append(1))
        with pytest.raises(RateLimiterUnavailable) as caught:
            bucket.acquire("k")
        assert backoffs == []  # no back-off holds the request (not timed: a slow machine is no failure)
        assert caught.value.status_code == 503
        assert caught.value.code == "rate_limiter_unavailable"
        assert errors == [1]
        with pytest.raises(RateLimiterUnavailable):
            bucket.check()


def test_settings_choose_the_limiter(redis_server) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(build_rate_limiter(Settings()), TokenBucketLimiter)
    shared = build_rate_limiter(Settings(redis_url=Secret(redis_server.url)))
    assert isinstance(shared, RedisTokenBucketLimiter)
    shared.check()
    # a second limiter (e.g. failed logins per address) has its own rate, burst and key space
    redis_client(redis_server.url, 1).flushdb()
    settings = Settings(redis_url=Secret(redis_server.url), rate_limit_burst=5)
    client_limits = build_rate_limiter(settings)
    login_limits = build_rate_limiter(settings, per_minute=0.01, burst=1, prefix="gateway:ratelimit:login:")
    assert login_limits.acquire("10.0.0.7") == 0.0
    assert login_limits.acquire("10.0.0.7") > 0
    assert [client_limits.acquire("10.0.0.7") for _ in range(5)] == [0.0] * 5
    for limiter_ in (shared, client_limits, login_limits):
        limiter_.close()
    with pytest.raises(Exception, match="GATEWAY_REDIS_URL"):
        Settings(redis_url=Secret("http://localhost:6379"))


# --- through the gateway: two apps, one Redis ---------------------------------------------------


@pytest.fixture
def two_gateways(make_services, redis_server, prefix: str) -> Iterator[tuple[list[str], object]]:  # type: ignore[no-untyped-def]
    from gateway.testing import serve_in_thread
    from gateway.web.app import create_app

    settings_changes = {
        "api_keys": (Secret(KEY),),
        "rate_limit_per_minute": 0.5,
        "rate_limit_burst": 3,
        "redis_url": Secret(redis_server.url),
    }
    # a fresh key space per test: flush the shared server's buckets
    redis_client(redis_server.url, 1).flushdb()
    with ExitStack() as stack:
        urls = []
        services = []
        for _ in range(2):
            built = make_services(**settings_changes)
            services.append(built)
            urls.append(stack.enter_context(serve_in_thread(create_app(built.settings, services=built))))
        yield urls, services


def test_two_gateways_share_one_limit(two_gateways) -> None:  # type: ignore[no-untyped-def]
    urls, _services = two_gateways
    headers = {"Authorization": f"Bearer {KEY}"}
    statuses = [httpx.get(f"{urls[i % 2]}/v1/models", headers=headers).status_code for i in range(5)]
    assert statuses == [200, 200, 200, 429, 429]  # burst 3 across both replicas, not 3 each
    limited = httpx.get(f"{urls[0]}/v1/models", headers=headers)
    assert limited.json()["error"]["type"] == "rate_limit_error"
    assert int(limited.headers["retry-after"]) >= 1
    ready = httpx.get(f"{urls[0]}/readyz").json()
    assert ready["rate_limits"] == "redis"


def test_redis_down_gives_a_counted_503_and_unready(make_services, prefix: str) -> None:  # type: ignore[no-untyped-def]
    from gateway.testing import serve_in_thread
    from gateway.web.app import create_app
    from tests.support.services import running_redis

    with running_redis() as server:
        services = make_services(
            api_keys=(Secret(KEY),), rate_limit_per_minute=60.0, redis_url=Secret(server.url)
        )
        with serve_in_thread(create_app(services.settings, services=services)) as url:
            headers = {"Authorization": f"Bearer {KEY}"}
            assert httpx.get(f"{url}/v1/models", headers=headers).status_code == 200
            assert httpx.get(f"{url}/readyz").status_code == 200
            server.stop()
            refused = httpx.get(f"{url}/v1/models", headers=headers)
            assert refused.status_code == 503
            assert refused.json()["error"]["code"] == "rate_limiter_unavailable"
            assert refused.json()["error"]["type"] == "service_unavailable"
            assert "retry-after" in refused.headers
            chat = httpx.post(
                f"{url}/v1/chat/completions",
                headers=headers,
                json={"model": "m", "messages": [{"role": "user", "content": "How much paracetamol?"}]},
            )
            assert chat.status_code == 503
            assert "choices" not in chat.json()  # nothing answered, and nothing recorded as answered
            assert services.audit.count() == 0
            not_ready = httpx.get(f"{url}/readyz")
            assert not_ready.status_code == 503
            assert not_ready.json()["failed"] == ["rate_limiter"]
            metrics = httpx.get(f"{url}/metrics").text
            assert "gateway_rate_limiter_errors_total 2.0" in metrics
            assert 'gateway_dependency_up{dependency="rate_limiter"} 0.0' in metrics
            assert 'gateway_dependency_up{dependency="audit_store"} 1.0' in metrics
            server.start()  # Redis back: served again without a restart
            assert httpx.get(f"{url}/v1/models", headers=headers).status_code == 200
            assert httpx.get(f"{url}/readyz").status_code == 200
