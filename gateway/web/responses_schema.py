"""Read and validate a Responses API request (``POST /v1/responses``) as the gateway's ``ChatRequest``.

The body's shape is stated once, as msgspec Structs (``ResponsesBody``, ``InputMessage``,
``InputTextPart``): the same types convert the body and publish it in the OpenAPI schema
(``responses_openapi_schema``). What a type cannot say is checked on the typed values, in this order,
each error naming its field in OpenAI's ``param``:

1. features the gateway does not offer: ``previous_response_id`` and ``conversation`` (the gateway keeps
   no conversation state: send the whole conversation in ``input``), ``background``, ``prompt``,
   ``tools`` and ``tool_choice`` (until tool support lands), a ``text.format`` other than plain text;
2. input items other than messages (``function_call``, ``function_call_output``, ...);
3. the types of every field (msgspec, in the body's key order);
4. ``input``: its count with ``instructions`` (``max_messages``), each message's length
   (``max_message_chars``), a non-empty user message; ``instructions``' length;
5. ``max_output_tokens`` (at most ``max_tokens_cap``).

The translation: ``instructions`` becomes a system message before the input; ``input`` as a string is
one user message; a list of messages keeps its roles and order (text parts joined by a newline, as a
chat message's parts are). ``safety_identifier`` (or the older ``user``) is the request's ``user``.
Fields the gateway does not read (``store``, ``reasoning``, ``include``, ``truncation``, ...) are
accepted and ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec

from gateway.domain import ChatRequest, Message, Role
from gateway.errors import RequestError
from gateway.web.chat_schema import RequestLimits, parse_json_object
from gateway.web.openapi_bodies import body_schema

InputRole = Literal["user", "assistant", "system", "developer"]


class InputTextPart(msgspec.Struct):
    """One part of a message's array ``content``: text only (images, files and audio are refused)."""

    type: Literal["input_text", "output_text", "text"]
    text: str


class InputMessage(msgspec.Struct):
    """One message of a multi-turn ``input``: an earlier turn, or the question."""

    role: InputRole
    content: str | list[InputTextPart]
    type: Literal["message"] = "message"


Temperature = Annotated[float, msgspec.Meta(ge=0.0, le=2.0)]
OutputTokens = Annotated[int, msgspec.Meta(ge=1, description="At most the gateway's max_tokens_cap.")]


class ResponsesBody(msgspec.Struct):
    """The fields of a Responses API request the gateway reads."""

    model: Annotated[str, msgspec.Meta(description="Any model name; the gateway answers as itself.")]
    input: Annotated[
        str | list[InputMessage],
        msgspec.Meta(description="The question, or the whole conversation (no state is kept)."),
    ]
    instructions: Annotated[str, msgspec.Meta(description="Sent as a system message.")] | None = None
    temperature: Temperature | None = None
    max_output_tokens: OutputTokens | None = None
    stream: Annotated[bool, msgspec.Meta(description="Typed events of verified text only.")] | None = None
    safety_identifier: str | None = None
    user: str | None = None
    metadata: dict[str, str] | None = None


UNSUPPORTED: dict[str, str] = {
    "previous_response_id": (
        "'previous_response_id' is not supported: the trust gateway keeps no conversation state. "
        "Send the earlier turns in 'input' as a list of messages."
    ),
    "conversation": (
        "'conversation' is not supported: the trust gateway keeps no conversation state. "
        "Send the earlier turns in 'input' as a list of messages."
    ),
    "background": "'background' is not supported by the trust gateway.",
    "prompt": "'prompt' (stored prompt templates) is not supported by the trust gateway.",
    "tools": "'tools' is not supported by the trust gateway.",
    "tool_choice": "'tool_choice' is not supported by the trust gateway.",
}
"""Features refused when present and truthy, in the order they are checked."""

_AT = re.compile(r" - at `\$\.?(?P<path>[^`]*)`$")
_MISSING = re.compile(r"^Object missing required field `(?P<field>[^`]+)`")
_PART = re.compile(r"^input\[\d+\]\.content\[\d+\]")


@dataclass(frozen=True)
class ResponsesRequest:
    """The request as the pipeline reads it, and what the response repeats back."""

    chat: ChatRequest
    instructions: str | None
    max_output_tokens: int | None


