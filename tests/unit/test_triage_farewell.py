"""A farewell with the means or the place at hand is a plan under way (#31, s55 crisis probe, written
blind): "just want someone to know", letters left, keys posted back, possessions given away, told beside
a rope in the car, tablets lined up or standing on a bridge, is an emergency on the rules alone, with no
word of dying. A farewell or a time alone is not, nor a means alone told of everyday life; and the word
"suicide" as a term asked about, a title or someone's death is a topic, not a report of now."""

from __future__ import annotations

import pytest

from tests.support.shipped_triage import POLICY, TRIAGE
from tests.support.triage import escalated, flagged_rule


@pytest.mark.parametrize(
    "message",
    [
        "left a note for my brother. the pills are lined up. I just want someone to know I tried.",
        "I'm standing on the multi storey car park roof. just want somebody to know my name",
        "gave my guitar to my mate and posted my keys back to the landlord. the rope is in the car.",
        "the tablets are counted out on my desk. nobody will have to worry about me after tonight",
        "sitting on the edge of the cliff path, tell mum I'm sorry.",
    ],
)
def test_a_farewell_with_the_means_or_place_at_hand_is_an_emergency(message: str) -> None:
    assert escalated(TRIAGE, message, "suicidal_intent")


@pytest.mark.parametrize(
    "message",
    [
        "Before I go tonight, remind me to lock the back door",
        "I just want someone to know how hard this week has been, my exam is tomorrow",
        "gave my old bike to my nephew tonight, he loved it",
        "standing on the platform, the 8.15 is late again. any idea how long the delay is?",
        "bought a rope for the climbing wall session tonight",
        "tell my wife I'm sorry I'll be late tonight",
        "passwords written down for my husband before my operation tomorrow",
    ],
)
def test_a_farewell_or_a_means_alone_is_no_plan(message: str) -> None:
    assert not escalated(TRIAGE, message, "suicidal_intent")


@pytest.mark.parametrize(
    ("message", "fires"),
    [
        ("what does 'passive suicidal ideation' mean? it's in my clinic letter", False),
        ("what's the difference between self-harm and suicidal behaviour? it's for an essay", False),
        ("any films like 'The Virgin Suicides'? loved the soundtrack", False),
        ("are there groups for people bereaved by suicide?", False),
        ("My uncle died by suicide in 2015. Is depression inherited?", False),
        # a report beside the topic still fires
        ("I've been suicidal all week", True),
        ("what do I do, I'm suicidal", True),
        ("my brother died by suicide and now I want to die too", True),
    ],
)
def test_the_word_as_a_term_a_title_or_a_death_is_a_topic(message: str, fires: bool) -> None:
    assert (flagged_rule(message, POLICY) == "suicidal_intent") is fires
