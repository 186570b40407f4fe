"""The tool fields of a chat request: ``tools``, ``tool_choice``, and the tool turns of ``messages``.

The shapes are OpenAI's (docs/integrator.md, "Tools"): a tool is ``{"type": "function", "function":
{"name", "description", "parameters", "strict"}}``; an assistant message may carry the ``tool_calls`` the
model made (``{"id", "type": "function", "function": {"name", "arguments"}}``), and a ``tool`` message
answers one of them by its ``tool_call_id``. Types are msgspec Structs (decoded with the rest of the body
by ``chat_schema``); what a type cannot say is checked here, each error naming its field:

- a tool's ``type`` must be ``function``, its name match ``domain.TOOL_NAME`` (OpenAI's rule), and there
  are at most ``MAX_TOOLS`` tools with distinct names; ``parameters`` must be an object (a JSON Schema,
  forwarded as sent and not interpreted);
- ``tool_choice`` is ``none``, ``auto``, ``required`` or names an offered function, and needs ``tools``;
- ``tool_calls`` only on an assistant message, each with an id, type ``function``, a name and
  ``arguments`` text; a ``tool`` message needs a ``tool_call_id`` naming an earlier call.

The deprecated ``functions`` / ``function_call`` are refused by ``chat_schema`` with a pointer to ``tools``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import msgspec

from gateway.domain import Message, Role
from gateway.errors import RequestError
from gateway.tool_calls import TOOL_NAME, ToolCall, ToolSpec
from gateway.web.openapi_bodies import published

MAX_TOOLS = 128
"""OpenAI's limit on the number of tools of one request."""

TOOL_CHOICES = ("none", "auto", "required")

DEPRECATED = {"functions": "tools", "function_call": "tool_choice"}
"""The deprecated function-calling fields and the field that replaces each."""


FunctionName = Annotated[str, published(pattern=f"^{TOOL_NAME.pattern}$")]


class FunctionBody(msgspec.Struct):
    name: FunctionName | None = None
    description: str | None = None
    parameters: (
        Annotated[dict[str, Any], msgspec.Meta(description="A JSON Schema, forwarded as sent.")] | None
    ) = None
    strict: bool | None = None


class ToolBody(msgspec.Struct):
    type: Annotated[str, published(enum=["function"])] | None = None
    function: Annotated[FunctionBody | None, published(required=["name"])] = None


class CalledFunctionBody(msgspec.Struct):
    name: FunctionName | None = None
    arguments: str | None = None


class ToolCallBody(msgspec.Struct):
    id: str | None = None
    type: Annotated[str, published(enum=["function"])] | None = None
    function: Annotated[CalledFunctionBody | None, published(required=["name", "arguments"])] = None


PublishedTool = Annotated[ToolBody, published(required=["type", "function"])]
PublishedToolCall = Annotated[ToolCallBody, published(required=["id", "type", "function"])]
"""A tool and a tool call as published: what ``tools`` and ``tool_calls`` require."""


EXPECTED = {
    "tools": "'{param}' must be an array of tools.",
    "tools[]": "'{param}' must be an object.",
    "tools[].type": "'{param}' must be a string.",
    "tools[].function": "'{param}' must be an object.",
    "tools[].function.name": "'{param}' must be a string.",
    "tools[].function.description": "'{param}' must be a string.",
    "tools[].function.parameters": "'{param}' must be an object (a JSON Schema).",
    "tools[].function.strict": "'{param}' must be true or false.",
    "tool_choice": "'{param}' must be a string or an object.",
    "messages[].tool_calls": "'{param}' must be an array of tool calls.",
    "messages[].tool_calls[]": "'{param}' must be an object.",
    "messages[].tool_calls[].id": "'{param}' must be a string.",
    "messages[].tool_calls[].type": "'{param}' must be a string.",
    "messages[].tool_calls[].function": "'{param}' must be an object.",
    "messages[].tool_calls[].function.name": "'{param}' must be a string.",
    "messages[].tool_calls[].function.arguments": "'{param}' must be a string (the arguments as JSON text).",
    "messages[].tool_call_id": "'{param}' must be a string.",
}
"""What each tool field must be, by its path with the indices left out (merged into chat_schema's)."""


