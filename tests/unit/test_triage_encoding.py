"""Which texts triage encodes for one request (#31 item 7, latency), and the cap on their length
(``encode_max_words``). No model is loaded: the plan is built and read, never encoded."""

from __future__ import annotations

import dataclasses

import pytest

from gateway.errors import InvalidValue
from gateway.testing.conversations import conversation
from gateway.triage.decision import decide_by_evidence
from gateway.triage.planning import first_words, plan
from gateway.triage.policy import TriagePolicy, TriageSettings
from tests.support.shipped_triage import GENERAL, TRIAGE
from tests.support.triage import reader_of, readings_of

LONG_POST = (
    "I am 34 and for the past two weeks I have had a dull ache in my lower back that spreads into my "
    "left leg, mostly in the evening after work, and it is worse when I sit at my desk for a long time "
    "or drive home, though it eases a little when I walk or lie flat on the floor with my knees up. "
    "Should I see a physio or is rest enough?"
)


def capped(words: int) -> TriagePolicy:
    return dataclasses.replace(TRIAGE, settings=dataclasses.replace(TRIAGE.settings, encode_max_words=words))


def test_a_one_question_message_is_encoded_once_and_a_several_question_one_also_whole() -> None:
    one = plan(
        conversation("I have had a cough for a week. Can I take honey?"), GENERAL, TRIAGE, reader_of(TRIAGE)
    )
    assert one.texts == [*one.questions]
    assert len(one.questions) == 1
    several = plan(
        conversation("Can I take ibuprofen? Is honey ok for kids?"), GENERAL, TRIAGE, reader_of(TRIAGE)
    )
    assert several.texts == [*several.questions, several.message]
    assert len(several.questions) == 2


def test_earlier_turns_are_encoded_alone_and_with_the_latest_message_first() -> None:
    triage_plan = plan(
        conversation("I'm on sertraline 50mg", "what are other causes?"), GENERAL, TRIAGE, reader_of(TRIAGE)
    )
    assert triage_plan.texts == [
        "what are other causes?",
        "I'm on sertraline 50mg",
        "what are other causes? I'm on sertraline 50mg",
    ]


def test_first_words_keeps_a_short_text_byte_for_byte_and_cuts_a_long_one() -> None:
    assert first_words("  two  words ", 2) == "  two  words "
    assert first_words("one two three four", 2) == "one two"
    assert first_words("one two three", 0) == "one two three"


def test_the_cap_cuts_what_is_encoded_and_never_what_the_rules_read() -> None:
    whole = plan(conversation(LONG_POST), GENERAL, TRIAGE, reader_of(TRIAGE))
    cut = plan(conversation(LONG_POST), GENERAL, capped(24), reader_of(TRIAGE))
    assert whole.texts == [LONG_POST]
    assert cut.questions == whole.questions
    assert cut.message == whole.message
    assert cut.texts == [" ".join(LONG_POST.split()[:24])]
    readings = readings_of(cut, GENERAL, capped(24))
    assert decide_by_evidence(cut, GENERAL, capped(24), readings) is None
    assert readings.texts == {LONG_POST}


def test_short_texts_are_encoded_the_same_with_the_cap() -> None:
    message = conversation("my knee hurts after running", "Can I take ibuprofen? Is honey ok for kids?")
    assert (
        plan(message, GENERAL, capped(24), reader_of(TRIAGE)).texts
        == plan(message, GENERAL, TRIAGE, reader_of(TRIAGE)).texts
    )


@pytest.mark.parametrize("words", [-1, 1, 15, 257])
def test_a_cap_outside_its_range_is_refused(words: int) -> None:
    with pytest.raises(InvalidValue):
        TriageSettings(encode_max_words=words)
