"""The request bodies of the JSON endpoints in the OpenAPI schema (``/schema``), generated from the
msgspec types the handlers decode with.

Each body's shape is stated once, as msgspec Structs next to its parser (``chat_schema.ChatBody``,
``responses_schema.ResponsesBody``, ``checkonly.inputs.CheckBody``, ``retrieve_api.RetrieveBody``).
``with_body(ChatBody, ...)`` publishes the JSON Schema msgspec generates for that type
(``body_schema``), so the published contract cannot drift from the one enforced.

Why the handlers decode the body themselves rather than declaring ``data: ChatBody`` and letting
Litestar parse it: Litestar's conversion is lax (``strict=False``: ``"1"`` becomes ``1``) and reports a
``ValidationException`` listing every failure, while the gateway answers the *first* failure in a
documented order, in OpenAI's error shape with the field in ``param``, reads a body msgspec refuses as
``json.loads`` would (NaN, a byte-order mark, duplicate keys, a lone surrogate named by its path), and
checks limits taken from the settings (``RequestLimits``) on the typed values; the chat handler's
``Server-Timing`` also reports the parse. The types are deliberately loose where a field's order or
message matters (``X | None = None``); the rules the parsers check on the typed values are published
with the type as documentation only (``msgspec.Meta(extra_json_schema=...)``, from the same constants
the checks use), so they do not change what msgspec accepts.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

import msgspec
from litestar.openapi.spec import OpenAPIFormat, OpenAPIMediaType, OpenAPIType, Operation, RequestBody, Schema

_SCHEMA_FIELDS = {field.name for field in dataclasses.fields(Schema)}
_RENAMED = {"not": "schema_not", "if": "schema_if", "else": "schema_else"}
_ONE = (
    "items",
    "contains",
    "schema_not",
    "schema_if",
    "then",
    "schema_else",
    "property_names",
    "additional_properties",
    "unevaluated_items",
    "unevaluated_properties",
    "content_schema",
)
"""Keywords whose value is a schema (``additionalProperties`` may also be a boolean)."""
_LIST = ("any_of", "all_of", "one_of", "prefix_items")
"""Keywords whose value is a list of schemas."""
_MAP = ("properties", "pattern_properties", "dependent_schemas")
"""Keywords whose value maps names to schemas."""
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def published(**rules: Any) -> msgspec.Meta:
    """Rules a parser checks on the typed values (``minItems=1``, ``maximum=2.0``), published with the
    type in the OpenAPI schema only: msgspec does not enforce ``extra_json_schema``, so the parser's
    own check, in its order and with its message, stays the one that refuses."""
    return msgspec.Meta(extra_json_schema=rules)


def body_schema(body_type: Any) -> dict[str, Any]:
    """The JSON Schema msgspec generates for ``body_type``, with its references inlined (the bodies
    are not recursive)."""
    (schema,), components = msgspec.json.schema_components([body_type], ref_template="{name}")
    inlined: dict[str, Any] = _inline(schema, components)
    return inlined


def _inline(node: Any, components: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:  # a type annotated with Meta: its own keys refine the referenced schema
            rest = {key: value for key, value in node.items() if key != "$ref"}
            return _inline({**components[node["$ref"]], **rest}, components)
        return {key: _inline(value, components) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(item, components) for item in node]
    return node


def to_schema(data: dict[str, Any]) -> Schema:
    """A Litestar ``Schema`` from a JSON Schema; a keyword Litestar's ``Schema`` cannot carry is an
    error (nothing of the contract is dropped silently)."""
    fields: dict[str, Any] = {}
    for key, value in data.items():
        name = _RENAMED.get(key) or _CAMEL.sub("_", key).lower()
        if name not in _SCHEMA_FIELDS:
            raise ValueError(f"JSON Schema keyword {key!r} has no place in an OpenAPI Schema")
        if name == "type":
            value = [OpenAPIType(v) for v in value] if isinstance(value, list) else OpenAPIType(value)
        elif name == "format":
            value = OpenAPIFormat(value)
        elif name in _ONE and isinstance(value, dict):
            value = to_schema(value)
        elif name in _LIST:
            value = [to_schema(item) for item in value]
        elif name in _MAP:
            value = {item: to_schema(schema) for item, schema in value.items()}
        fields[name] = value
    return Schema(**fields)


def with_body(body_type: Any, description: str) -> type[Operation]:
    """An ``operation_class`` that publishes ``body_type``'s schema as the operation's JSON request body."""
    schema = to_schema(body_schema(body_type))  # built once, when the handler is declared

    @dataclass
    class _WithBody(Operation):
        def __post_init__(self) -> None:
            self.request_body = RequestBody(
                content={"application/json": OpenAPIMediaType(schema=schema)},
                description=description,
                required=True,
            )

    return _WithBody
