"""Verified streaming: with stream=true the client receives only text that is final, sentence by sentence.

Each test consumes the stream with the openai SDK's iterator and asserts exactly which pieces arrived,
that they concatenate to the non-streamed answer, and that the stream ends with ``trust`` and [DONE].
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from gateway.testing import Reply, ScriptedUpstream, running_upstream
from gateway.web.disclosure import Disclosure
from tests.support import cleanup_scenarios as s
from tests.support.cleanup_stack import pin_chat_verifier, policy_copy
from tests.support.stack import openai_client, running_gateway

FIRST_TOKEN_COUNT = "gateway_time_to_first_verified_token_seconds_count"
RELEASE_AFTER_SECONDS = 1.0
"""A held rewrite is answered after this long (the test asserts order, never durations)."""


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[ScriptedUpstream, str]]:
    with running_upstream() as (scripted, base_url):
        yield scripted, base_url


@pytest.fixture
def gateway(upstream, make_services, tmp_path):  # type: ignore[no-untyped-def]
    """A gateway with the rewrite to the source (or ``rewriter=...``); yields (scripted, url)."""
    scripted, base_url = upstream
    scripted.reset()
    managers: list[Any] = []

    def start(**cleanup: Any) -> tuple[ScriptedUpstream, str]:
        policy_dir = policy_copy(tmp_path / f"p{len(managers)}", **{"rewriter": "extractive", **cleanup})
        services = make_services(upstream_base_url=base_url, upstream_retries=0, policy_dir=policy_dir)
        manager = running_gateway(pin_chat_verifier(services))
        managers.append(manager)
        return scripted, manager.__enter__()

    yield start
    for manager in managers:
        manager.__exit__(None, None, None)


def stream(
    url: str, question: str, on_piece: Callable[[str], None] | None = None
) -> tuple[list[str], dict[str, Any]]:
    """The content pieces in order, and the trust object of the final chunk."""
    pieces: list[str] = []
    trust: dict[str, Any] | None = None
    chunks = openai_client(url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": question}], stream=True
    )
    for chunk in chunks:
        choice = chunk.choices[0]
        if choice.delta.content:
            pieces.append(choice.delta.content)
            if on_piece is not None:
                on_piece(choice.delta.content)
        if choice.finish_reason:
            assert choice.finish_reason == "stop"
            trust = chunk.model_extra["trust"]
    assert trust is not None
    disclosure = trust.get("ai_disclosure")
    if disclosure and disclosure["shown"]:  # the AI disclosure is the last piece (gateway.web.disclosure)
        assert pieces.pop().endswith(disclosure["notice"])
    return pieces, trust


def first_token_count(url: str) -> float:
    for line in httpx.get(f"{url}/metrics").text.splitlines():
        if line.startswith(FIRST_TOKEN_COUNT):
            return float(line.split()[-1])
    raise AssertionError("first-token metric missing")


def test_supported_answer_streams_sentence_by_sentence_and_matches_the_non_streamed_text(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url = gateway()
    scripted.queue(s.SUPPORTED, s.SUPPORTED)
    pieces, trust = stream(url, s.PARACETAMOL_Q)
    assert pieces == [s.m(s.DOSE, 1), " " + s.m(s.MAXIMUM, 1)]
    assert trust["summary"]["supported"] == 2
    completion = openai_client(url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": s.PARACETAMOL_Q}]
    )
    assert completion.choices[0].message.content == "".join(pieces) + Disclosure().suffix
    assert first_token_count(url) == 1.0  # streamed answers only


def test_removed_claim_is_never_sent(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url = gateway()
    scripted.queue(s.FABRICATED_QUOTE)
    pieces, trust = stream(url, s.PARACETAMOL_Q)
    assert pieces == [s.m(s.DOSE, 1), " " + s.m(s.MAXIMUM, 1)]
    assert trust["summary"]["removed"] == 1


def test_wrong_dose_is_held_back_until_its_rewrite_is_verified(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url = gateway(rewriter="upstream")
    release = threading.Event()
    rewrite = json.dumps({"rewrite": s.DOSE, "quote": s.DOSE[:-1]})
    scripted.queue(s.WRONG_DOSE_ANSWER, Reply(content=rewrite, hold_until=release))
    answered_before_first_piece: list[bool] = []
    timer = threading.Timer(RELEASE_AFTER_SECONDS, release.set)
    timer.start()
    pieces, trust = stream(
        url, s.PARACETAMOL_Q, lambda _: answered_before_first_piece.append(release.is_set())
    )
    timer.cancel()
    # the failing dose claim could refuse the whole answer: not even the verified sentences after it
    # are sent before its rewrite is answered and verified
    assert answered_before_first_piece[0] is True
    assert pieces == [s.m(s.DOSE, 1), " " + s.m(s.MAXIMUM, 1), " " + s.m(s.GAP, 1)]
    assert [c["outcome"] for c in trust["claims"]] == ["rewritten", "verified", "verified"]


def test_claim_without_citation_streams_with_its_marker(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url = gateway()
    scripted.queue(s.NO_CITATION)
    pieces, _ = stream(url, s.PARACETAMOL_Q)
    assert "".join(pieces) == s.NO_CITATION_TEXT


@pytest.mark.parametrize(
    ("question", "reply", "expected", "reason"),
    [
        (s.PARACETAMOL_Q, s.ALL_UNSUPPORTED, s.NO_CLAIM_REFUSAL, "no_claim_survived"),
        (s.HAY_FEVER_Q, s.PLANTED, s.SAFETY_CRITICAL_REFUSAL, "safety_critical_failed"),
        (s.EMERGENCY_WITH_ROUTINE_Q, None, s.EMERGENCY_WITH_ROUTINE, "emergency"),
    ],
)
def test_refusals_stream_only_the_refusal(gateway, question, reply, expected, reason) -> None:  # type: ignore[no-untyped-def]
    scripted, url = gateway()
    if reply is not None:
        scripted.queue(reply)
    pieces, trust = stream(url, question)
    assert pieces == [expected]
    assert trust["summary"]["reason"] == reason
    assert first_token_count(url) == 0.0  # a refusal is not verified answer text


def test_declined_question_note_comes_after_the_verified_sentences(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url = gateway()
    scripted.queue(s.SUPPORTED)
    pieces, _ = stream(url, f"{s.PARACETAMOL_Q} What is the capital of France?")
    assert pieces == [
        s.m(s.DOSE, 1),
        " " + s.m(s.MAXIMUM, 1),
        ' I can only answer health questions, so I\'ve left out "What is the capital of France?".',
    ]


def test_verified_sentences_are_sent_while_a_rewrite_is_still_running(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url = gateway(rewriter="upstream")
    answer = s.contract_answer(
        f"{s.m(s.DOSE, 1)} {s.m(s.FABRICATED, 1)} {s.m(s.GAP, 1)}",
        [
            (s.DOSE, [1], s.DOSE),
            (s.FABRICATED, [1], "cures migraines within ten minutes"),
            (s.GAP, [1], s.GAP),
        ],
    )
    release = threading.Event()
    scripted.queue(answer, Reply(content="not the JSON asked for", hold_until=release))
    seen_while_held: list[tuple[str, int, bool]] = []

    def on_piece(piece: str) -> None:
        seen_while_held.append((piece, len(scripted.requests), release.is_set()))
        release.set()

    pieces, trust = stream(url, s.PARACETAMOL_Q, on_piece)
    # the first sentence arrived before the (held) rewrite of the second claim was answered
    piece, _requests, answered = seen_while_held[0]
    assert (piece, answered) == (s.m(s.DOSE, 1), False)
    assert pieces == [s.m(s.DOSE, 1), " " + s.m(s.GAP, 1)]
    assert [c["outcome"] for c in trust["claims"]] == ["verified", "removed", "verified"]


def test_raw_stream_ends_with_trust_then_done(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url = gateway()
    scripted.queue(s.SUPPORTED)
    with httpx.stream(
        "POST",
        f"{url}/v1/chat/completions",
        timeout=30,
        json={"model": "m", "stream": True, "messages": [{"role": "user", "content": s.PARACETAMOL_Q}]},
    ) as response:
        assert response.headers["x-request-id"].startswith("req_")
        lines = [line for line in response.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    assert '"trust"' in lines[-2]
    assert response.headers["x-request-id"] in lines[-2]
