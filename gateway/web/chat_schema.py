"""Read and validate an OpenAI chat request body. Every error names the offending field.

The body's shape is stated once, as msgspec Structs (``ChatBody``, ``MessageBody``, ``TextPart``);
what a type cannot say (a size limit from the settings, a required user message, ``n`` other than 1,
a temperature out of range) is checked on the typed values. Documented OpenAI parameters the gateway
does not use (``top_p``, ``stop``, ``seed``, ``stream_options``, ...: ``Ignored``) are accepted but
still type-checked; undocumented fields (a message's ``name``, ...) are ignored, as OpenAI does. Only
``application/json`` bodies are read (``check_json_content_type``: 415 otherwise).

Two readings of the same body, one result:

- ``msgspec.json.decode(body, type=ChatBody)``: a well-formed request is decoded and typed in one
  pass, in C.
- Anything that pass refuses, and a body the stdlib would read differently (invalid UTF-8, an integer
  longer than Python's conversion limit, both in a field msgspec skips), is read again by the stdlib
  (``parse_json_object``: NaN, a byte-order mark and duplicate keys are read as ``json.loads`` reads
  them; a lone UTF-16 surrogate is named by its path) and each field is converted with
  ``msgspec.convert`` when it is checked. So the first error reported is the first in the order below,
  whatever the order of the body's keys: the refused OpenAI features, ``messages`` (its count, then
  each message's type, role, content and length, its tool calls, then the tool turns' ids),
  ``model``, ``temperature``, ``max_completion_tokens`` or else ``max_tokens``, ``stream``, ``user``,
  ``metadata``, ``tools``, ``tool_choice``, ``parallel_tool_calls`` (``tool_schema``), then the
  ignored parameters in ``Ignored``'s order.

A msgspec ``ValidationError`` names its place as a path (``$.messages[0].content``), which
``gateway.body_errors.convert`` turns into the ``param`` OpenAI clients read (``messages[0].content``);
``_request_error`` gives the field's message and ``code``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from gateway.body_errors import convert
from gateway.domain import ChatRequest, Message, Role
from gateway.errors import RequestError, UnsupportedMediaTypeError
from gateway.web import tool_schema
from gateway.web.openapi_bodies import published
from gateway.web.tool_schema import MAX_TOOLS, TOOL_CHOICES, PublishedTool, PublishedToolCall

if TYPE_CHECKING:
    from gateway.settings import Settings

_UNSUPPORTED = ("functions", "function_call", "audio", "prediction")

TEMPERATURE_RANGE = (0.0, 2.0)
"""OpenAI's range of ``temperature``."""


@dataclass(frozen=True)
class RequestLimits:
    """Size limits of one chat request (settings ``max_messages``, ``max_message_chars``,
    ``max_tokens_cap``). A request over a limit gets a 400 naming the field; nothing is clamped."""

    max_messages: int = 64
    max_message_chars: int = 16_000
    max_tokens: int = 4096

    @classmethod
    def from_settings(cls, settings: Settings) -> RequestLimits:
        return cls(settings.max_messages, settings.max_message_chars, settings.max_tokens_cap)


class TextPart(msgspec.Struct):
    """One part of an array ``content``: only text; images and audio are refused."""

    type: Literal["text"]
    text: str


class MessageRole(msgspec.Struct):
    role: Role | None = None
    """Required; ``None`` (absent or null) is refused after decoding, naming ``messages[i].role``."""


class MessageBody(MessageRole):
    content: str | list[TextPart] | None = None
    """``None`` only for an assistant or tool message (a tool call's turn): read as ``""``."""
    tool_calls: Annotated[list[PublishedToolCall], msgspec.Meta(description="Assistant turns.")] | None = None
    """An assistant message's tool calls (``tool_schema``)."""
    tool_call_id: Annotated[str, msgspec.Meta(description="Tool turns: the call answered.")] | None = None
    """A tool message: the call it answers."""


PublishedMessage = Annotated[MessageBody, published(required=["role", "content"])]


class Unsupported(msgspec.Struct):
    """OpenAI features the gateway refuses when present and truthy, whatever their value (the deprecated
    ``functions`` / ``function_call`` with a pointer to ``tools``)."""

    functions: Any = None
    function_call: Any = None
    audio: Any = None
    prediction: Any = None
    n: Annotated[Any, published(type="integer", enum=[1])] = None
    """Accepted only when absent, null or equal to 1."""


class Ignored(Unsupported):
    """Documented OpenAI parameters the gateway accepts but does not use. They are still type-checked
    (a wrong type is a 400 naming the field), so a client's mistake is not silently answered."""

    top_p: float | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    stop: str | list[str] | None = None
    seed: int | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None
    logit_bias: dict[str, float] | None = None
    response_format: dict[str, Any] | None = None
    stream_options: dict[str, Any] | None = None
    service_tier: str | None = None
    store: bool | None = None
    reasoning_effort: str | None = None
    modalities: list[str] | None = None


