"""docs/verify-api.md shows what ``/v1/verify`` and ``trust-gateway verify`` return: its response example
has exactly the fields ``report_json`` writes, and its tables name each of them in a table with a header
(a field table cut off by a blank line renders as plain text) (#35 item 1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gateway.checkonly.rendering import conflict_json, report_json
from gateway.checkonly.report import CheckedStatement, CheckReport
from gateway.domain import Conflict, ConflictKind, Span, StatementKind

DOC = Path(__file__).resolve().parents[2] / "docs" / "verify-api.md"
STATEMENT = CheckedStatement("Take 8 g a day.", Span(0, 15), StatementKind.CLAIM, ("1",))
REPORT = CheckReport((STATEMENT,), (), (0,), "cascade[local]")
CONFLICT = Conflict(ConflictKind.NUMBER, "claim says '8 g', evidence says '4 g'", "8 g", "4 g")


def doc() -> str:
    return DOC.read_text(encoding="utf-8")


def response_example() -> dict[str, object]:
    section = doc().split("## Response (200)", 1)[1]
    block = re.search(r"```json\n(.*?)\n```", section, re.DOTALL)
    assert block is not None
    return json.loads(block.group(1))  # type: ignore[no-any-return]


def test_the_response_example_has_exactly_the_fields_the_report_writes() -> None:
    body = report_json(REPORT)
    example = response_example()
    assert set(example) == set(body)
    claims = example["claims"]
    assert isinstance(claims, list)
    assert set(claims[0]) == set(body["claims"][0])


def test_every_field_is_named_in_a_table_with_a_header() -> None:
    text = doc()
    body = report_json(REPORT)
    for field in [*body, *body["claims"][0]]:
        assert f"| `{field}" in text, field  # a row of its own (`url_validity` by its parts)
    for part in conflict_json(CONFLICT):
        assert f"`{part}` (" in text, part  # named in the `contradiction` row
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("| `"):  # a table row: the line before it is a row or the header's rule
            assert lines[number - 1].startswith("|"), f"docs/verify-api.md line {number + 1} starts no table"
