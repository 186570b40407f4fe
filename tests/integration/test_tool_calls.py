"""Tool calls through the gateway (issue #36, item 2): the client's tools reach the model, the model's
tool calls come back unchanged (streamed fragment by fragment, in order), any text it writes is verified
as without tools, tool results are context (a source only when the policy trusts the tool), triage still
decides emergencies first. The real openai SDK as the client, the scripted upstream as the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from gateway.audit.crypto import new_key_text
from gateway.drafting.contract import SYSTEM_PROMPT, TOOL_RULES, sentence_line, urgency_line
from gateway.settings import Secret
from gateway.testing import Reply
from gateway.tool_calls import ToolCall
from gateway.web.disclosure import Disclosure
from tests.support import cleanup_scenarios as s
from tests.support.stack import Start, openai_client

BOOK = {
    "type": "function",
    "function": {
        "name": "book_appointment",
        "description": "Book an appointment at the clinic.",
        "parameters": {
            "type": "object",
            "properties": {"day": {"type": "string"}, "reason": {"type": "string"}},
            "required": ["day"],
        },
    },
}
HOURS = {"type": "function", "function": {"name": "opening_hours", "parameters": {"type": "object"}}}
TOOLS = [BOOK, HOURS]
BOOKING = ToolCall("call_book_1", "book_appointment", '{"day": "Tuesday", "reason": "blood pressure check"}')
HOURS_CALL = ToolCall("call_hours_1", "opening_hours", "{}")
BOOKING_Q = "Can I book an appointment for next Tuesday?"
NURSE_Q = "Can I talk to a nurse please?"
EMERGENCY_Q = "I have crushing chest pain and my left arm is numb"
HOURS_RESULT = "The clinic is open from 8am to 6pm, Monday to Friday."
SUNDAY = "The clinic is open on Sundays."
DISCLOSURE = Disclosure().suffix


EXTRACTIVE = {"rewriter": "extractive"}
"""The cleanup policy of these tests: a wrong claim is rewritten from its source sentence."""


def tool_reply(lines: list[str], *calls: ToolCall) -> Reply:
    return Reply(content="\n".join(lines) + "\n" if lines else "", tool_calls=calls)


def supported_with(*calls: ToolCall) -> Reply:
    return Reply(content=s.SUPPORTED, tool_calls=calls)


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def streamed(
    url: str, messages: list[dict[str, Any]], **kwargs: Any
) -> tuple[list[Any], list[str], dict[str, Any]]:
    """Every chunk's choice, the content pieces (the AI disclosure left out), and the trust object."""
    choices = []
    pieces = []
    trust: dict[str, Any] = {}
    client = openai_client(url)
    for chunk in client.chat.completions.create(model="m", messages=messages, stream=True, **kwargs):
        choice = chunk.choices[0]
        choices.append(choice)
        if choice.delta.content:
            pieces.append(choice.delta.content)
        if choice.finish_reason:
            trust = chunk.model_extra["trust"]
    if pieces and pieces[-1] == DISCLOSURE:
        pieces.pop()
    return choices, pieces, trust


def calls_of(choices: list[Any]) -> list[dict[str, str]]:
    """The tool calls the client assembles from the stream's fragments, as the openai docs show."""
    calls: dict[int, dict[str, str]] = {}
    for choice in choices:
        for fragment in choice.delta.tool_calls or []:
            call = calls.setdefault(fragment.index, {"id": "", "name": "", "arguments": ""})
            call["id"] = fragment.id or call["id"]
            call["name"] = (fragment.function.name if fragment.function else None) or call["name"]
            call["arguments"] += (fragment.function.arguments if fragment.function else None) or ""
    return [calls[i] for i in sorted(calls)]


def as_dict(call: ToolCall) -> dict[str, str]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


