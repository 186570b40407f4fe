"""The Responses API body as the gateway's ChatRequest: the translation and the errors naming fields."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.domain import Message, Role
from gateway.errors import RequestError
from gateway.web.chat_schema import RequestLimits
from gateway.web.responses_schema import parse_responses_request, responses_openapi_schema


def parse(limits: RequestLimits | None = None, **body: Any):  # type: ignore[no-untyped-def]
    return parse_responses_request(json.dumps(body).encode(), limits)


def refused(body: dict[str, Any], limits: RequestLimits | None = None) -> RequestError:
    with pytest.raises(RequestError) as info:
        parse_responses_request(json.dumps(body).encode(), limits)
    return info.value


def test_a_string_input_is_one_user_message() -> None:
    parsed = parse(model="m", input="What is hay fever?", max_output_tokens=200, temperature=0.2)
    assert parsed.chat.messages == (Message(Role.USER, "What is hay fever?"),)
    assert parsed.chat.max_tokens == 200
    assert parsed.chat.temperature == 0.2
    assert parsed.chat.stream is False
    assert parsed.chat.question == "What is hay fever?"


def test_instructions_come_first_and_turns_keep_their_roles_and_order() -> None:
    parsed = parse(
        model="m",
        instructions="Be brief.",
        stream=True,
        safety_identifier="patient-7",
        metadata={"site": "a"},
        input=[
            {"role": "user", "content": "Hi"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello."}]},
            {"role": "developer", "content": "Cite sources."},
            {
                "role": "user",
                "content": [{"type": "input_text", "text": "Hay"}, {"type": "input_text", "text": "fever?"}],
            },
        ],
    )
    chat = parsed.chat
    assert [(m.role, m.content) for m in chat.messages] == [
        (Role.SYSTEM, "Be brief."),
        (Role.USER, "Hi"),
        (Role.ASSISTANT, "Hello."),
        (Role.DEVELOPER, "Cite sources."),
        (Role.USER, "Hay\nfever?"),
    ]
    assert (chat.stream, chat.user, dict(chat.metadata)) == (True, "patient-7", {"site": "a"})
    assert parsed.instructions == "Be brief."


@pytest.mark.parametrize(
    ("body", "param", "code"),
    [
        (
            {"model": "m", "input": "x", "previous_response_id": "resp_1"},
            "previous_response_id",
            "unsupported_parameter",
        ),
        (
            {"model": "m", "input": "x", "tools": [{"type": "function", "name": "f"}]},
            "tools",
            "unsupported_parameter",
        ),
        ({"model": "m", "input": "x", "tool_choice": "auto"}, "tool_choice", "unsupported_parameter"),
        ({"model": "m", "input": "x", "background": True}, "background", "unsupported_parameter"),
        (
            {"model": "m", "input": [{"type": "function_call", "name": "f"}]},
            "input[0].type",
            "unsupported_parameter",
        ),
        ({"model": "m"}, "input", "missing_required_parameter"),
        ({"model": "m", "input": [{"content": "hi"}]}, "input[0].role", "missing_required_parameter"),
        ({"model": "m", "input": [{"role": "tool", "content": "hi"}]}, "input[0].role", "invalid_value"),
        ({"model": 3, "input": "hi"}, "model", "invalid_value"),
        ({"model": "m", "input": "hi", "metadata": {"a": 1}}, "metadata.a", "invalid_value"),
        ({"model": "m", "input": "   "}, "input", "invalid_value"),
    ],
)
def test_each_refusal_names_its_field(body: dict[str, Any], param: str, code: str) -> None:
    error = refused(body)
    assert (error.param, error.code) == (param, code)
    assert param.split("[")[0].split(".")[0] in error.message


def test_previous_response_id_says_that_no_state_is_kept() -> None:
    error = refused({"model": "m", "input": "x", "previous_response_id": "resp_1"})
    assert "keeps no conversation state" in error.message


def test_limits_count_instructions_as_a_message() -> None:
    limits = RequestLimits(max_messages=2, max_message_chars=50, max_tokens=100)
    turns = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    assert len(parse(limits, model="m", input=turns).chat.messages) == 2
    error = refused({"model": "m", "input": turns, "instructions": "be kind"}, limits)
    assert (error.param, error.code) == ("input", "array_above_max_length")
    assert (
        refused({"model": "m", "input": "hi", "max_output_tokens": 101}, limits).param == "max_output_tokens"
    )
    assert (
        refused({"model": "m", "input": [{"role": "user", "content": "x" * 51}]}, limits).param
        == "input[0].content"
    )


def test_the_published_schema_is_the_parsed_one() -> None:
    schema = responses_openapi_schema()
    assert set(schema["required"]) == {"model", "input"}
    message = schema["properties"]["input"]["anyOf"][1]["items"]
    assert set(message["properties"]["role"]["enum"]) == {"user", "assistant", "system", "developer"}
    assert "$ref" not in json.dumps(schema)