_UNSUPPORTED_FIELDS = {f.name for f in msgspec.structs.fields(Unsupported)}
IGNORED = tuple(f.name for f in msgspec.structs.fields(Ignored) if f.name not in _UNSUPPORTED_FIELDS)
"""The ignored parameters' names, in the order they are checked."""


class ChatBody(Ignored):
    """The fields of a chat request the gateway reads. ``None`` stands for absent or null alike."""

    messages: (
        Annotated[
            list[PublishedMessage],
            published(minItems=1, description="The conversation; at least one non-empty user message."),
        ]
        | None
    ) = None
    model: (
        Annotated[str, msgspec.Meta(description="Any model name; the gateway answers as itself.")] | None
    ) = None
    temperature: (
        Annotated[float, published(minimum=TEMPERATURE_RANGE[0], maximum=TEMPERATURE_RANGE[1])] | None
    ) = None
    max_tokens: Annotated[int, published(minimum=1)] | None = None
    max_completion_tokens: Annotated[int, published(minimum=1)] | None = None
    """Replaces the deprecated ``max_tokens``: when it is given, ``max_tokens`` is not read."""
    stream: Annotated[bool, msgspec.Meta(description="Server-sent events of verified text only.")] | None = (
        None
    )
    user: str | None = None
    metadata: dict[str, str] | None = None
    tools: (
        Annotated[
            list[PublishedTool],
            published(
                maxItems=MAX_TOOLS,
                description="Forwarded to the model; its tool calls come back unchanged (docs/integrator.md)",
            ),
        ]
        | None
    ) = None
    tool_choice: Annotated[str, published(enum=list(TOOL_CHOICES))] | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None


PublishedChatBody = Annotated[ChatBody, published(required=["model", "messages"])]
"""``ChatBody`` as published in the OpenAPI schema (``chat.py``): ``_model`` and ``_messages`` need both."""


_FIELD_TYPES: dict[str, Any] = {field.name: field.type for field in msgspec.structs.fields(ChatBody)}
_FIELD_TYPES["messages"] = list[Any] | None  # each message is converted on its own, in order

_FAST_ERRORS = (msgspec.DecodeError, RecursionError, UnicodeDecodeError)
"""What ``msgspec.json.decode`` raises for a body it refuses (``ValidationError`` is a
``DecodeError``); such a body is read again by the stdlib, which explains it."""


