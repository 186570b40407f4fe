"""Verified streaming: with stream=true the client receives only text that is final, sentence by sentence,
while the model is still writing (issue #30).

Each test consumes the stream with the openai SDK's iterator and asserts exactly which pieces arrived,
that they concatenate to the non-streamed answer, and that the stream ends with ``trust`` and [DONE].
The model's urgency read (issue #31) and the refusal rules for a partly released answer
(docs/safety.md) are tested both ways, streamed and not, and every request is audited exactly once.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from gateway.audit import AuditFilter
from gateway.drafting.contract import sentence_line, urgency_line
from gateway.testing import Reply
from gateway.web.disclosure import Disclosure
from tests.support import cleanup_scenarios as s
from tests.support.stack import Start, openai_client

FIRST_TOKEN_COUNT = "gateway_time_to_first_verified_token_seconds_count"
RELEASE_AFTER_SECONDS = 1.0
"""A held rewrite is answered after this long (the test asserts order, never durations)."""


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


def test_supported_answer_streams_sentence_by_sentence_and_matches_the_non_streamed_text(
    policy_gateway: Start,
) -> None:
    scripted, url, _ = policy_gateway()
    scripted.queue(s.SUPPORTED, s.SUPPORTED)
    pieces, trust = stream(url, s.PARACETAMOL_Q)
    assert pieces == [s.m(s.DOSE, 1), " " + s.m(s.MAXIMUM, 1)]
    assert trust["summary"]["supported"] == 2
    completion = openai_client(url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": s.PARACETAMOL_Q}]
    )
    assert completion.choices[0].message.content == "".join(pieces) + Disclosure().suffix
    assert first_token_count(url) == 1.0  # streamed answers only


def test_removed_claim_is_never_sent(policy_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = policy_gateway()
    scripted.queue(s.FABRICATED_QUOTE)
    pieces, trust = stream(url, s.PARACETAMOL_Q)
    assert pieces == [s.m(s.DOSE, 1), " " + s.m(s.MAXIMUM, 1)]
    assert trust["summary"]["removed"] == 1


def test_a_failing_claim_is_rewritten_to_its_source_while_the_model_is_still_writing(
    policy_gateway: Start,
) -> None:
    """The shipped policy rewrites to the source at once (no model call), so the wrong dose, first in
    the answer, is replaced and sent before the model has finished writing."""
    scripted, url, _ = policy_gateway()
    writing = threading.Event()
    draft = Reply(content=s.WRONG_DOSE_ANSWER, hold_before_last=writing)
    scripted.queue(draft)
    model_done_at_first_piece: list[bool] = []

    def on_piece(_: str) -> None:
        model_done_at_first_piece.append(draft.sent_all.is_set())
        writing.set()

    pieces, trust = stream(url, s.PARACETAMOL_Q, on_piece)
    assert model_done_at_first_piece[0] is False
    assert pieces[0] == s.m(s.DOSE, 1)  # the source's sentence in place of the wrong dose
    assert [c["outcome"] for c in trust["claims"]] == ["rewritten", "verified", "verified"]
    assert trust["claims"][0]["method"] == "source_rewrite"
    assert len(scripted.requests) == 1  # the draft only: the rewrite asked no model


def test_wrong_dose_is_held_back_until_its_rewrite_is_verified(policy_gateway: Start) -> None:
    scripted, url, _ = policy_gateway(cleanup={"rewriter": "upstream"})
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


def test_claim_without_citation_streams_with_its_marker(policy_gateway: Start) -> None:
    scripted, url, _ = policy_gateway()
    scripted.queue(s.NO_CITATION)
    pieces, _ = stream(url, s.PARACETAMOL_Q)
    assert "".join(pieces) == s.NO_CITATION_TEXT


@pytest.mark.parametrize(
    ("question", "reply", "expected", "reason"),
    [
        (s.PARACETAMOL_Q, s.ALL_UNSUPPORTED, s.NO_CLAIM_REFUSAL, "no_claim_survived"),
        (s.EMERGENCY_WITH_ROUTINE_Q, None, s.EMERGENCY_WITH_ROUTINE, "emergency"),
    ],
)
def test_refusals_stream_only_the_refusal(policy_gateway, question, reply, expected, reason) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = policy_gateway()
    if reply is not None:
        scripted.queue(reply)
    pieces, trust = stream(url, question)
    assert pieces == [expected]
    assert trust["summary"]["reason"] == reason
    assert first_token_count(url) == 0.0  # a refusal is not verified answer text


def test_declined_question_note_comes_after_the_verified_sentences(policy_gateway: Start) -> None:
    scripted, url, _ = policy_gateway()
    scripted.queue(s.SUPPORTED)
    pieces, _ = stream(url, f"{s.PARACETAMOL_Q} What is the capital of France?")
    assert pieces == [
        s.m(s.DOSE, 1),
        " " + s.m(s.MAXIMUM, 1),
        ' I can only answer health questions, so I\'ve left out "What is the capital of France?".',
    ]


def test_verified_sentences_are_sent_while_a_rewrite_is_still_running(policy_gateway: Start) -> None:
    scripted, url, _ = policy_gateway(cleanup={"rewriter": "upstream"})
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


def test_raw_stream_ends_with_trust_then_done(policy_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = policy_gateway()
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


# --- at the model's pace ------------------------------------------------------------------------------

ENDED_NOTE = "I have stopped this answer here: the rest could not be checked against its sources."
ENDED_SAFETY_NOTE = "I have stopped this answer here: the next part could not be checked against its sources"
URGENT_NOTE = "From what you describe, please contact a doctor, a pharmacist or an urgent care service today"
EMERGENCY_MESSAGE = f"This could be an emergency. Please call {s.EMERGENCY_NUMBER} now"


def complete(url: str, question: str) -> tuple[str, dict[str, Any]]:
    """The non-streamed answer (before the AI disclosure that ends it, as ``stream`` gives it) and its
    trust object."""
    completion = openai_client(url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": question}]
    )
    content = completion.choices[0].message.content or ""
    assert content.endswith(Disclosure().suffix)
    return content.removesuffix(Disclosure().suffix), completion.model_extra["trust"]


def both(url: str, question: str) -> tuple[list[str], dict[str, Any], str, dict[str, Any]]:
    """Ask once streamed, once not (the scripted upstream answers both alike)."""
    pieces, trust = stream(url, question)
    text, plain_trust = complete(url, question)
    return pieces, trust, text, plain_trust


def audited_once(services: Any, requests: int) -> list[Any]:
    """The audit rows of the gateway of ``services``, which recorded ``requests`` requests."""
    assert services.audit.count() == requests
    return services.audit.list(AuditFilter())


def lines(
    *sentences: tuple[str, int | None], urgency: tuple[str, str] | None = ("routine", "usual dosing")
) -> str:
    head = [urgency_line(*urgency)] if urgency else []
    body = [sentence_line(text, (n,) if n else ()) for text, n in sentences]
    return "\n".join(head + body) + "\n"


def test_sentences_are_released_while_the_model_is_still_writing(policy_gateway: Start) -> None:
    scripted, url, _ = policy_gateway()
    still_writing = threading.Event()
    reply = Reply(content=lines((s.DOSE, 1), (s.MAXIMUM, 1), (s.GAP, 1)), hold_before_last=still_writing)
    scripted.queue(reply)
    seen: list[bool] = []

    def on_piece(_piece: str) -> None:
        seen.append(reply.sent_all.is_set())
        if len(seen) == 2:
            still_writing.set()  # the model holds its last token until two sentences were received

    pieces, trust = stream(url, s.PARACETAMOL_Q, on_piece)
    # the first two sentences reached the client before the model wrote its last token
    assert seen[:2] == [False, False]
    assert pieces == [s.m(s.DOSE, 1), " " + s.m(s.MAXIMUM, 1), " " + s.m(s.GAP, 1)]
    assert trust["summary"]["supported"] == 3
    assert scripted.requests[0]["stream"] is True
    assert "response_format" not in scripted.requests[0]


@pytest.mark.parametrize(
    ("first_line", "level", "problem"),
    [
        (urgency_line("routine", "usual dosing"), "routine", None),
        ("", None, "missing"),
        (json.dumps({"urgency": "very", "why": "x"}), None, "malformed: 'urgency' is 'very'"),
        (json.dumps({"urgency": ["emergency"]}), None, "malformed: 'urgency' is ['emergency']"),
    ],
    ids=["routine", "missing", "malformed-level", "malformed-type"],
)
def test_a_routine_missing_or_malformed_urgency_read_changes_nothing(
    policy_gateway, first_line, level, problem
) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = policy_gateway()
    reply = (first_line + "\n" if first_line else "") + lines((s.DOSE, 1), (s.MAXIMUM, 1), urgency=None)
    scripted.queue(reply, reply)
    pieces, trust, text, plain_trust = both(url, s.PARACETAMOL_Q)
    assert "".join(pieces) == text == s.SUPPORTED_TEXT
    for t in (trust, plain_trust):
        assert t["scope"] == "in_scope"
        assert t["model_urgency"]["level"] == level
        assert t["model_urgency"]["problem"] == problem
    audited_once(services, 2)


def test_the_models_emergency_read_gives_the_emergency_message_before_any_sentence(
    policy_gateway: Start,
) -> None:
    scripted, url, services = policy_gateway()
    reply = lines((s.DOSE, 1), (s.MAXIMUM, 1), urgency=("emergency", "describes crushing chest pain now"))
    scripted.queue(reply, reply)
    pieces, trust, text, plain_trust = both(url, s.PARACETAMOL_Q)
    assert len(pieces) == 1
    assert pieces[0] == text
    assert text.startswith(EMERGENCY_MESSAGE)
    assert "chest pain" not in text  # the model's reason is for clinicians, not quoted to the patient
    assert s.DOSE[:20] not in text
    for t in (trust, plain_trust):
        assert t["scope"] == "emergency"
        assert t["summary"]["reason"] == "emergency"
        assert t["model_urgency"] == {
            "level": "emergency",
            "reason": "describes crushing chest pain now",
            "problem": None,
        }
    rows = audited_once(services, 2)
    assert {r.outcome for r in rows} == {"emergency"}
    record = services.audit.get(rows[0].id)
    assert record["triage"]["layer"] == "model"
    assert "crushing chest pain" in record["triage"]["reason"]
    assert metric(url, 'gateway_triage_decisions_total{layer="model",scope="emergency"}') == 2.0


def test_the_models_urgent_read_adds_the_urgent_note(policy_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = policy_gateway()
    reply = lines((s.DOSE, 1), (s.MAXIMUM, 1), urgency=("urgent", "fever for five days"))
    scripted.queue(reply, reply)
    pieces, trust, text, _ = both(url, s.PARACETAMOL_Q)
    assert "".join(pieces) == text
    assert text.startswith(s.SUPPORTED_TEXT + " " + URGENT_NOTE)
    assert trust["scope"] == "in_scope"
    assert trust["model_urgency"]["level"] == "urgent"


def test_the_extractive_responder_streams_the_same_claims(start_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = start_gateway(scripted_upstream=False)  # no upstream: the built-in extractive responder
    pieces, trust = stream(url, s.PARACETAMOL_Q)
    text, _ = complete(url, s.PARACETAMOL_Q)
    assert len(pieces) == trust["summary"]["claims"] >= 1
    assert "".join(pieces) == text
    assert trust["model_urgency"] is None
    assert trust["summary"]["response_supported"] is True


# --- refusal rules for a partly released answer (docs/safety.md) ---------------------------------------


def test_a_later_safety_critical_failure_ends_the_answer_with_a_note(policy_gateway: Start) -> None:
    scripted, url, services = policy_gateway()
    scripted.queue(s.PLANTED, s.PLANTED)
    pieces, trust, text, plain_trust = both(url, s.HAY_FEVER_Q)
    assert len(pieces) == 2
    assert "".join(pieces) == text
    assert pieces[0].startswith(s.ANTIHISTAMINE[:-1])
    assert pieces[1].startswith(" " + ENDED_SAFETY_NOTE)
    assert "double the usual dose" not in text
    for t in (trust, plain_trust):
        assert t["summary"]["ended_early"] is True
        assert t["summary"]["refused"] is False
        assert t["summary"]["reason"] == "safety_critical_failed"
        assert [c["outcome"] for c in t["claims"]] == ["verified", "removed"]
    rows = audited_once(services, 2)
    assert {(r.outcome, r.reason) for r in rows} == {("ended_early", "safety_critical_failed")}
    assert metric(url, 'gateway_answers_ended_early_total{reason="safety_critical_failed"}') == 2.0


def cut_after_sentences(content: str, sentences: int) -> int:
    """Word pieces of the scripted stream that complete the urgency line and ``sentences`` lines."""
    head = "\n".join(content.split("\n")[: sentences + 1])
    return len(head.split(" "))


CUT = lines((s.DOSE, 1), (s.MAXIMUM, 1), (s.GAP, 1))
TWO = lines((s.DOSE, 1), (s.MAXIMUM, 1))
"""Stalled before its last token: only the first sentence is complete."""


@pytest.mark.parametrize(
    ("name", "reply", "settings", "reason", "kind"),
    [
        (
            "cut",
            Reply(content=CUT, stream_cut_after=cut_after_sentences(CUT, 1)),
            {},
            "upstream_error",
            "connection",
        ),
        (
            "stall",
            Reply(content=TWO, stream_stall=30.0),
            {"upstream_deadline": 3.0},
            "upstream_error",
            "timeout",
        ),
        (
            "never-completes",
            Reply(content=lines((s.DOSE, 1)) + '["Do not take more than 4 g of para'),
            {},
            "malformed_output",
            "malformed",
        ),
        (
            "line-over-bound",
            Reply(content=lines((s.DOSE, 1)) + sentence_line("Rest. " * 80, (1,)) + "\n"),
            {"upstream_max_line_chars": 300},
            "malformed_output",
            "malformed",
        ),
        (
            "plain-text-later",
            Reply(content=lines((s.DOSE, 1)) + s.m(s.MAXIMUM, 1) + "\n"),
            {},
            "malformed_output",
            "malformed",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_a_fault_after_a_released_sentence_ends_the_answer_with_a_note(
    policy_gateway, name, reply, settings, reason, kind
) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = policy_gateway(**settings)
    scripted.queue(reply, dataclasses.replace(reply, sent_all=threading.Event()))
    pieces, trust, text, plain_trust = both(url, s.PARACETAMOL_Q)
    assert "".join(pieces) == text
    assert pieces[0] == s.m(s.DOSE, 1)
    assert "".join(pieces[1:]).startswith(" " + ENDED_NOTE)
    assert text.startswith(s.m(s.DOSE, 1) + " " + ENDED_NOTE)
    assert "hours [1]. Do not" not in text  # nothing after the fault, nothing unverified
    for t in (trust, plain_trust):
        assert t["summary"]["ended_early"] is True
        assert t["summary"]["reason"] == reason
    rows = audited_once(services, 2)
    assert {(r.outcome, r.reason) for r in rows} == {("error", reason)}
    assert metric(url, f'gateway_upstream_errors_total{{type="{kind}"}}') == 2.0
    assert metric(url, 'gateway_answers_ended_early_total{reason="' + reason + '"}') == 2.0


@pytest.mark.parametrize(
    ("name", "reply", "expected"),
    [
        ("whole-completion", Reply(content=lines((s.DOSE, 1), (s.MAXIMUM, 1)), ignore_stream=True), None),
        (
            "retired-json",
            Reply(content=json.dumps({"answer": s.SUPPORTED_TEXT, "claims": []})),
            "malformed_output",
        ),
        ("plain-text", Reply(content=s.SUPPORTED_TEXT), "malformed_output"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_an_upstream_off_the_contract_fails_closed_before_anything_is_sent(
    policy_gateway, name, reply, expected
) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = policy_gateway()
    scripted.queue(reply, reply)
    pieces, trust, text, _ = both(url, s.PARACETAMOL_Q)
    assert "".join(pieces) == text
    if expected is None:  # it ignored ``stream``: the same lines, verified the same way, at once
        assert text == s.SUPPORTED_TEXT
        assert trust["summary"]["supported"] == 2
    else:
        assert len(pieces) == 1
        assert "could not produce a checked" in text
        assert trust["summary"]["refused"] is True
        assert trust["summary"]["reason"] == expected
        assert s.DOSE[:20] not in text
    audited_once(services, 2)


def metric(url: str, name: str) -> float:
    for line in httpx.get(f"{url}/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{name} not exported")