def parse_responses_request(body: bytes, limits: RequestLimits | None = None) -> ResponsesRequest:
    limits = limits or RequestLimits()
    data = parse_json_object(body)
    _reject_unsupported(data)
    parsed = _convert(data)
    messages = _messages(parsed, limits)
    max_tokens = parsed.max_output_tokens
    if max_tokens is not None and max_tokens > limits.max_tokens:
        raise RequestError(
            f"'max_output_tokens' must be at most {limits.max_tokens}.",
            param="max_output_tokens",
            code="invalid_value",
        )
    chat = ChatRequest(
        messages=messages,
        model=parsed.model,
        temperature=parsed.temperature,
        max_tokens=max_tokens,
        stream=bool(parsed.stream),
        user=parsed.safety_identifier or parsed.user or None,
        metadata=dict(parsed.metadata or {}),
    )
    return ResponsesRequest(chat, parsed.instructions, max_tokens)


def _reject_unsupported(data: dict[str, Any]) -> None:
    for key, message in UNSUPPORTED.items():
        if data.get(key):
            raise RequestError(message, param=key, code="unsupported_parameter")
    text = data.get("text")
    if isinstance(text, dict) and isinstance(text.get("format"), dict):
        kind = text["format"].get("type")
        if kind not in (None, "text"):
            raise RequestError(
                f"'text.format' of type {kind!r} is not supported: the gateway answers in verified prose.",
                param="text.format.type",
                code="unsupported_parameter",
            )
    items = data.get("input")
    if isinstance(items, list):
        for index, item in enumerate(items):
            kind = item.get("type") if isinstance(item, dict) else None
            if kind not in (None, "message"):
                raise RequestError(
                    f"'input[{index}]' is a {kind!r} item; only messages are supported "
                    "(tool calls are not supported by the trust gateway).",
                    param=f"input[{index}].type",
                    code="unsupported_parameter",
                )


def _convert(data: dict[str, Any]) -> ResponsesBody:
    try:
        return msgspec.convert(data, ResponsesBody)
    except msgspec.ValidationError as err:
        raise _type_error(str(err), data) from None


def _type_error(message: str, data: dict[str, Any]) -> RequestError:
    """The RequestError for msgspec's ``message`` (``Expected `str`, got `int` - at `$.input[0].role```)."""
    at = _AT.search(message)
    path = at["path"] if at else ""
    if path == "metadata[...]":  # msgspec does not name a mapping's key: the first non-string value's
        path = "metadata." + next(str(k) for k, v in data["metadata"].items() if not isinstance(v, str))
    detail = message[: at.start()] if at else message
    missing = _MISSING.match(detail)
    if missing:
        param = f"{path}.{missing['field']}" if path else missing["field"]
        return RequestError(f"'{param}' is required.", param=param, code="missing_required_parameter")
    part = _PART.match(path)
    if part:
        return RequestError(
            f'\'{part[0]}\' must be a text part ({{"type": "input_text", "text": ...}}); '
            "images, files and audio are not supported.",
            param=part[0],
            code="invalid_value",
        )
    param = path or "body"
    return RequestError(f"'{param}' is invalid: {detail}.", param=param, code="invalid_value")


def _messages(body: ResponsesBody, limits: RequestLimits) -> tuple[Message, ...]:
    messages: list[Message] = []
    if body.instructions:
        _check_length(body.instructions, "instructions", limits)
        messages.append(Message(Role.SYSTEM, body.instructions))
    if isinstance(body.input, str):
        _check_length(body.input, "input", limits)
        messages.append(Message(Role.USER, body.input))
    else:
        if not body.input:
            raise RequestError(
                "'input' must contain at least one message.", param="input", code="empty_array"
            )
        count = len(body.input) + len(messages)
        if count > limits.max_messages:
            raise RequestError(
                f"'input' has {len(body.input)} messages ({count} with 'instructions'); "
                f"at most {limits.max_messages} are accepted.",
                param="input",
                code="array_above_max_length",
            )
        for index, item in enumerate(body.input):
            content = (
                item.content if isinstance(item.content, str) else "\n".join(p.text for p in item.content)
            )
            _check_length(content, f"input[{index}].content", limits)
            messages.append(Message(Role(item.role), content))
    if not any(m.role is Role.USER and m.content.strip() for m in messages):
        raise RequestError(
            "'input' must contain a non-empty user message.", param="input", code="invalid_value"
        )
    return tuple(messages)


def _check_length(text: str, param: str, limits: RequestLimits) -> None:
    if len(text) > limits.max_message_chars:
        raise RequestError(
            f"'{param}' is {len(text)} characters long; at most {limits.max_message_chars} are accepted.",
            param=param,
            code="string_above_max_length",
        )


def responses_openapi_schema() -> dict[str, Any]:
    """``ResponsesBody`` as a JSON Schema with its references inlined, as the OpenAPI document
    publishes it (``openapi_bodies.body_schema``)."""
    return body_schema(ResponsesBody)
