"""The chat body's two readings (msgspec in one pass, the stdlib in order) give one result."""

from __future__ import annotations

import json

import pytest

from gateway.errors import RequestError
from gateway.web.chat_schema import parse_chat_request

USER = {"role": "user", "content": "What is paracetamol?"}


def error_of(raw: bytes) -> tuple[str | None, str | None]:
    with pytest.raises(RequestError) as info:
        parse_chat_request(raw)
    return info.value.param, info.value.code


def test_fields_openai_sends_and_the_gateway_does_not_read_are_accepted() -> None:
    body = {
        "model": "m",
        "messages": [{**USER, "name": "pat"}, {"role": "assistant", "content": None, "tool_calls": []}],
        "stream_options": {"include_usage": True},
        "tools": [],
        "n": 1,
    }
    chat = parse_chat_request(json.dumps(body).encode())
    assert [m.content for m in chat.messages] == ["What is paracetamol?", ""]


@pytest.mark.parametrize(
    "raw",
    [
        b'{"temperature": "hot", "messages": [{"content": 5, "role": "wizard"}], "model": "m"}',
        b'{"model": "m", "messages": [{"role": "wizard", "content": 5}], "temperature": "hot"}',
    ],
)
def test_the_first_error_does_not_depend_on_the_order_of_keys(raw: bytes) -> None:
    assert error_of(raw) == ("messages[0].role", "invalid_value")


def test_what_the_stdlib_refuses_in_an_ignored_field_is_still_refused() -> None:
    message = b'"messages": [{"role": "user", "content": "hi"}]'
    assert error_of(b'{"model": "m", "x": 1' + b"0" * 5000 + b", " + message + b"}") == (None, "invalid_json")
    assert error_of(b'{"model": "m", "x": "\xff", ' + message + b"}") == (None, "invalid_json")
    assert error_of(b'{"model": "m", "x": ["\\ud800"], ' + message + b"}") == ("x[0]", "invalid_unicode")


def test_a_non_string_metadata_value_is_named_by_its_key() -> None:
    raw = json.dumps({"model": "m", "messages": [USER], "metadata": {"a": "x", "b": 1}}).encode()
    assert error_of(raw) == ("metadata.b", "invalid_type")


@pytest.mark.parametrize(
    ("field", "value", "param"),
    [
        ("top_p", "x", "top_p"),
        ("stop", 5, "stop"),
        ("stop", ["END", 3], "stop[1]"),
        ("seed", 1.5, "seed"),
        ("presence_penalty", "high", "presence_penalty"),
        ("logprobs", "yes", "logprobs"),
        ("response_format", "json", "response_format"),
        ("stream_options", [], "stream_options"),
        ("modalities", "text", "modalities"),
    ],
)
def test_ignored_openai_parameters_are_still_type_checked(field: str, value: object, param: str) -> None:
    body = {"model": "m", "messages": [USER], field: value}
    with pytest.raises(RequestError) as info:
        parse_chat_request(json.dumps(body).encode())
    assert (info.value.param, info.value.code) == (param, "invalid_type")
    assert f"'{param}' must be" in info.value.message


def test_well_typed_ignored_parameters_are_accepted_and_checked_after_the_read_ones() -> None:
    body = {
        "model": "m",
        "messages": [USER],
        "top_p": 0.9,
        "stop": ["\n"],
        "seed": 7,
        "logit_bias": {"50256": -100},
    }
    assert parse_chat_request(json.dumps(body).encode()).model == "m"
    both = {"messages": [USER], "top_p": "x"}  # model is missing too: it is named first, whatever the order
    assert error_of(json.dumps(both).encode()) == ("model", "missing_required_parameter")


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "application/xml", "multipart/form-data"],
)
def test_only_json_bodies_are_read(content_type: str | None) -> None:
    from gateway.errors import UnsupportedMediaTypeError
    from gateway.web.chat_schema import check_json_content_type

    with pytest.raises(UnsupportedMediaTypeError) as info:
        check_json_content_type(content_type)
    assert info.value.status_code == 415
    assert info.value.code == "unsupported_media_type"
    check_json_content_type("application/json; charset=utf-8")
    check_json_content_type("Application/JSON")
