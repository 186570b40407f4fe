"""The judge and the rewriter share the draft's LimitedUpstream: slots, per-request deadline, metrics."""

from __future__ import annotations

import asyncio

import pytest

from gateway.domain import ClaimToCheck, Passage
from gateway.errors import UpstreamTimeout
from gateway.metrics import GatewayMetrics
from gateway.upstream.limited import LimitedUpstream, request_deadline
from gateway.verification.judge import JUDGE_ERROR, JudgeConfig, LLMJudgeVerifier
from tests.unit.test_limited_upstream import REQUEST, SlowUpstream

PASSAGE = Passage(
    "p1", "d1", "Adults can take 500 mg.", "Paracetamol", "https://x.org", "org", "guideline", None, 1.0
)


def limited(inner: SlowUpstream, metrics: GatewayMetrics, deadline: float = 5.0) -> LimitedUpstream:
    return LimitedUpstream(
        inner, max_concurrency=1, queue_size=0, queue_timeout=5.0, deadline=deadline, metrics=metrics
    )


def value(metrics: GatewayMetrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


async def test_a_judge_call_waits_for_the_drafts_slot_and_fails_closed_when_none_is_free() -> None:
    metrics = GatewayMetrics()
    inner = SlowUpstream()
    gate = limited(inner, metrics)
    # the judge's own client points at a closed port: it must never be reached without a slot
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", api_key="", model="m", timeout=5.0)
    judge = LLMJudgeVerifier(config, gate=gate)
    holding = asyncio.create_task(gate.draft(REQUEST, ()))
    await asyncio.sleep(0.01)
    verdict = await judge.judge(
        ClaimToCheck(text="Adults can take 500 mg.", quote=None, sources=((1, PASSAGE),))
    )
    inner.release.set()
    await holding
    assert verdict.check == JUDGE_ERROR
    assert "not completed" in verdict.reason
    assert value(metrics, "gateway_model_calls_total", purpose="judge", result="error") == 1
    assert value(metrics, "gateway_upstream_errors_total", type="queue_full") == 1


async def test_every_call_of_a_request_ends_by_the_requests_deadline() -> None:
    """Each call alone is allowed 5 s; the request's 0.3 s budget, started by its first call, wins."""
    metrics = GatewayMetrics()
    gate = limited(SlowUpstream(seconds=0.1), metrics)
    with request_deadline(0.3):
        await gate.draft(REQUEST, ())  # the first call starts the request's clock
        with pytest.raises(UpstreamTimeout):
            await gate.call("rewrite", lambda: asyncio.sleep(5.0))
    assert value(metrics, "gateway_upstream_errors_total", type="timeout") == 1
    assert value(metrics, "gateway_model_calls_total", purpose="rewrite", result="error") == 1
    assert value(metrics, "gateway_model_calls_total", purpose="draft", result="ok") == 1


async def test_outside_a_request_the_per_call_deadline_applies() -> None:
    gate = limited(SlowUpstream(), GatewayMetrics(), deadline=0.2)
    with pytest.raises(UpstreamTimeout):
        await gate.call("judge", lambda: asyncio.sleep(5.0))
