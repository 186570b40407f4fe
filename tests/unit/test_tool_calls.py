"""Tool calls, piece by piece: the request's tool fields, the contract's tool turns and reader, the
scripted model's tool-call fragments through ``ModelUpstream``, the pipeline's helpers and the policy.
No model is loaded; the end-to-end behaviour is in tests/integration/test_tool_calls.py."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest
import yaml

from gateway.domain import (
    ChatRequest,
    ClaimResult,
    Message,
    Outcome,
    QuestionTriage,
    RefusalReason,
    Role,
    Scope,
    Triage,
)
from gateway.drafting.contract import (
    NO_PASSAGES,
    SYSTEM_PROMPT,
    TOOL_RULES,
    ContractReader,
    build_messages,
    sentence_line,
    tool_offer,
    urgency_line,
)
from gateway.drafting.model_upstream import ModelUpstream
from gateway.errors import ConfigurationError, MalformedDraft, RequestError, StageError, UpstreamUnavailable
from gateway.metrics import GatewayMetrics
from gateway.models.chat_model import StreamPiece
from gateway.policies import load_policy
from gateway.resources import bundled
from gateway.testing.models import ScriptedChatModel, ScriptedDrafts, ToolTurn
from gateway.tool_calls import ToolCall, ToolCallDelta, ToolSpec
from gateway.tools.passages import ToolCalls, ToolPassages, ToolResults, returned, tool_passages
from gateway.tools.policy import ToolPolicy, TrustedTool
from gateway.web.chat_schema import parse_chat_request

USER = {"role": "user", "content": "Can I book an appointment?"}
TOOL = {"type": "function", "function": {"name": "book", "parameters": {"type": "object"}}}
CALL = ToolCall("call_1", "book", '{"day": "Tuesday"}')
CALLED = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "book", "arguments": CALL.arguments}}
    ],
}
RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "Booked for Tuesday 10am."}


def parsed(**body: Any) -> ChatRequest:
    return parse_chat_request(json.dumps({"model": "m", "messages": [USER], **body}).encode())


def error_of(**body: Any) -> tuple[str | None, str]:
    with pytest.raises(RequestError) as info:
        parsed(**body)
    return info.value.param, info.value.message


def test_tools_and_tool_turns_are_read_into_the_request() -> None:
    chat = parsed(
        tools=[TOOL],
        tool_choice={"type": "function", "function": {"name": "book"}},
        messages=[USER, CALLED, RESULT],
    )
    assert chat.tools == (ToolSpec("book", None, {"type": "object"}, None),)
    assert chat.tool_choice == {"type": "function", "function": {"name": "book"}}
    assert chat.messages[1].tool_calls == (CALL,)
    assert chat.messages[2] == Message(Role.TOOL, "Booked for Tuesday 10am.", (), "call_1")
    assert chat.offers_tools
    assert not parsed(tools=[TOOL], tool_choice="none").offers_tools


@pytest.mark.parametrize(
    ("body", "param", "says"),
    [
        ({"functions": [{"name": "f"}]}, "functions", "send 'tools'"),
        ({"function_call": "auto"}, "function_call", "send 'tool_choice'"),
        ({"tools": [TOOL, TOOL]}, "tools[1].function.name", "a second time"),
        ({"tools": [TOOL] * 129}, "tools", "at most 128"),
        ({"tools": [{"type": "function"}]}, "tools[0].function", "required"),
        ({"tools": [{"type": "function", "function": {"name": "x" * 65}}]}, "tools[0].function.name", "64"),
        (
            {"tools": [{"type": "function", "function": {"name": "f", "parameters": "{}"}}]},
            "tools[0].function.parameters",
            "JSON Schema",
        ),
        ({"tools": [TOOL], "tool_choice": "always"}, "tool_choice", "none, auto, required"),
        ({"messages": [USER, RESULT]}, "messages[1].tool_call_id", "no earlier assistant"),
        ({"messages": [USER, {"role": "tool", "content": "x"}]}, "messages[1].tool_call_id", "required"),
        ({"messages": [{**USER, "tool_calls": CALLED["tool_calls"]}]}, "messages[0].tool_calls", "assistant"),
        (
            {
                "messages": [
                    USER,
                    {**CALLED, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}]},
                ]
            },
            "messages[1].tool_calls[0].function.arguments",
            "required",
        ),
    ],
)
def test_each_bad_tool_field_is_named(body: dict[str, Any], param: str, says: str) -> None:
    where, message = error_of(**body)
    assert where == param
    assert says in message


def test_the_upstream_is_offered_the_tools_and_sent_the_tool_turns() -> None:
    chat = parsed(
        tools=[TOOL], tool_choice="required", parallel_tool_calls=False, messages=[USER, CALLED, RESULT]
    )
    offer = tool_offer(chat)
    assert offer is not None
    assert offer.body() == {"tools": [TOOL], "tool_choice": "required", "parallel_tool_calls": False}
    messages = build_messages(chat, [])
    assert [m["content"] for m in messages[:3]] == [SYSTEM_PROMPT, TOOL_RULES, "Passages:\n\n" + NO_PASSAGES]
    assert messages[-2] == {"role": "assistant", "content": None, "tool_calls": CALLED["tool_calls"]}
    assert messages[-1] == {"role": "tool", "tool_call_id": "call_1", "content": "Booked for Tuesday 10am."}
    without = build_messages(parsed(), [])
    assert TOOL_RULES not in [m["content"] for m in without]
    assert tool_offer(parsed()) is None


def test_a_reply_may_write_no_line_only_when_it_calls_a_tool() -> None:
    assert ContractReader(0, 100).close(sentence_required=False) == []
    with pytest.raises(MalformedDraft):
        ContractReader(0, 100).close()


async def parts_of(drafts: ScriptedDrafts, request: ChatRequest) -> list[Any]:
    async with aclosing(drafts.stream(request, [])) as parts:
        return [part async for part in parts]


async def test_the_model_upstream_hands_on_tool_call_fragments_and_accepts_a_reply_without_lines() -> None:
    request = parsed(tools=[TOOL])
    parts = await parts_of(ScriptedDrafts(ToolTurn("", (CALL,))), request)
    deltas = [p for p in parts if isinstance(p, ToolCallDelta)]
    assert (deltas[0].id, deltas[0].name, "".join(d.arguments for d in deltas)) == (
        CALL.id,
        CALL.name,
        CALL.arguments,
    )
    text = "\n".join([urgency_line("routine"), sentence_line("I have booked it."), ""])
    parts = await parts_of(ScriptedDrafts(ToolTurn(text, (CALL,))), request)
    assert [type(p).__name__ for p in parts] == [
        "UrgencyRead",
        "DraftSentence",
        *["ToolCallDelta"] * 4,
        "DraftEnd",
    ]
    with pytest.raises(MalformedDraft):  # neither a line nor a call: the contract's failure, as ever
        await parts_of(ScriptedDrafts(ToolTurn("", ())), request)


class CutOff(ScriptedChatModel):
    """A model whose stream breaks inside a tool call's arguments."""

    async def stream(self, messages: Any, **kwargs: Any) -> AsyncGenerator[StreamPiece, None]:
        yield ToolCallDelta(0, "call_1", "book", "")
        yield ToolCallDelta(0, arguments='{"day": ')
        raise UpstreamUnavailable("the stream broke off")


