"""The optional query rewrite by the upstream model (gateway/knowledge/rewrite.py): one bounded call
through the model boundary, added to the message, failing open. Scripted models, no network."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gateway.bootstrap import build_query_rewriter
from gateway.domain import Passage
from gateway.errors import ConfigurationError, UpstreamHTTPError, UpstreamTimeout
from gateway.knowledge.query import load_query_words
from gateway.knowledge.rewrite import QueryRewriter, RewriteWords
from gateway.knowledge.search_options import SearchFilters
from gateway.metrics import GatewayMetrics
from gateway.models import Endpoint, ModelPool
from gateway.policies import load_configured_policy
from gateway.retrieval.retrieve import retrieve
from gateway.settings import Settings
from gateway.testing import ScriptedChatModel, ScriptedConnections

UPSTREAM_URL = "http://127.0.0.1:9/v1"
"""Never contacted: the pools below connect to scripted models."""
MESSAGE = "me and my wife havent been intimate in months because i cant get hard. what causes this"


def rewriter(model: ScriptedChatModel, deadline: float = 2.0, **words: int) -> QueryRewriter:
    return QueryRewriter(model, RewriteWords(**words), deadline)  # type: ignore[arg-type]


async def test_the_restatement_is_added_to_the_message_as_its_last_line() -> None:
    model = ScriptedChatModel('"What causes erectile dysfunction?"\n\nextra chatter')
    result = await rewriter(model, max_tokens=40).rewrite(MESSAGE)
    assert result.outcome == "rewritten"
    assert result.added == "What causes erectile dysfunction?"
    assert result.query == f"{MESSAGE}\nWhat causes erectile dysfunction?"
    (request,) = model.requests
    assert request["max_tokens"] == 40
    assert request["temperature"] == 0.0
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert request["messages"][1]["content"] == MESSAGE


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        (UpstreamHTTPError("bad gateway", status_code=502), "error"),
        (UpstreamTimeout("too slow"), "error"),
        ("", "empty"),
        ("   \n  ", "empty"),
        ("x" * 400, "empty"),  # longer than max_reply_chars: not a query
    ],
)
async def test_a_failed_or_unusable_rewrite_leaves_the_message_as_it_was(
    reply: str | Exception, outcome: str
) -> None:
    result = await rewriter(ScriptedChatModel(reply)).rewrite(MESSAGE)
    assert (result.query, result.added, result.outcome) == (MESSAGE, None, outcome)


async def test_a_rewrite_past_its_deadline_is_abandoned_and_the_message_searched() -> None:
    model = ScriptedChatModel("What causes erectile dysfunction?", held=True)  # never released
    result = await rewriter(model, deadline=0.05).rewrite(MESSAGE)
    assert (result.query, result.outcome) == (MESSAGE, "timeout")
    assert model.calls == 1


async def test_a_long_message_is_cut_to_its_opening_and_its_end() -> None:
    model = ScriptedChatModel("What is gout?")
    message = "backstory " * 200 + "what is gout?"
    await rewriter(model, max_message_chars=300).rewrite(message)
    sent = model.requests[0]["messages"][1]["content"]
    assert len(sent) <= 303
    assert sent.startswith("backstory")
    assert sent.endswith("what is gout?")


@dataclass
class RecordingStore:
    """A KnowledgeStore that records what it was asked to search."""

    searched: list[str] = field(default_factory=list)

    async def search(self, query: str, k: int, filters: SearchFilters | None = None) -> list[Passage]:
        self.searched.append(query)
        return []

    async def count(self) -> int:
        return 1


async def test_retrieval_searches_the_message_with_the_restatement() -> None:
    store = RecordingStore()
    policy = load_configured_policy(Settings()).thresholds.retrieval
    found = await retrieve(MESSAGE, store, policy, rewriter(ScriptedChatModel("What is impotence?")))
    assert store.searched == [f"{MESSAGE}\nWhat is impotence?"]
    assert not found.relevant
    await retrieve(
        MESSAGE, store, policy, rewriter(ScriptedChatModel(UpstreamHTTPError("x", status_code=500)))
    )
    assert store.searched[-1] == MESSAGE  # failed open


def test_the_rewrite_is_off_by_default_and_needs_an_upstream() -> None:
    models = ModelPool(Settings(), GatewayMetrics(), connect=ScriptedConnections())
    assert build_query_rewriter(Settings(), models) is None
    assert build_query_rewriter(Settings(upstream_base_url=UPSTREAM_URL), models) is None
    with pytest.raises(ConfigurationError, match=r"GATEWAY_QUERY_REWRITE: .*needs an upstream model"):
        Settings(query_rewrite=True)
    with pytest.raises(ConfigurationError, match="GATEWAY_QUERY_REWRITE_DEADLINE"):
        Settings(upstream_base_url=UPSTREAM_URL, query_rewrite=True, query_rewrite_deadline=0)


async def test_the_rewrite_call_goes_through_the_upstream_limits_and_is_counted_as_query() -> None:
    settings = Settings(upstream_base_url=UPSTREAM_URL, query_rewrite=True)
    metrics = GatewayMetrics()
    connections = ScriptedConnections(
        "What causes erectile dysfunction?", UpstreamHTTPError("x", status_code=502)
    )
    models = ModelPool(settings, metrics, connect=connections)
    built = build_query_rewriter(settings, models)
    assert built is not None
    assert (await built.rewrite(MESSAGE)).outcome == "rewritten"
    assert (await built.rewrite(MESSAGE)).outcome == "error"
    assert models.limits(Endpoint.upstream(settings)) is not None  # the upstream endpoint's slots
    for result in ("ok", "error"):
        sample = metrics.registry.get_sample_value(
            "gateway_model_calls_total", {"purpose": "query", "result": result}
        )
        assert sample == 1
    await models.aclose()


def test_a_bad_rewrite_bound_in_the_policy_names_its_key(tmp_path: Path) -> None:
    path = tmp_path / "query.yaml"
    path.write_text("model_rewrite:\n  max_tokens: 2\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"model_rewrite\.max_tokens"):
        load_query_words(path)
    path.write_text("model_rewrite:\n  prompt: '  '\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"model_rewrite\.prompt"):
        load_query_words(path)


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_the_restatement_finds_what_a_vague_message_cannot_in_the_real_store(fixture_store) -> None:  # type: ignore[no-untyped-def]
    policy = load_configured_policy(Settings()).thresholds.retrieval
    vague = "ok so about the thing from the leaflet, how much is too much for me"
    alone = await retrieve(vague, fixture_store, policy)
    restated = rewriter(ScriptedChatModel("What is the maximum daily dose of paracetamol for adults?"))
    helped = await retrieve(vague, fixture_store, policy, restated)
    assert helped.best_relevance > alone.best_relevance
    assert helped.relevant
    assert helped.passages[0].document_id == "paracetamol"
