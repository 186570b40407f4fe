"""The model boundary: each wrapper does its one job, and the pool wires one model per endpoint.

Limits and deadline: ``test_limited_upstream.py`` and ``test_shared_limits.py``. Here: metrics, closing,
the pool's sharing, the rewriter under the draft's slots, and closing at shutdown.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest
from litestar.testing import AsyncTestClient

from gateway.bootstrap import build_rewriter, build_services, build_upstream
from gateway.domain import ClaimOutcome
from gateway.drafting.extractive import ExtractiveResponder
from gateway.errors import UpstreamBusy, UpstreamHTTPError, UpstreamUnavailable
from gateway.metrics import GatewayMetrics
from gateway.models import (
    ClosingModel,
    Endpoint,
    MeteredModel,
    ModelPool,
    OpenAIChatModel,
)
from gateway.policies import load_configured_policy
from gateway.settings import Secret, Settings
from gateway.testing import ScriptedChatModel, ScriptedConnections, ScriptedVerifier
from gateway.web.app import create_app
from tests.conftest import FIXTURE_KB
from tests.support.cleanup_claims import DOSE, PASSAGES, REQUEST, quoted
from tests.support.waiting import reached

UPSTREAM_URL = "http://127.0.0.1:9/v1"
"""Never contacted: the pools below connect to scripted models."""
JUDGE_URL = "http://127.0.0.1:10/v1"


def value(metrics: GatewayMetrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


# ---- metrics ---------------------------------------------------------------------------------------


async def test_calls_are_counted_by_purpose_and_result() -> None:
    metrics = GatewayMetrics()
    model = ScriptedChatModel("a", UpstreamHTTPError("boom", status_code=502), "b", UpstreamBusy("full"))
    drafts, rewrites = MeteredModel(model, metrics, "draft"), MeteredModel(model, metrics, "rewrite")
    assert await drafts.complete([]) == "a"
    with pytest.raises(UpstreamHTTPError):
        await drafts.complete([])
    assert await rewrites.complete([]) == "b"
    with pytest.raises(UpstreamBusy):
        await rewrites.complete([])
    for purpose in ("draft", "rewrite"):
        for result in ("ok", "error"):
            assert value(metrics, "gateway_model_calls_total", purpose=purpose, result=result) == 1
    # a draft's failure is counted with its request (pipeline.recording), any other call's here
    assert value(metrics, "gateway_upstream_errors_total", type="http_status") == 0
    assert value(metrics, "gateway_upstream_errors_total", type="queue_full") == 1


def test_an_unknown_purpose_is_folded_into_other() -> None:
    assert MeteredModel(ScriptedChatModel(), GatewayMetrics(), "patient text").purpose == "other"


# ---- closing ---------------------------------------------------------------------------------------


async def test_a_shared_model_is_closed_once_and_refuses_calls_after() -> None:
    inner = ScriptedChatModel(default="ok")
    shared = ClosingModel(inner)
    holders = [MeteredModel(shared, GatewayMetrics(), purpose) for purpose in ("draft", "rewrite")]
    for holder in holders:
        await holder.aclose()
    await shared.aclose()
    assert inner.closes == 1
    with pytest.raises(UpstreamUnavailable, match="closed"):
        await holders[0].complete([])
    assert inner.calls == 0


async def test_closing_the_openai_model_closes_its_client() -> None:
    model = OpenAIChatModel(base_url=UPSTREAM_URL, api_key="", model="m", timeout=1.0, retries=0)
    assert not model.closed
    await ClosingModel(model).aclose()
    assert model.closed


# ---- the pool --------------------------------------------------------------------------------------


async def test_one_model_per_endpoint_shared_by_its_holders_and_closed_once() -> None:
    settings = Settings(upstream_base_url=UPSTREAM_URL, judge_base_url=JUDGE_URL)
    connections = ScriptedConnections(default="ok")
    models = ModelPool(settings, GatewayMetrics(), connect=connections)
    upstream = Endpoint.upstream(settings)
    draft, rewrite = models.model(upstream, "draft"), models.model(upstream, "rewrite")
    judge = models.model(Endpoint.judge(settings), "judge")
    await draft.complete([])
    await rewrite.complete([])
    await judge.complete([])
    assert set(connections.made) == {UPSTREAM_URL, JUDGE_URL}  # one client per endpoint
    assert connections.made[UPSTREAM_URL].calls == 2
    assert models.limits(upstream) is not models.limits(Endpoint.judge(settings))
    await draft.aclose()
    await models.aclose()
    assert [m.closes for m in connections.made.values()] == [1, 1]


def test_two_endpoints_at_one_base_url_share_its_slots() -> None:
    settings = Settings(upstream_base_url=UPSTREAM_URL, judge_base_url=UPSTREAM_URL, judge_model="other")
    models = ModelPool(settings, connect=ScriptedConnections())
    models.model(Endpoint.upstream(settings), "draft")
    models.model(Endpoint.judge(settings), "judge")
    assert models.limits(Endpoint.upstream(settings)) is models.limits(Endpoint.judge(settings))


def test_the_extractive_responder_needs_no_model() -> None:
    models = ModelPool(Settings(), connect=ScriptedConnections())
    assert isinstance(build_upstream(Settings(), None, models), ExtractiveResponder)  # type: ignore[arg-type]
    assert models.limits(Endpoint.upstream(Settings())) is None


# ---- the rewriter under the draft's limits ---------------------------------------------------------


async def test_a_rewrite_waits_for_the_slot_a_draft_holds_and_is_closed_with_it() -> None:
    settings = Settings(upstream_base_url=UPSTREAM_URL, upstream_max_concurrency=1, upstream_queue_size=1)
    rewrite = json.dumps({"rewrite": DOSE, "quote": DOSE})
    connections = ScriptedConnections('["The draft.", [1]]', default=rewrite, held=True)
    models = ModelPool(settings, GatewayMetrics(), connect=connections)
    upstream = build_upstream(settings, None, models)  # type: ignore[arg-type]
    verifier = ScriptedVerifier.supporting("anchoring")
    policy = load_configured_policy(settings)
    cleanup = replace(policy.thresholds.cleanup, rewriter="upstream")  # the model's rewrite is opt-in
    policy = replace(policy, thresholds=replace(policy.thresholds, cleanup=cleanup))
    rewriter = build_rewriter(settings, policy, None, verifier, models)  # type: ignore[arg-type]
    model = connections.made[UPSTREAM_URL]
    limits = models.limits(Endpoint.upstream(settings))
    assert limits is not None

    drafting = asyncio.create_task(upstream.draft(REQUEST, PASSAGES))
    await model.wait_for_calls(1)  # the draft reached the model
    claim = quoted("Adults can take 2 g of paracetamol every 2 hours.", "500 mg to 1 g of paracetamol")
    rewriting = asyncio.create_task(rewriter.rewrite(claim, PASSAGES, REQUEST))
    await reached(limits.changes, lambda: limits.waiting == 1, "the rewrite waits for the draft's slot")
    assert (limits.in_flight, limits.waiting) == (1, 1)
    assert model.calls == 1  # the rewrite has not reached the model: it waits for the draft's slot
    model.release()
    await drafting
    result = await rewriting
    assert model.calls == 2
    assert result.outcome is ClaimOutcome.REWRITTEN
    assert "upstream rewriter" in result.reason

    await upstream.aclose()
    await models.aclose()
    assert model.closes == 1


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_shutdown_closes_every_model_of_the_process(embedder, fixture_store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(
        data_dir=tmp_path,
        knowledge_dir=FIXTURE_KB,
        upstream_base_url=UPSTREAM_URL,
        judge_base_url=JUDGE_URL,
        judge_api_key=Secret("k"),
    )
    connections = ScriptedConnections(default="ok")
    services = build_services(settings, embedder=embedder, store=fixture_store, connect=connections)
    app = create_app(settings, build=lambda _: services)
    async with AsyncTestClient(app) as client:
        assert (await client.get("/healthz")).status_code == 200
        assert [m.closes for m in connections.made.values()] == [0, 0]
    assert set(connections.made) == {UPSTREAM_URL, JUDGE_URL}  # the draft's and rewriter's, the judge's
    assert [m.closes for m in connections.made.values()] == [1, 1]
