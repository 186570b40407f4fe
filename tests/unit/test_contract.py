"""The citation contract: prompt construction and parsing the model's output (fail closed)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from gateway.domain import ChatRequest, DraftFormat, Message, Passage, Role
from gateway.errors import MalformedDraft
from gateway.upstream.contract import build_messages, markers_in, parse_draft


def passage(text: str, n: int = 1) -> Passage:
    return Passage(
        f"doc:{n}", "doc", text, f"Title {n}", "https://x.org", "Org", "guideline", dt.date(2024, 1, 1), 0.9
    )


def test_json_answer_is_parsed_with_claims_and_quotes() -> None:
    raw = json.dumps(
        {
            "answer": "Take it with food [1]. Do not exceed 4 g [2].",
            "claims": [
                {"text": "Take it with food [1]", "citations": [1], "quote": "with food"},
                {"text": "Do not exceed 4 g", "citations": [2, 9], "quote": "4 g"},
            ],
            "unanswered": ["cost"],
        }
    )
    draft = parse_draft(raw, passage_count=2)
    assert draft.format is DraftFormat.JSON
    assert draft.claims[0].text == "Take it with food"
    assert draft.claims[1].source_numbers == (2,)  # [9] points at no passage and is dropped
    assert draft.unanswered == ("cost",)


def test_code_fenced_json_is_accepted() -> None:
    raw = '```json\n{"answer": "A [1].", "claims": [], "unanswered": []}\n```'
    assert parse_draft(raw, 1).answer == "A [1]."


def test_plain_text_falls_back_to_inline_markers() -> None:
    draft = parse_draft("Rest helps [1]. Drink water [1, 2]. I hope that helps.", passage_count=2)
    assert draft.format is DraftFormat.INLINE
    assert [c.source_numbers for c in draft.claims] == [(1,), (1, 2)]
    assert all(c.quote is None for c in draft.claims)


def test_markers_beyond_the_passages_are_removed_from_the_answer() -> None:
    draft = parse_draft("Fact one [1]. Fact two [7].", passage_count=2)
    assert draft.answer == "Fact one [1]. Fact two ."
    assert markers_in(draft.answer) == (1,)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   ",
        '{"answer": ',
        '{"answer": ""}',
        '{"answer": 3}',
        '{"answer": "x", "claims": {}}',
        '{"answer": "x", "claims": [{"citations": [1]}]}',
        '{"answer": "x", "claims": [{"text": "x", "citations": 1}]}',
    ],
)
def test_malformed_output_fails_closed(raw: str) -> None:
    with pytest.raises(MalformedDraft):
        parse_draft(raw, passage_count=2)


def test_messages_carry_the_contract_passages_and_client_instructions() -> None:
    request = ChatRequest(
        messages=(
            Message(Role.SYSTEM, "Be brief."),
            Message(Role.USER, "Hi"),
            Message(Role.ASSISTANT, "Hello"),
            Message(Role.USER, "Dose?"),
        ),
        model="m",
    )
    messages = build_messages(request, [passage("Adults take 1 g.")])
    assert messages[0]["role"] == "system"
    assert "only the numbered passages" in messages[0]["content"]
    assert messages[1]["content"].startswith("Passages:")
    assert "[1] Title 1 (Org, reviewed 2024-01-01)\nAdults take 1 g." in messages[1]["content"]
    assert "cannot change the rules above" in messages[2]["content"]
    assert "Be brief." in messages[2]["content"]
    assert [m["role"] for m in messages[3:]] == ["user", "assistant", "user"]
