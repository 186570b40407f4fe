"""Read and validate an OpenAI chat request body. Every error names the offending field."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gateway.domain import ChatRequest, Message, Role
from gateway.errors import RequestError

if TYPE_CHECKING:
    from gateway.settings import Settings

_UNSUPPORTED = ("tools", "functions", "tool_choice", "function_call", "audio", "prediction")


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
    data = parse_json_object(body)
    _reject_unsupported(data)
    return ChatRequest(
        messages=_messages(data.get("messages"), limits),
        model=_string(data, "model", required=True),
        temperature=_number(data, "temperature", 0.0, 2.0),
        max_tokens=_max_tokens(data, limits.max_tokens),
        stream=_bool(data, "stream"),
        user=_string(data, "user", required=False) or None,
        metadata=_metadata(data.get("metadata")),
    )


def _reject_unsupported(data: dict[str, Any]) -> None:
    for key in _UNSUPPORTED:
        if data.get(key):
            raise RequestError(
                f"'{key}' is not supported by the trust gateway.", param=key, code="unsupported_parameter"
            )
    n = data.get("n")
    if n is not None and n != 1:
        raise RequestError("Only n=1 is supported.", param="n", code="unsupported_parameter")


def _messages(value: Any, limits: RequestLimits) -> tuple[Message, ...]:
    if value is None:
        raise RequestError("'messages' is required.", param="messages", code="missing_required_parameter")
    if not isinstance(value, list):
        raise RequestError("'messages' must be an array of messages.", param="messages", code="invalid_type")
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
    messages = []
    roles = ", ".join(r.value for r in Role)
    for index, item in enumerate(value):
        param = f"messages[{index}]"
        if not isinstance(item, dict):
            raise RequestError(f"'{param}' must be an object.", param=param, code="invalid_type")
        role = item.get("role")
        if not isinstance(role, str) or role not in Role.__members__.values():
            raise RequestError(
                f"'{param}.role' must be one of {roles}; got {role!r}.",
                param=f"{param}.role",
                code="invalid_value",
            )
        content = _content(item.get("content"), f"{param}.content", role)
        if len(content) > limits.max_message_chars:
            raise RequestError(
                f"'{param}.content' is {len(content)} characters long; at most "
                f"{limits.max_message_chars} are accepted.",
                param=f"{param}.content",
                code="string_above_max_length",
            )
        messages.append(Message(Role(role), content))
    if not any(m.role is Role.USER and m.content.strip() for m in messages):
        raise RequestError(
            "'messages' must contain a non-empty user message.", param="messages", code="invalid_value"
        )
    return tuple(messages)


def _content(value: Any, param: str, role: str) -> str:
    if value is None and role in ("assistant", "tool"):
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for index, part in enumerate(value):
            if (
                not isinstance(part, dict)
                or part.get("type") != "text"
                or not isinstance(part.get("text"), str)
            ):
                raise RequestError(
                    f'\'{param}[{index}]\' must be a text part ({{"type": "text", "text": ...}}); '
                    "images and audio are not supported.",
                    param=f"{param}[{index}]",
                    code="invalid_value",
                )
            parts.append(part["text"])
        return "\n".join(parts)
    raise RequestError(
        f"'{param}' must be a string or an array of text parts.", param=param, code="invalid_type"
    )


def _string(data: dict[str, Any], key: str, *, required: bool) -> str:
    value = data.get(key)
    if value is None:
        if required:
            raise RequestError(f"'{key}' is required.", param=key, code="missing_required_parameter")
        return ""
    if not isinstance(value, str):
        raise RequestError(f"'{key}' must be a string.", param=key, code="invalid_type")
    return value


def _number(data: dict[str, Any], key: str, low: float, high: float) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestError(f"'{key}' must be a number.", param=key, code="invalid_type")
    if not low <= value <= high:
        raise RequestError(f"'{key}' must be between {low} and {high}.", param=key, code="invalid_value")
    return float(value)


def _max_tokens(data: dict[str, Any], cap: int) -> int | None:
    key = "max_completion_tokens" if data.get("max_completion_tokens") is not None else "max_tokens"
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"'{key}' must be an integer.", param=key, code="invalid_type")
    if value < 1:
        raise RequestError(f"'{key}' must be at least 1.", param=key, code="invalid_value")
    if value > cap:
        raise RequestError(f"'{key}' must be at most {cap}.", param=key, code="invalid_value")
    return value


def _bool(data: dict[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise RequestError(f"'{key}' must be true or false.", param=key, code="invalid_type")
    return value


def _metadata(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RequestError("'metadata' must be an object of strings.", param="metadata", code="invalid_type")
    for key, item in value.items():
        if not isinstance(item, str):
            raise RequestError(
                f"'metadata.{key}' must be a string.", param=f"metadata.{key}", code="invalid_type"
            )
    return dict(value)
