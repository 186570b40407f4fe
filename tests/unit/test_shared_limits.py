"""The judge and the rewriter share the draft's limits: slots, per-request deadline, metrics."""

from __future__ import annotations

import asyncio

import pytest

from gateway.domain import ClaimToCheck, Passage
from gateway.drafting.model_upstream import ModelUpstream
from gateway.errors import UpstreamTimeout
from gateway.metrics import GatewayMetrics
from gateway.models import CallLimits, ChatModel, LimitedModel, MeteredModel, request_deadline
from gateway.testing import ScriptedChatModel
from gateway.verification.judge import JudgeConfig, LLMJudgeVerifier
from gateway.vocabulary import VerdictCheck
from tests.support.model_limits import REQUEST

PASSAGE = Passage(
    "p1", "d1", "Adults can take 500 mg.", "Paracetamol", "https://x.org", "org", "guideline", None, 1.0
)


CALL_DEADLINE_SECONDS = 600.0
"""A per-call deadline past the test run's own time limit: a call it would end fails the test."""


def limits(metrics: GatewayMetrics, deadline: float = 5.0) -> CallLimits:
    return CallLimits(max_concurrency=1, queue_size=0, queue_timeout=5.0, deadline=deadline, metrics=metrics)


def held_by(purpose: str, model: ChatModel, metrics: GatewayMetrics) -> MeteredModel:
    """``model`` as a holder with ``purpose`` gets it (``ModelPool.model``)."""
    return MeteredModel(model, metrics, purpose)


def value(metrics: GatewayMetrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


async def test_a_judge_call_waits_for_the_drafts_slot_and_fails_closed_when_none_is_free() -> None:
    metrics = GatewayMetrics()
    inner = ScriptedChatModel(default='["ok"]', held=True)
    shared = LimitedModel(inner, limits(metrics))  # one endpoint: the draft's and the judge's model
    judge = LLMJudgeVerifier(held_by("judge", shared, metrics), JudgeConfig(timeout=5.0))
    holding = asyncio.create_task(ModelUpstream(held_by("draft", shared, metrics)).draft(REQUEST, ()))
    await inner.wait_for_calls(1)  # the draft holds the one slot: it is inside the model
    verdict = await judge.judge(
        ClaimToCheck(text="Adults can take 500 mg.", quote=None, sources=((1, PASSAGE),))
    )
    inner.release()
    await holding
    assert verdict.check is VerdictCheck.JUDGE_ERROR
    assert "not completed" in verdict.reason
    assert value(metrics, "gateway_model_calls_total", purpose="judge", result="error") == 1
    assert value(metrics, "gateway_upstream_errors_total", type="queue_full") == 1


async def test_every_call_of_a_request_ends_by_the_requests_deadline() -> None:
    """Each call alone is allowed longer than the test may run; the request's 1 s budget, started by its
    first call, wins: only it can end the rewrite, which the model holds until released (never)."""
    metrics = GatewayMetrics()
    shared = limits(metrics, deadline=CALL_DEADLINE_SECONDS)
    drafts = held_by("draft", LimitedModel(ScriptedChatModel(default='["ok"]'), shared), metrics)
    rewrites = held_by("rewrite", LimitedModel(ScriptedChatModel(default="{}", held=True), shared), metrics)
    with request_deadline(1.0):
        await ModelUpstream(drafts).draft(REQUEST, ())  # the first call starts the request's clock
        with pytest.raises(UpstreamTimeout):
            await rewrites.complete([])
    assert value(metrics, "gateway_upstream_errors_total", type="timeout") == 1
    assert value(metrics, "gateway_model_calls_total", purpose="rewrite", result="error") == 1
    assert value(metrics, "gateway_model_calls_total", purpose="draft", result="ok") == 1


async def test_outside_a_request_the_per_call_deadline_applies() -> None:
    metrics = GatewayMetrics()
    slow = LimitedModel(ScriptedChatModel(default="{}", delay=5.0), limits(metrics, deadline=0.2))
    with pytest.raises(UpstreamTimeout):
        await held_by("judge", slow, metrics).complete([])