async def test_a_tool_call_cut_off_with_its_stream_is_never_handed_on() -> None:
    seen: list[Any] = []

    async def read() -> None:
        async with aclosing(ModelUpstream(CutOff()).stream(parsed(tools=[TOOL]), [])) as parts:
            seen.extend([part async for part in parts])

    with pytest.raises(UpstreamUnavailable):
        await read()
    assert seen == []


def test_fragments_assemble_into_whole_calls_by_index() -> None:
    calls = ToolCalls()
    for delta in [
        ToolCallDelta(0, "a", "book", ""),
        ToolCallDelta(1, "b", "hours", ""),
        ToolCallDelta(0, arguments='{"day": '),
        ToolCallDelta(1, arguments="{}"),
        ToolCallDelta(0, arguments='"Tuesday"}'),
    ]:
        calls.add(delta)
    assert calls.calls == (ToolCall("a", "book", '{"day": "Tuesday"}'), ToolCall("b", "hours", "{}"))


def test_calls_are_withheld_with_an_emergency_or_a_failure_only() -> None:
    emergency = Outcome("", (), (), True, RefusalReason.EMERGENCY)
    refused = Outcome("", (), (), True, RefusalReason.TOO_MANY_REMOVED)
    assert not returned(emergency, None)
    assert not returned(Outcome("", (), ()), StageError("the draft broke"))
    assert returned(refused, None)
    assert returned(Outcome("x", (), ()), None)


def triaged(scope: Scope) -> Triage:
    return Triage(scope, scope.value, questions=(QuestionTriage("q", scope, scope.value),))