def test_tools_reach_the_model_and_its_call_comes_back_unchanged_with_verified_text(
    policy_gateway: Start,
) -> None:
    scripted, url, services = policy_gateway(cleanup=EXTRACTIVE)
    scripted.queue(supported_with(BOOKING))
    raw = openai_client(url).chat.completions.with_raw_response.create(
        model="m", messages=user(s.PARACETAMOL_Q), tools=TOOLS, tool_choice="auto", parallel_tool_calls=False
    )
    completion = raw.parse()
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == s.SUPPORTED_TEXT + DISCLOSURE  # the text, verified as without tools
    [call] = choice.message.tool_calls
    assert (call.id, call.type, call.function.name, call.function.arguments) == (
        BOOKING.id,
        "function",
        BOOKING.name,
        BOOKING.arguments,
    )
    sent = scripted.requests[0]
    assert sent["tools"] == TOOLS  # forwarded as the client sent them
    assert (sent["tool_choice"], sent["parallel_tool_calls"]) == ("auto", False)
    assert [m["content"] for m in sent["messages"][:2]] == [SYSTEM_PROMPT, TOOL_RULES]
    assert completion.model_extra["trust"]["summary"]["supported"] == 2
    record = services.audit.get(raw.headers["x-request-id"])
    assert record["tool_calls"] == {"calls": [as_dict(BOOKING)], "returned": True}


def test_streamed_tool_call_fragments_reach_the_client_in_order_after_the_verified_text(
    policy_gateway: Start,
) -> None:
    scripted, url, _ = policy_gateway(cleanup=EXTRACTIVE)
    scripted.queue(supported_with(BOOKING, HOURS_CALL))
    choices, pieces, _ = streamed(url, user(s.PARACETAMOL_Q), tools=TOOLS)
    assert pieces == [s.m(s.DOSE, 1), " " + s.m(s.MAXIMUM, 1)]
    fragments = [f for c in choices for f in c.delta.tool_calls or []]
    assert [f.index for f in fragments] == [0, 0, 0, 0, 1, 1, 1]  # each call's fragments, calls in order
    assert "".join(f.function.arguments for f in fragments if f.index == 0) == BOOKING.arguments
    assert calls_of(choices) == [as_dict(BOOKING), as_dict(HOURS_CALL)]
    first_call = next(i for i, c in enumerate(choices) if c.delta.tool_calls)
    last_text = max(i for i, c in enumerate(choices) if c.delta.content and c.delta.content != DISCLOSURE)
    assert last_text < first_call  # the tool calls come once the text is verified and sent
    assert choices[-1].finish_reason == "tool_calls"


def test_a_request_not_about_health_reaches_the_model_only_with_tools(policy_gateway: Start) -> None:
    scripted, url, _ = policy_gateway(cleanup=EXTRACTIVE)
    refused = openai_client(url).chat.completions.create(model="m", messages=user(BOOKING_Q))
    assert refused.model_extra["trust"]["summary"]["reason"] == "non_clinical"
    assert scripted.requests == []

    scripted.queue(tool_reply([], BOOKING))
    completion = openai_client(url).chat.completions.create(model="m", messages=user(BOOKING_Q), tools=TOOLS)
    choice = completion.choices[0]
    assert (choice.finish_reason, choice.message.content) == ("tool_calls", DISCLOSURE)  # no text of its own
    assert [
        as_dict(ToolCall(c.id, c.function.name, c.function.arguments)) for c in choice.message.tool_calls
    ] == [as_dict(BOOKING)]
    assert completion.model_extra["trust"]["summary"]["refused"] is False
    assert scripted.requests[0]["messages"][2]["content"].startswith("Passages:\n\n(none")  # nothing vetted

    scripted.queue(tool_reply([]))  # tool_choice none: the model cannot call, so nothing is lifted
    none = openai_client(url).chat.completions.create(
        model="m", messages=user(BOOKING_Q), tools=TOOLS, tool_choice="none"
    )
    assert none.model_extra["trust"]["summary"]["reason"] == "non_clinical"
    assert len(scripted.requests) == 1


