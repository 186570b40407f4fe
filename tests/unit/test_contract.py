"""The citation contract: the prompt, and reading the model's JSON Lines as it streams (fail closed)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from gateway.domain import ChatRequest, DraftFormat, Message, Passage, Role, Urgency, UrgencyRead
from gateway.drafting.contract import (
    SYSTEM_PROMPT,
    ContractReader,
    DraftSentence,
    build_messages,
    parse_draft,
)
from gateway.errors import DraftLimitExceeded, MalformedDraft
from gateway.testing import contract_reply, passages_sent
from gateway.text import marker_numbers

MAX_LINE = 400


def passage(text: str, n: int = 1) -> Passage:
    return Passage(
        f"doc:{n}", "doc", text, f"Title {n}", "https://x.org", "Org", "guideline", dt.date(2024, 1, 1), 0.9
    )


def line(*values: object, **fields: object) -> str:
    return json.dumps(fields or list(values)) + "\n"


URGENCY = line(urgency="routine", why="usual dosing")
FOOD = line("Take it with food.", [1])
LIMIT = line("Do not exceed 4 g [2].", [9], "4 g a day")


def test_each_line_is_a_part_as_soon_as_it_ends() -> None:
    reader = ContractReader(passage_count=2, max_line_chars=MAX_LINE)
    reply = URGENCY + FOOD + LIMIT
    cut = len(URGENCY) + len(FOOD) - 5  # inside the second line
    assert reader.feed(reply[:cut]) == [UrgencyRead(Urgency.ROUTINE, "usual dosing")]
    assert reader.feed(reply[cut:]) == [
        DraftSentence("Take it with food.", (1,)),
        # [9] names no passage and is dropped; the inline [2] counts and leaves the text
        DraftSentence("Do not exceed 4 g.", (2,), "4 g a day"),
    ]
    assert reader.close() == []


def test_the_last_line_needs_no_newline_and_the_draft_carries_markers() -> None:
    draft = parse_draft((URGENCY + FOOD + LIMIT).rstrip("\n"), passage_count=2, max_line_chars=MAX_LINE)
    assert draft.format is DraftFormat.JSON_LINES
    assert draft.answer == "Take it with food [1]. Do not exceed 4 g [2]."
    assert [(c.text, c.source_numbers, c.quote) for c in draft.claims] == [
        ("Take it with food.", (1,), "Take it with food."),  # no anchor: the sentence anchors itself
        ("Do not exceed 4 g.", (2,), "4 g a day"),
    ]
    assert draft.urgency == UrgencyRead(Urgency.ROUTINE, "usual dosing")


def test_a_sentence_citing_nothing_lists_no_claim() -> None:
    draft = parse_draft(URGENCY + line("The passages do not say.") + FOOD, 2, MAX_LINE)
    assert draft.answer == "The passages do not say. Take it with food [1]."
    assert len(draft.claims) == 1


def test_code_fences_and_blank_lines_are_skipped() -> None:
    draft = parse_draft("```jsonl\n" + URGENCY + "\n" + FOOD + "```\n", 2, MAX_LINE)
    assert draft.answer == "Take it with food [1]."


@pytest.mark.parametrize(
    ("first", "expected"),
    [
        (
            line(urgency="emergency", why="crushing chest pain"),
            UrgencyRead(Urgency.EMERGENCY, "crushing chest pain"),
        ),
        (line(urgency="Urgent", why="fever for a week"), UrgencyRead(Urgency.URGENT, "fever for a week")),
        (line(urgency="panic", why="x"), UrgencyRead(None, "x", "malformed: 'urgency' is 'panic'")),
        (line(urgency=3), UrgencyRead(None, "", "malformed: 'urgency' is 3")),
        ("", UrgencyRead(None, "", "missing")),
    ],
    ids=["emergency", "urgent", "unknown-level", "not-a-string", "missing"],
)
def test_the_urgency_read_is_read_and_never_fatal(first: str, expected: UrgencyRead) -> None:
    draft = parse_draft(first + FOOD, 2, MAX_LINE)
    assert draft.urgency == expected
    assert draft.answer == "Take it with food [1]."


def test_a_late_urgency_line_is_kept_and_marked() -> None:
    reader = ContractReader(2, MAX_LINE)
    parts = reader.feed(FOOD + line(urgency="emergency", why="late"))
    assert parts[0] == UrgencyRead(None, problem="missing")
    assert parts[-1] == UrgencyRead(Urgency.EMERGENCY, "late", "late: not the first line")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "empty"),
        (URGENCY, "no sentence"),
        ("Rest helps [1]. Drink water [1, 2].", "plain text"),
        (URGENCY + "Rest helps [1].\n", "plain text"),
        (json.dumps({"answer": "A [1].", "claims": [], "unanswered": []}), "retired single-object"),
        (URGENCY + '["Take it with food.", [1]', "cut off"),
        (URGENCY + '["Take it", [1}\n' + FOOD, "not valid JSON"),
        (URGENCY + line(3, [1]), "Expected `str"),
        (URGENCY + line("", [1]), "empty sentence"),
        (URGENCY + line(text="x"), "without 'urgency'"),
        (URGENCY + line(s="Take it with food.", c=[1]), "without 'urgency'"),
    ],
)
def test_anything_but_the_contract_fails_closed(raw: str, message: str) -> None:
    with pytest.raises(MalformedDraft, match=message):
        parse_draft(raw, passage_count=2, max_line_chars=MAX_LINE)


def test_a_line_over_the_bound_fails_before_it_ends() -> None:
    reader = ContractReader(2, max_line_chars=50)
    reader.feed(URGENCY)
    with pytest.raises(DraftLimitExceeded) as caught:
        reader.feed('["' + "very " * 20)  # no newline yet: refused while still arriving
    assert caught.value.limit == "line_chars"


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
    assert messages[0]["content"] == SYSTEM_PROMPT
    assert "only the numbered passages" in messages[0]["content"]
    assert messages[1]["content"].startswith("Passages:")
    assert "[1] Title 1 (Org, reviewed 2024-01-01)\nAdults take 1 g." in messages[1]["content"]
    assert "cannot change the rules above" in messages[2]["content"]
    assert "Be brief." in messages[2]["content"]
    assert [m["role"] for m in messages[3:]] == ["user", "assistant", "user"]


def test_the_prompt_example_is_itself_the_contract() -> None:
    example = SYSTEM_PROMPT.split("Example:\n", 1)[1]
    draft = parse_draft(example, passage_count=2, max_line_chars=MAX_LINE)
    assert draft.urgency is not None
    assert draft.urgency.level is Urgency.ROUTINE
    assert marker_numbers(draft.answer) == (2,)


def test_helpers_read_the_passages_sent_and_write_the_reply_a_model_would() -> None:
    request = ChatRequest(messages=(Message(Role.USER, "Dose?"),), model="m")
    body = {
        "messages": build_messages(request, [passage("Adults take 1 g.", 1), passage("Rest.\n\nSleep.", 2)])
    }
    assert passages_sent(body) == ["Adults take 1 g.", "Rest.\n\nSleep."]
    quote = "Adults take 1 g of it with a full glass of water, twice a day"
    reply = contract_reply(
        body, [("Adults may take one gram.", 1, quote), ("Ask your pharmacist.", None, None)]
    )
    lines = [json.loads(x) for x in reply.splitlines()]
    assert lines[0]["urgency"] == "routine"
    assert lines[1] == ["Adults may take one gram.", [1], "Adults take 1 g of it with a"]
    assert lines[2] == ["Ask your pharmacist."]
    assert contract_reply(body, [("Adults take 1 g.", 1, "Adults take 1 g.")]).splitlines()[1] == (
        '["Adults take 1 g.",[1]]'  # the sentence repeats its quote: no anchor
    )
    with pytest.raises(AssertionError, match="passage 3"):
        contract_reply(body, [("x", 3, "y")])