@pytest.mark.parametrize(
    ("scope", "body", "lifted"),
    [
        (Scope.NON_CLINICAL, {"tools": [TOOL]}, Scope.IN_SCOPE),
        (Scope.NON_CLINICAL, {"tools": [TOOL], "tool_choice": "none"}, Scope.NON_CLINICAL),
        (Scope.NON_CLINICAL, {}, Scope.NON_CLINICAL),
        (Scope.EMERGENCY, {"tools": [TOOL]}, Scope.EMERGENCY),
        (Scope.OUT_OF_SCOPE, {"tools": [TOOL]}, Scope.OUT_OF_SCOPE),
    ],
)
def test_only_a_non_clinical_request_that_offers_tools_to_a_model_is_lifted(
    scope: Scope, body: dict[str, Any], lifted: Scope
) -> None:
    def step(policy: ToolPolicy, calls_tools: bool = True) -> ToolPassages:
        return ToolPassages(policy, 1.0, lambda: dt.date(2026, 1, 2), GatewayMetrics(), calls_tools)

    request = parsed(**body)
    result = step(ToolPolicy()).lift(triaged(scope), request)
    assert (result.scope, result.questions[0].scope) == (lifted, lifted)
    off = step(ToolPolicy(non_clinical_to_model=False))
    assert off.lift(triaged(scope), request).scope is scope
    extractive = step(ToolPolicy(), calls_tools=False)  # no model to call a tool: triaged as without
    assert extractive.lift(triaged(scope), request).scope is scope


def test_only_a_trusted_tools_result_becomes_a_passage() -> None:
    hours = ToolCall("call_2", "hours", "{}")
    called = {
        **CALLED,
        "tool_calls": [
            *CALLED["tool_calls"],
            {"id": "call_2", "type": "function", "function": {"name": "hours", "arguments": "{}"}},
        ],
    }
    chat = parsed(
        messages=[USER, called, RESULT, {"role": "tool", "tool_call_id": hours.id, "content": "Open 8-6."}]
    )
    policy = ToolPolicy(trusted=(TrustedTool("hours", "clinical_reference", "Example Clinic"),))
    [passage] = tool_passages(chat, policy, lambda: dt.date(2026, 1, 2))
    assert (passage.text, passage.tier, passage.org, passage.title) == (
        "Open 8-6.",
        "clinical_reference",
        "Example Clinic",
        "Result of hours",
    )
    assert tool_passages(chat, ToolPolicy(), lambda: dt.date(2026, 1, 2)) == ()


def test_a_trusted_tool_of_an_undeclared_tier_stops_start_up(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(bundled("policies"), tmp_path, dirs_exist_ok=True)
    trusted = [{"name": "hours", "tier": "gold", "org": "Clinic"}]
    (tmp_path / "tools.yaml").write_text(yaml.safe_dump({"trusted": trusted}), encoding="utf-8")
    with pytest.raises(ConfigurationError) as info:
        load_policy(tmp_path, "general")
    assert "trusted[0].tier" in str(info.value)
    assert "gold" in str(info.value)
    (tmp_path / "tools.yaml").write_text(yaml.safe_dump({"trusted": [{**trusted[0], "name": "a b"}]}))
    with pytest.raises(ConfigurationError, match="name"):
        load_policy(tmp_path, "general")
    assert load_policy(bundled("policies"), "general").tools == ToolPolicy()


def test_a_failing_claim_that_restates_an_untrusted_tool_result_says_so() -> None:
    from gateway.domain import ClaimOutcome, Span, Statement, StatementKind, Verdict, VerdictLabel

    chat = parsed(messages=[USER, CALLED, RESULT])
    policy = load_policy(bundled("policies"), "general")
    threshold = policy.thresholds.verification.quote_fuzzy_threshold
    calls = ToolCalls(ToolResults.untrusted(chat, policy.tools, threshold))

    def judged(text: str, label: VerdictLabel) -> ClaimResult:
        statement = Statement(text, Span(0, len(text)), StatementKind.CLAIM)
        outcome = ClaimOutcome.VERIFIED if label is VerdictLabel.SUPPORTED else ClaimOutcome.REMOVED
        verdict = Verdict(label, 0.0, "local", "none")
        return ClaimResult(statement, verdict, outcome, None, reason="no source")

    restated, other, supported = calls.attributed(
        [
            judged("Booked for Tuesday 10am.", VerdictLabel.UNSUPPORTED),
            judged("The booking is done and paracetamol cures everything.", VerdictLabel.UNSUPPORTED),
            judged("Booked for Tuesday 10am.", VerdictLabel.SUPPORTED),
        ]
    )
    why = "rests only on the result of the tool 'book', which is not a vetted source"
    assert restated.reason == f"{why}; no source"
    assert (other.reason, supported.reason) == ("no source", "no source")
    trusting = ToolPolicy(trusted=(TrustedTool("book", "clinical_reference", "Clinic"),))
    trusted = ToolCalls(ToolResults.untrusted(chat, trusting, threshold))
    [again] = trusted.attributed([judged("Booked for Tuesday 10am.", VerdictLabel.UNSUPPORTED)])
    assert again.reason == "no source"  # a trusted tool's result is a source: nothing to say