def test_without_a_vetted_passage_a_claim_is_removed_and_the_tool_call_still_returned(
    policy_gateway: Start,
) -> None:
    scripted, url, _ = policy_gateway(cleanup=EXTRACTIVE)
    handover = ToolCall("call_nurse", "hand_over_to_nurse", '{"urgency": "routine"}')
    nurse_tool = {
        "type": "function",
        "function": {"name": "hand_over_to_nurse", "parameters": {"type": "object"}},
    }
    lines = [urgency_line("routine"), sentence_line("A nurse will call you back within ten minutes.")]
    scripted.queue(tool_reply(lines, handover))
    choices, pieces, trust = streamed(url, user(NURSE_Q), tools=[nurse_tool])
    assert pieces == []  # the claim rests on nothing: removed, never sent
    assert calls_of(choices) == [as_dict(handover)]
    assert choices[-1].finish_reason == "tool_calls"
    assert (trust["summary"]["removed"], trust["summary"]["refused"]) == (1, False)

    scripted.queue(tool_reply(lines))  # no tool call: refused as before, for want of a vetted passage
    completion = openai_client(url).chat.completions.create(
        model="m", messages=user(NURSE_Q), tools=[nurse_tool]
    )
    summary = completion.model_extra["trust"]["summary"]
    assert (summary["refused"], summary["reason"]) == (True, "no_relevant_context")
    assert completion.choices[0].message.tool_calls is None


def test_an_emergency_never_reaches_the_model_with_or_without_tools(policy_gateway: Start) -> None:
    scripted, url, _ = policy_gateway(cleanup=EXTRACTIVE)
    for stream in (False, True):
        if stream:
            choices, pieces, _ = streamed(url, user(EMERGENCY_Q), tools=TOOLS, tool_choice="required")
            assert calls_of(choices) == []
            assert choices[-1].finish_reason == "stop"
            assert s.EMERGENCY_NUMBER in "".join(pieces)
        else:
            completion = openai_client(url).chat.completions.create(
                model="m", messages=user(EMERGENCY_Q), tools=TOOLS, tool_choice="required"
            )
            assert completion.choices[0].message.tool_calls is None
            assert completion.model_extra["trust"]["summary"]["reason"] == "emergency"
    assert scripted.requests == []


def second_turn(question: str, call: ToolCall, result: str) -> list[dict[str, Any]]:
    return [
        *user(question),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call.id, "content": result},
    ]


HOURS_Q = "What are your opening hours?"


def test_a_claim_resting_only_on_a_tool_result_is_removed_with_its_reason(policy_gateway: Start) -> None:
    scripted, url, services = policy_gateway(cleanup=EXTRACTIVE)
    scripted.queue(tool_reply([urgency_line("routine"), sentence_line(HOURS_RESULT)]))
    raw = openai_client(url).chat.completions.with_raw_response.create(
        model="m", messages=second_turn(HOURS_Q, HOURS_CALL, HOURS_RESULT), tools=TOOLS
    )
    completion = raw.parse()
    assert HOURS_RESULT not in completion.choices[0].message.content
    summary = completion.model_extra["trust"]["summary"]  # no call made: refused as without tools
    assert (summary["refused"], summary["reason"]) == (True, "non_clinical")
    sent = scripted.requests[0]["messages"]
    assert sent[-2]["tool_calls"][0]["id"] == HOURS_CALL.id  # the turn is forwarded as the client sent it
    assert sent[-1] == {"role": "tool", "tool_call_id": HOURS_CALL.id, "content": HOURS_RESULT}
    assert HOURS_RESULT not in sent[2]["content"]  # not offered as a passage
    [claim] = services.audit.get(raw.headers["x-request-id"])["cleanup"]
    assert claim["outcome"] == "removed"
    assert "rests only on the result of the tool 'opening_hours'" in claim["reason"]


