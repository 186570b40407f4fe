"""One reader of tense and time (gateway/triage/tense.py, #31 review): each sentence of a text is read
once as now, history, asked about or supposed, and every rule layer uses that reading."""

from __future__ import annotations

import re

import pytest

from gateway.triage.tense import Matcher, Memo, Time
from tests.support.shipped_triage import TRIAGE
from tests.support.triage import reader_of


def times(text: str) -> list[Time]:
    return [s.time for s in reader_of(TRIAGE).read(text).sentences]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I had a bleed in 2019. My calf is sore today", [Time.HISTORY, Time.NOW]),
        # an episode's run: past-tense sentences of one paragraph told after a frame
        (
            "Back then he went stiff. His eyes rolled back. Now he is fine",
            [Time.HISTORY, Time.HISTORY, Time.NOW],
        ),
        ("what would an overdose of sertraline look like?", [Time.ASKED]),
        # a report elsewhere makes the question about it
        ("I took 40 paracetamol. how long until it hurts your liver?", [Time.NOW, Time.NOW]),
        ("what if I took ten of them", [Time.SUPPOSED]),
        ("my chest hurts right now", [Time.NOW]),
    ],
)
def test_each_sentence_is_read_once_for_when_it_speaks_of(text: str, expected: list[Time]) -> None:
    assert times(text) == expected


def test_a_message_that_says_an_episode_is_over_is_resolved() -> None:
    reader = reader_of(TRIAGE)
    assert reader.tense.resolved("I had thoughts of ending it years ago but I've been well for three years")
    assert not reader.tense.resolved("I have thoughts of ending it")


def test_the_request_memo_reads_a_sentence_once() -> None:
    reader = reader_of(TRIAGE)
    memo: Memo = {}
    reader.read("My chest hurts. Is it serious?", memo)
    clues = dict(memo)
    reader.read("My chest hurts.", memo)
    assert memo.keys() == clues.keys()
    assert all(memo[s] is clues[s] for s in clues)


def test_one_alternation_finds_what_each_pattern_finds() -> None:
    patterns = [r"\bnow\b", r"(?<!to )\bhave\b", r"\b(again|still)\b"]
    matcher = Matcher(patterns)
    for text in ["I have it again", "used to have it", "nothing", "still there", "right now"]:
        assert matcher(text) == any(re.search(p, text, re.IGNORECASE) for p in patterns)
    assert Matcher([r"\bwhen\b", r"(a)\1"])("aa")  # a back-reference: each pattern alone
    assert Matcher([r",", r"\bbut\b"]).first("a but b, c", 0) == 2
