"""The OpenAPI schema (``/schema/openapi.json``) publishes each JSON endpoint's request body as the
msgspec type its parser decodes with, and the rules the parser checks on the typed values."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from gateway.checkonly.inputs import SOURCE_ID, PublishedCheckBody
from gateway.errors import RequestError
from gateway.settings import Settings
from gateway.tool_calls import TOOL_NAME
from gateway.web.app import create_app
from gateway.web.chat_schema import TEMPERATURE_RANGE, PublishedChatBody, parse_chat_request
from gateway.web.openapi_bodies import body_schema, to_schema
from gateway.web.responses_schema import ResponsesBody
from gateway.web.retrieve_api import RetrieveBody
from gateway.web.tool_schema import MAX_TOOLS

BODIES = {
    "/v1/chat/completions": PublishedChatBody,
    "/v1/responses": ResponsesBody,
    "/v1/verify": PublishedCheckBody,
    "/v1/retrieve": RetrieveBody,
}


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The served OpenAPI document (the schema route is public and needs no services)."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("data"), upstream_base_url="http://127.0.0.1:9/v1")
    client = TestClient(create_app(settings))  # not entered: no lifespan, no services built
    response = client.get("/schema/openapi.json")
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    return document


def request_body(document: dict[str, Any], path: str) -> dict[str, Any]:
    body: dict[str, Any] = document["paths"][path]["post"]["requestBody"]
    assert body["required"] is True
    schema: dict[str, Any] = body["content"]["application/json"]["schema"]
    return schema


@pytest.mark.parametrize("path", sorted(BODIES))
def test_each_body_is_published_as_the_type_its_parser_decodes(published: dict[str, Any], path: str) -> None:
    """Nothing restates a body: the published schema is msgspec's for the parser's type, whole."""
    assert request_body(published, path) == without_null_defaults(body_schema(BODIES[path]))


def without_null_defaults(node: Any) -> Any:
    """``node`` as the OpenAPI document renders it: Litestar's ``Schema`` leaves out a ``None`` field,
    so a ``"default": null`` is not rendered (an optional field's default is null anyway)."""
    if isinstance(node, dict):
        return {k: without_null_defaults(v) for k, v in node.items() if not (k == "default" and v is None)}
    if isinstance(node, list):
        return [without_null_defaults(item) for item in node]
    return node


def test_the_chat_body_publishes_the_rules_its_parser_checks(published: dict[str, Any]) -> None:
    chat = request_body(published, "/v1/chat/completions")
    assert set(chat["required"]) == {"model", "messages"}
    fields = chat["properties"]
    low, high = TEMPERATURE_RANGE
    assert {"type": "number", "minimum": low, "maximum": high} in fields["temperature"]["anyOf"]
    assert fields["n"]["enum"] == [1]
    messages = fields["messages"]["anyOf"][0]
    assert messages["minItems"] == 1
    assert set(messages["items"]["required"]) == {"role", "content"}
    assert set(messages["items"]["properties"]["role"]["anyOf"][0]["enum"]) == {
        "system",
        "developer",
        "user",
        "assistant",
        "tool",
    }
    tools = fields["tools"]["anyOf"][0]
    assert tools["maxItems"] == MAX_TOOLS
    function = tools["items"]["properties"]["function"]
    assert function["anyOf"][0]["properties"]["name"]["anyOf"][0]["pattern"] == f"^{TOOL_NAME.pattern}$"


def test_the_other_bodies_publish_their_rules(published: dict[str, Any]) -> None:
    verify = request_body(published, "/v1/verify")
    assert set(verify["required"]) == {"answer", "sources"}
    source = verify["properties"]["sources"]["anyOf"][0]["items"]
    assert source["required"] == ["id"]
    assert source["properties"]["id"]["anyOf"][0]["pattern"] == SOURCE_ID.pattern
    retrieve = request_body(published, "/v1/retrieve")
    assert retrieve["required"] == ["query"]
    assert retrieve["additionalProperties"] is False  # an unknown field is refused (unknown_field)
    responses = request_body(published, "/v1/responses")
    assert set(responses["required"]) == {"model", "input"}


def test_published_rules_do_not_change_what_the_parser_refuses() -> None:
    """The rules are documentation: the parser's own check still refuses, with its message."""
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 3}
    with pytest.raises(RequestError, match=r"between 0\.0 and 2\.0") as refused:
        parse_chat_request(msgspec.json.encode(body))
    assert refused.value.param == "temperature"
    assert refused.value.code == "invalid_value"


def test_a_keyword_the_openapi_schema_cannot_carry_is_an_error() -> None:
    with pytest.raises(ValueError, match="notAKeyword"):
        to_schema({"type": "object", "notAKeyword": 1})