def test_a_trusted_tools_result_is_a_passage_of_its_tier(policy_gateway: Start) -> None:
    trusted = [{"name": "opening_hours", "tier": "clinical_reference", "org": "Example Clinic"}]
    scripted, url, _ = policy_gateway(cleanup=EXTRACTIVE, tools={"trusted": trusted})

    def answer(body: dict[str, Any]) -> Reply:
        passages = [
            m["content"] for m in body["messages"] if m["content"] and m["content"].startswith("Passages:")
        ]
        assert HOURS_RESULT in passages[0]
        number = int(passages[0].rsplit("\n[", 1)[1].split("]", 1)[0])  # the last passage: the tool's
        return tool_reply(
            [urgency_line("routine"), sentence_line(HOURS_RESULT, [number]), sentence_line(SUNDAY, [number])]
        )

    scripted.queue(answer)
    completion = openai_client(url).chat.completions.create(
        model="m", messages=second_turn(HOURS_Q, HOURS_CALL, HOURS_RESULT), tools=TOOLS
    )
    trust = completion.model_extra["trust"]
    [kept] = [c for c in trust["claims"] if c["outcome"] == "verified"]
    assert kept["text"].startswith(HOURS_RESULT[:-1])
    badge = kept["badges"][0]
    assert (badge["tier"], badge["org"]) == ("clinical_reference", "Example Clinic")
    assert SUNDAY not in completion.choices[0].message.content  # not what the result says: removed


def test_tool_calls_are_sealed_in_the_audit_record_and_counted(policy_gateway: Start) -> None:
    scripted, url, services = policy_gateway(cleanup=EXTRACTIVE, audit_key=Secret(new_key_text("ward-1")))
    secret_reason = "follow-up for Jane Example's glaucoma"
    call = ToolCall(
        "call_sealed", "book_appointment", json.dumps({"day": "Tuesday", "reason": secret_reason})
    )
    scripted.queue(tool_reply([], call))
    raw = openai_client(url).chat.completions.with_raw_response.create(
        model="m", messages=user(BOOKING_Q), tools=TOOLS
    )
    assert raw.parse().choices[0].message.tool_calls[0].function.arguments == call.arguments
    stored = b"".join(
        p.read_bytes()
        for p in (services.settings.resolved_audit_path, Path(f"{services.settings.resolved_audit_path}-wal"))
        if p.exists()
    )
    assert secret_reason.encode() not in stored  # sealed with the rest of the record
    assert (
        services.audit.get(raw.headers["x-request-id"])["tool_calls"]["calls"][0]["arguments"]
        == call.arguments
    )
    metrics = httpx.get(f"{url}/metrics").text
    assert 'gateway_tool_calls_total{outcome="returned"} 1.0' in metrics


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"functions": [{"name": "f"}]}, "functions"),
        ({"function_call": "auto"}, "function_call"),
        ({"tools": [{"type": "retrieval"}]}, "tools[0].type"),
        (
            {"tools": [{"type": "function", "function": {"name": "book appointment"}}]},
            "tools[0].function.name",
        ),
        (
            {"tools": [{"type": "function", "function": {"name": "f", "parameters": []}}]},
            "tools[0].function.parameters",
        ),
        (
            {"tools": [BOOK], "tool_choice": {"type": "function", "function": {"name": "nope"}}},
            "tool_choice.function.name",
        ),
        ({"tool_choice": "auto"}, "tool_choice"),
    ],
)
def test_bad_tool_fields_get_a_400_naming_the_field(policy_gateway, body: dict[str, Any], param: str) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = policy_gateway(cleanup=EXTRACTIVE)
    with pytest.raises(openai.BadRequestError) as info:
        openai_client(url).chat.completions.create(model="m", messages=user(s.PARACETAMOL_Q), **body)
    error = info.value.body
    assert error["param"] == param  # type: ignore[index]
    if param.startswith("function"):
        assert "'tools'" in error["message"] or "'tool_choice'" in error["message"]  # type: ignore[index]
