"""The request bodies of the JSON endpoints, published in the OpenAPI schema (``/schema``).

The handlers read and validate their bodies themselves (every error names the field, in OpenAI's
error shape), so Litestar cannot infer a schema from a signature. These JSON Schemas state the same
contract for integrators and for schema-driven fuzzing (``tests/security/test_fuzz.py``); they are
attached with ``operation_class=with_body(...)``. The validators remain the authority: a body that
passes the schema may still be refused with a 400 naming the field (e.g. no non-empty user message).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, Operation, RequestBody, Schema

from gateway.domain import Role

_TEXT_PART: dict[str, Any] = {
    "type": "object",
    "required": ["type", "text"],
    "properties": {"type": {"type": "string", "enum": ["text"]}, "text": {"type": "string"}},
}

_FUNCTION_NAME = {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}
_TOOL: dict[str, Any] = {
    "type": "object",
    "required": ["type", "function"],
    "properties": {
        "type": {"type": "string", "enum": ["function"]},
        "function": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": _FUNCTION_NAME,
                "description": {"type": "string"},
                "parameters": {"type": "object", "description": "A JSON Schema, forwarded as sent."},
                "strict": {"type": "boolean"},
            },
        },
    },
}
_TOOL_CALL: dict[str, Any] = {
    "type": "object",
    "required": ["id", "type", "function"],
    "properties": {
        "id": {"type": "string"},
        "type": {"type": "string", "enum": ["function"]},
        "function": {
            "type": "object",
            "required": ["name", "arguments"],
            "properties": {"name": _FUNCTION_NAME, "arguments": {"type": "string"}},
        },
    },
}

CHAT_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["model", "messages"],
    "properties": {
        "model": {"type": "string", "description": "Any model name; the gateway answers as itself."},
        "messages": {
            "type": "array",
            "minItems": 1,
            "description": "The conversation; at least one non-empty user message.",
            "items": {
                "type": "object",
                "required": ["role", "content"],
                "properties": {
                    "role": {"type": "string", "enum": [r.value for r in Role]},
                    "content": {
                        "oneOf": [
                            {"type": "string"},
                            {"type": "array", "items": _TEXT_PART},
                            {"type": "null"},
                        ]
                    },
                    "tool_calls": {"type": "array", "items": _TOOL_CALL, "description": "Assistant turns."},
                    "tool_call_id": {"type": "string", "description": "Tool turns: the call answered."},
                },
            },
        },
        "temperature": {"type": "number", "minimum": 0, "maximum": 2},
        "max_tokens": {"type": "integer", "minimum": 1},
        "max_completion_tokens": {"type": "integer", "minimum": 1},
        "stream": {"type": "boolean", "description": "Server-sent events of verified text only."},
        "n": {"type": "integer", "enum": [1]},
        "user": {"type": "string"},
        "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
        "tools": {
            "type": "array",
            "maxItems": 128,
            "items": _TOOL,
            "description": "Forwarded to the model; its tool calls come back unchanged (docs/integrator.md).",
        },
        "tool_choice": {
            "oneOf": [{"type": "string", "enum": ["none", "auto", "required"]}, {"type": "object"}]
        },
        "parallel_tool_calls": {"type": "boolean"},
    },
}

VERIFY_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["answer", "sources"],
    "properties": {
        "answer": {"type": "string", "minLength": 1, "description": "Text with [n] citation markers."},
        "id": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "sources": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id"],
                "properties": {
                    "id": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$"},
                    "text": {"type": "string"},
                    "title": {"type": "string"},
                    "url": {"type": "string", "description": "http(s) only; fetched under the SSRF rules."},
                },
            },
        },
    },
}

RETRIEVE_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["query"],
    "additionalProperties": False,
    "properties": {
        "query": {"type": "string", "minLength": 1},
        "k": {"type": "integer", "minimum": 1},
        "tiers": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "orgs": {"type": "array", "items": {"type": "string", "minLength": 1}},
    },
}

_KEYS = {
    "minItems": "min_items",
    "maxItems": "max_items",
    "minLength": "min_length",
    "maxLength": "max_length",
    "minimum": "minimum",
    "maximum": "maximum",
    "enum": "enum",
    "pattern": "pattern",
    "description": "description",
    "required": "required",
}


def to_schema(data: dict[str, Any]) -> Schema:
    """A Litestar ``Schema`` from the subset of JSON Schema used above."""
    fields: dict[str, Any] = {_KEYS[k]: v for k, v in data.items() if k in _KEYS}
    if "type" in data:
        fields["type"] = OpenAPIType(data["type"])
    if "properties" in data:
        fields["properties"] = {name: to_schema(value) for name, value in data["properties"].items()}
    if "items" in data:
        fields["items"] = to_schema(data["items"])
    if "oneOf" in data:
        fields["one_of"] = [to_schema(option) for option in data["oneOf"]]
    if "anyOf" in data:
        fields["any_of"] = [to_schema(option) for option in data["anyOf"]]
    extra = data.get("additionalProperties")
    if isinstance(extra, bool):
        fields["additional_properties"] = extra
    elif isinstance(extra, dict):
        fields["additional_properties"] = to_schema(extra)
    return Schema(**fields)


def with_body(body: dict[str, Any], description: str) -> type[Operation]:
    """An ``operation_class`` that publishes ``body`` as the operation's JSON request body."""

    @dataclass
    class _WithBody(Operation):
        def __post_init__(self) -> None:
            self.request_body = RequestBody(
                content={"application/json": OpenAPIMediaType(schema=to_schema(body))},
                description=description,
                required=True,
            )

    return _WithBody