def deprecated_error(key: str) -> RequestError:
    replacement = DEPRECATED[key]
    return RequestError(
        f"'{key}' is the deprecated function-calling API and is not supported by the trust gateway; "
        f"send '{replacement}' instead (tools of type 'function').",
        param=key,
        code="unsupported_parameter",
    )


def tools(value: Sequence[ToolBody] | None) -> tuple[ToolSpec, ...]:
    if value is None:
        return ()
    if len(value) > MAX_TOOLS:
        raise RequestError(
            f"'tools' has {len(value)} tools; at most {MAX_TOOLS} are accepted.",
            param="tools",
            code="array_above_max_length",
        )
    specs: list[ToolSpec] = []
    for index, tool in enumerate(value):
        param = f"tools[{index}]"
        if tool.type != "function":
            raise _invalid(f"{param}.type", f"must be 'function'; got {tool.type!r}")
        if tool.function is None:
            raise RequestError(
                f"'{param}.function' is required.",
                param=f"{param}.function",
                code="missing_required_parameter",
            )
        name = _name(tool.function.name, f"{param}.function.name")
        if any(spec.name == name for spec in specs):
            raise _invalid(f"{param}.function.name", f"names the tool {name!r} a second time")
        fn = tool.function
        specs.append(ToolSpec(name, fn.description, fn.parameters, fn.strict))
    return tuple(specs)


def tool_choice(
    value: str | Mapping[str, Any] | None, offered: Sequence[ToolSpec]
) -> str | dict[str, Any] | None:
    if value is None:
        return None
    if not offered:
        raise _invalid("tool_choice", "is only allowed when 'tools' are given")
    if isinstance(value, str):
        if value not in TOOL_CHOICES:
            raise _invalid("tool_choice", f"must be one of {', '.join(TOOL_CHOICES)} or name a function")
        return value
    function = value.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    if value.get("type") != "function" or not isinstance(name, str):
        raise _invalid("tool_choice", 'must be {"type": "function", "function": {"name": ...}} as an object')
    if all(spec.name != name for spec in offered):
        raise _invalid("tool_choice.function.name", f"names {name!r}, which is not one of the 'tools'")
    return {"type": "function", "function": {"name": name}}


def tool_calls(value: Sequence[ToolCallBody] | None, role: Role, param: str) -> tuple[ToolCall, ...]:
    """The tool calls of one message (``param`` is ``messages[i]``): only an assistant's."""
    if not value:
        return ()
    if role is not Role.ASSISTANT:
        raise _invalid(f"{param}.tool_calls", "is only allowed on an assistant message")
    calls: list[ToolCall] = []
    for index, call in enumerate(value):
        at = f"{param}.tool_calls[{index}]"
        if not call.id:
            raise _missing(f"{at}.id")
        if call.type != "function":
            raise _invalid(f"{at}.type", f"must be 'function'; got {call.type!r}")
        if call.function is None:
            raise _missing(f"{at}.function")
        name = _name(call.function.name, f"{at}.function.name")
        if call.function.arguments is None:
            raise _missing(f"{at}.function.arguments")
        calls.append(ToolCall(call.id, name, call.function.arguments))
    return tuple(calls)


def tool_call_id(value: str | None, role: Role, param: str) -> str | None:
    if role is Role.TOOL and not value:
        raise _missing(f"{param}.tool_call_id")
    return value if role is Role.TOOL else None


def check_tool_turns(messages: Sequence[Message]) -> None:
    """Each ``tool`` message answers a call an earlier assistant message made (by its id)."""
    made: set[str] = set()
    for index, message in enumerate(messages):
        made.update(call.id for call in message.tool_calls)
        if message.role is Role.TOOL and message.tool_call_id not in made:
            raise _invalid(
                f"messages[{index}].tool_call_id",
                f"is {message.tool_call_id!r}, which no earlier assistant message's 'tool_calls' made",
            )


def _name(value: str | None, param: str) -> str:
    if value is None:
        raise _missing(param)
    if not TOOL_NAME.fullmatch(value):
        raise _invalid(param, "must be 1 to 64 letters, digits, underscores or dashes")
    return value


def _invalid(param: str, what: str) -> RequestError:
    return RequestError(f"'{param}' {what}.", param=param, code="invalid_value")


def _missing(param: str) -> RequestError:
    return RequestError(f"'{param}' is required.", param=param, code="missing_required_parameter")
