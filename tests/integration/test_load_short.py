"""A short version of bench/load_test.py: 16 clients for 5 seconds; no 5xx and no lost audit record.

Timings are printed by the benchmark, never asserted here.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from bench.bench_gateway import five_claim_answer
from bench.load_test import run_load
from gateway.settings import Secret
from gateway.testing import running_upstream
from tests.support.stack import running_gateway

KEY = "short-load-key"


@pytest.mark.slow
def test_sixteen_clients_for_five_seconds_lose_nothing(make_services) -> None:  # type: ignore[no-untyped-def]
    with running_upstream() as (scripted, base_url):
        scripted.responder = five_claim_answer
        services = make_services(
            upstream_base_url=base_url,
            upstream_retries=0,
            api_keys=(Secret(KEY),),
            rate_limit_per_minute=1_000_000.0,
            rate_limit_burst=100_000,
            upstream_max_concurrency=4,
            upstream_queue_size=64,
        )
        with running_gateway(services) as url:
            result = asyncio.run(run_load(url, clients=16, duration=5.0, key=KEY, stream_share=0.25))
            metrics = httpx.get(f"{url}/metrics").text
    assert result.sent > 0
    assert result.errors == {}
    assert result.server_errors == 0
    assert set(result.statuses) == {200}
    assert services.audit.count() == result.sent  # every request left an audit record
    total = sum(
        float(line.split()[-1]) for line in metrics.splitlines() if line.startswith("gateway_requests_total{")
    )
    assert total == result.sent  # and was counted once
