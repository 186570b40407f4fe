"""The ``/v1/verify`` (and ``verify`` CLI) and ``/v1/retrieve`` bodies, typed by msgspec: every error names
the field, and the first error reported does not depend on the order of the body's keys."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.body_errors import convert
from gateway.checkonly.inputs import SourceBody, SourceInput, parse_check_input
from gateway.errors import RequestError
from gateway.web.retrieve_api import parse_retrieve_request

TEXT = {"id": "1", "text": "Flu lasts a week."}


def check_error(data: Any) -> tuple[str | None, str | None, str]:
    with pytest.raises(RequestError) as raised:
        parse_check_input(data, max_sources=4)
    return raised.value.param, raised.value.code, raised.value.message


def retrieve_error(data: dict[str, Any]) -> tuple[str | None, str | None]:
    with pytest.raises(RequestError) as raised:
        parse_retrieve_request(json.dumps(data).encode(), max_k=20, max_chars=100)
    return raised.value.param, raised.value.code


def test_a_wrong_type_inside_a_source_names_its_place() -> None:
    data = {"answer": "Flu [1].", "sources": [TEXT, {"id": "2", "url": 5}]}
    assert check_error(data) == ("sources[1].url", "invalid_type", "'sources[1].url' must be a string.")


def test_msgspecs_place_is_joined_to_the_param() -> None:
    def refuse(path: str) -> RequestError:
        return RequestError(path, param=path)

    with pytest.raises(RequestError) as raised:
        convert({"id": "1", "title": ["x"]}, SourceBody, "sources[3]", refuse)
    assert raised.value.param == "sources[3].title"


def reordered(value: Any) -> Any:
    """``value`` with the keys of every object in reverse order."""
    if isinstance(value, dict):
        return {key: reordered(value[key]) for key in reversed(value)}
    if isinstance(value, list):
        return [reordered(item) for item in value]
    return value


@pytest.mark.parametrize(
    ("data", "param"),
    [
        ({"answer": " ", "sources": {}}, "answer"),  # a value error before a later field's type error
        ({"answer": "Flu [1].", "id": True, "sources": None}, "id"),
        ({"answer": "Flu [1].", "sources": [{"id": "1", "text": 5, "url": 5}]}, "sources[0].text"),
        ({"answer": "Flu [1].", "sources": [{"id": "a b", "title": 5}]}, "sources[0].id"),
        ({"answer": "Flu [1].", "sources": [TEXT, {"id": "1", "url": "ftp://x"}]}, "sources[1].url"),
    ],
)
def test_the_first_check_wins_whatever_the_key_order(data: dict[str, Any], param: str) -> None:
    assert check_error(data)[0] == check_error(reordered(data))[0] == param


def test_a_numeric_source_id_is_read_as_its_digits_and_a_boolean_one_is_refused() -> None:
    checked = parse_check_input(
        {"answer": "Flu [7].", "id": 3, "sources": [{"id": 7, "text": "x"}]}, max_sources=4
    )
    assert checked.sources == (SourceInput("7", "x"),)
    assert checked.id == "3"
    assert check_error({"answer": "Flu [1].", "sources": [{"id": True, "text": "x"}]})[:2] == (
        "sources[0].id",
        "invalid_value",
    )


def test_retrieve_refuses_an_unknown_field_before_anything_else() -> None:
    assert retrieve_error({"query": 5, "top_k": 3, "limit": 1}) == ("limit", "unknown_field")


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"k": "5", "query": " "}, "query"),
        ({"tiers": [" "], "k": 0, "query": "dose"}, "k"),
        ({"orgs": "nhs", "tiers": [1], "query": "dose"}, "tiers"),
        ({"k": None, "query": "dose"}, "k"),
    ],
)
def test_retrieve_checks_fields_in_order_whatever_the_key_order(body: dict[str, Any], param: str) -> None:
    assert retrieve_error(body)[0] == retrieve_error(reordered(body))[0] == param


def test_retrieve_reads_stripped_values_and_defaults() -> None:
    parsed = parse_retrieve_request(b'{"orgs": null, "tiers": [" nhs "], "query": " dose "}', 20, 100)
    assert (parsed.query, parsed.k, parsed.filters.tiers, parsed.filters.orgs) == ("dose", 10, ("nhs",), ())