def parse_json_object(body: bytes) -> dict[str, Any]:
    """The request body as a JSON object, or a RequestError saying what is wrong with it."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise RequestError(f"The request body is not valid JSON: {err}", code="invalid_json") from None
    except RecursionError:
        raise RequestError("The request body is nested too deeply.", code="invalid_json") from None
    except ValueError as err:  # e.g. an integer longer than Python's 4300-digit conversion limit
        raise RequestError(f"The request body has a value out of range: {err}", code="invalid_json") from None
    if not isinstance(data, dict):
        raise RequestError("The request body must be a JSON object.", code="invalid_json")
    bad = _unpaired_surrogate_path(data)
    if bad is not None:
        raise RequestError(
            f"'{bad}' contains an unpaired UTF-16 surrogate (such as \\ud800); send valid Unicode text.",
            param=bad,
            code="invalid_unicode",
        )
    return data


def _unpaired_surrogate_path(data: Any) -> str | None:
    """The path of the first string (key or value) holding a lone surrogate, or None. Iterative, so a
    deeply nested body cannot exhaust the stack."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if _has_surrogate(value):
                return path or "body"
        elif isinstance(value, dict):
            for key, item in value.items():
                child = f"{path}.{key}" if path else str(key)
                if _has_surrogate(key):
                    return path or "body"
                stack.append((child, item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", item) for i, item in enumerate(value))
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def parse_chat_request(body: bytes, limits: RequestLimits | None = None) -> ChatRequest:
    limits = limits or RequestLimits()
    try:
        chat = msgspec.json.decode(body, type=ChatBody)
    except _FAST_ERRORS:
        return _chat_request(_InOrder(parse_json_object(body)), limits)
    if not _stdlib_reads_alike(body):
        return _chat_request(_InOrder(parse_json_object(body)), limits)
    return _chat_request(_Decoded(chat), limits)


def _stdlib_reads_alike(body: bytes) -> bool:
    """False for a body msgspec decoded but ``json.loads`` would refuse, which can only sit in a field
    msgspec skipped: bytes that are not UTF-8 (an encoded surrogate among them), or an integer longer
    than the stdlib converts. A long run of digits inside a string is a false alarm, and harmless: the
    stdlib reading accepts it too."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    limit = sys.get_int_max_str_digits()
    if not limit or len(body) <= limit:
        return True
    return b"0" * (limit + 1) not in body.translate(_DIGITS_AS_ZERO)  # in C, unlike a regex: ~0.5 ns a byte


_DIGITS_AS_ZERO = bytes(ord("0") if byte in b"0123456789" else ord(" ") for byte in range(256))


class _Decoded:
    """A body msgspec decoded in one pass: every field already has its type."""

    def __init__(self, chat: ChatBody) -> None:
        self._chat = chat

    def field(self, name: str) -> Any:
        return getattr(self._chat, name)

    def message(self, item: Any, param: str) -> MessageBody:
        return item  # type: ignore[no-any-return]  # decoded as MessageBody


class _InOrder:
    """A body read by the stdlib: each field is converted to its type when it is read, so the first
    error raised is the first in the documented order."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def field(self, name: str) -> Any:
        return _convert(self._data.get(name), _FIELD_TYPES[name], name)

    def message(self, item: Any, param: str) -> MessageBody:
        _role(_convert(item, MessageRole, param), param)  # a message's role is checked before its content
        return _convert(item, MessageBody, param)  # type: ignore[no-any-return]


def _chat_request(body: _Decoded | _InOrder, limits: RequestLimits) -> ChatRequest:
    """The request, checked field by field in the documented order (keyword arguments are evaluated
    left to right)."""
    _reject_unsupported(body.field)
    request = ChatRequest(
        messages=_messages(body, limits),
        model=_model(body.field("model")),
        temperature=_temperature(body.field("temperature")),
        max_tokens=_max_tokens(body.field, limits.max_tokens),
        stream=bool(body.field("stream")),
        user=body.field("user") or None,
        metadata=dict(body.field("metadata") or {}),
        tools=(offered := tool_schema.tools(body.field("tools"))),
        tool_choice=tool_schema.tool_choice(body.field("tool_choice"), offered),
        parallel_tool_calls=body.field("parallel_tool_calls"),
    )
    for name in IGNORED:  # checked last, in their declared order; their values are not used
        body.field(name)
    return request


JSON_MEDIA_TYPE = "application/json"


def check_json_content_type(content_type: str | None) -> None:
    """415 unless the body is declared ``application/json`` (parameters such as ``charset`` allowed):
    a form post, ``text/plain`` or XML is refused before it is read, so a cross-site form cannot
    reach the API."""
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    if media_type != JSON_MEDIA_TYPE:
        shown = media_type or "none"
        raise UnsupportedMediaTypeError(
            f"The request body must be sent as Content-Type: application/json (got {shown}).",
            param="Content-Type",
            code="unsupported_media_type",
        )


def _reject_unsupported(field: Callable[[str], Any]) -> None:
    for key in _UNSUPPORTED:
        if field(key) and key in tool_schema.DEPRECATED:
            raise tool_schema.deprecated_error(key)
        if field(key):
            raise RequestError(
                f"'{key}' is not supported by the trust gateway.", param=key, code="unsupported_parameter"
            )
    n = field("n")
    if n is not None and n != 1:
        raise RequestError("Only n=1 is supported.", param="n", code="unsupported_parameter")


def _messages(body: _Decoded | _InOrder, limits: RequestLimits) -> tuple[Message, ...]:
    value = body.field("messages")
    if value is None:
        raise RequestError("'messages' is required.", param="messages", code="missing_required_parameter")
    if not value:
        raise RequestError(
            "'messages' must contain at least one message.", param="messages", code="empty_array"
        )
    if len(value) > limits.max_messages:
        raise RequestError(
            f"'messages' has {len(value)} messages; at most {limits.max_messages} are accepted.",
            param="messages",
            code="array_above_max_length",
        )
    messages = tuple(
        _message(body.message(item, f"messages[{index}]"), f"messages[{index}]", limits)
        for index, item in enumerate(value)
    )
    if not any(m.role is Role.USER and m.content.strip() for m in messages):
        raise RequestError(
            "'messages' must contain a non-empty user message.", param="messages", code="invalid_value"
        )
    tool_schema.check_tool_turns(messages)
    return messages


def _role(message: MessageRole, param: str) -> Role:
    if message.role is None:
        raise _role_error(param, None)
    return message.role


def _message(item: MessageBody, param: str, limits: RequestLimits) -> Message:
    role = _role(item, param)
    content = item.content
    if content is None:
        if role not in (Role.ASSISTANT, Role.TOOL):
            raise RequestError(
                _EXPECTED["messages[].content"].format(param=f"{param}.content"),
                param=f"{param}.content",
                code="invalid_type",
            )
        content = ""
    elif isinstance(content, list):
        content = "\n".join(part.text for part in content)
    if len(content) > limits.max_message_chars:
        raise RequestError(
            f"'{param}.content' is {len(content)} characters long; at most "
            f"{limits.max_message_chars} are accepted.",
            param=f"{param}.content",
            code="string_above_max_length",
        )
    calls = tool_schema.tool_calls(item.tool_calls, role, param)
    return Message(role, content, calls, tool_schema.tool_call_id(item.tool_call_id, role, param))


def _model(value: str | None) -> str:
    if value is None:
        raise RequestError("'model' is required.", param="model", code="missing_required_parameter")
    return value


def _temperature(value: float | None) -> float | None:
    low, high = TEMPERATURE_RANGE
    if value is not None and not low <= value <= high:
        raise RequestError(
            f"'temperature' must be between {low} and {high}.", param="temperature", code="invalid_value"
        )
    return value


def _max_tokens(field: Callable[[str], Any], cap: int) -> int | None:
    key = "max_completion_tokens"
    value = field(key)
    if value is None:
        key = "max_tokens"
        value = field(key)
    if value is None:
        return None
    if value < 1:
        raise RequestError(f"'{key}' must be at least 1.", param=key, code="invalid_value")
    if value > cap:
        raise RequestError(f"'{key}' must be at most {cap}.", param=key, code="invalid_value")
    return value  # type: ignore[no-any-return]


# --- msgspec's ValidationError as the gateway's RequestError ------------------------------------------

_TEXT_PART = re.compile(r"messages\[\d+\]\.content\[\d+\]")
_EXPECTED = {
    "messages": "'{param}' must be an array of messages.",
    "messages[]": "'{param}' must be an object.",
    "messages[].content": "'{param}' must be a string or an array of text parts.",
    "model": "'{param}' must be a string.",
    "user": "'{param}' must be a string.",
    "temperature": "'{param}' must be a number.",
    "max_tokens": "'{param}' must be an integer.",
    "max_completion_tokens": "'{param}' must be an integer.",
    "stream": "'{param}' must be true or false.",
    "metadata": "'{param}' must be an object of strings.",
    "metadata[...]": "'{param}' must be a string.",
    "top_p": "'{param}' must be a number.",
    "frequency_penalty": "'{param}' must be a number.",
    "presence_penalty": "'{param}' must be a number.",
    "stop": "'{param}' must be a string or an array of strings.",
    "stop[]": "'{param}' must be a string.",
    "seed": "'{param}' must be an integer.",
    "logprobs": "'{param}' must be true or false.",
    "top_logprobs": "'{param}' must be an integer.",
    "logit_bias": "'{param}' must be an object of numbers.",
    "logit_bias[...]": "'{param}' must be a number.",
    "response_format": "'{param}' must be an object.",
    "stream_options": "'{param}' must be an object.",
    "parallel_tool_calls": "'{param}' must be true or false.",
    "service_tier": "'{param}' must be a string.",
    "store": "'{param}' must be true or false.",
    "reasoning_effort": "'{param}' must be a string.",
    "modalities": "'{param}' must be an array of strings.",
    "modalities[]": "'{param}' must be a string.",
    **tool_schema.EXPECTED,
}
"""What each field must be, by its path with the indices left out; a type error names it."""


def _convert(value: Any, type_: Any, param: str) -> Any:
    return convert(value, type_, param, lambda path: _request_error(path, param, value))


def _request_error(path: str, param: str, value: Any) -> RequestError:
    """The RequestError for ``value`` (found at ``param``) not fitting its type at ``path``
    (``messages[0].content[0].type``)."""
    part = _TEXT_PART.match(path)
    if part:
        return RequestError(
            f'\'{part[0]}\' must be a text part ({{"type": "text", "text": ...}}); '
            "images and audio are not supported.",
            param=part[0],
            code="invalid_value",
        )
    if path == f"{param}.role":
        return _role_error(param, value.get("role"))
    kind = re.sub(r"\[\d+\]", "[]", path)
    if kind == "metadata[...]":  # msgspec does not name a mapping's key; the first non-string value's
        key = next(k for k, v in value.items() if not isinstance(v, str))
        path = f"metadata.{key}"
    expected = _EXPECTED.get(kind, "'{param}' has the wrong type.")
    return RequestError(expected.format(param=path), param=path, code="invalid_type")


def _role_error(param: str, role: Any) -> RequestError:
    roles = ", ".join(r.value for r in Role)
    return RequestError(
        f"'{param}.role' must be one of {roles}; got {role!r}.", param=f"{param}.role", code="invalid_value"
    )
