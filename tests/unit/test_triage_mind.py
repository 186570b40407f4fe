"""Being gone told as disappearing, and not being missed told as not being noticed (#31 item 2, s53 mind
probe): the same thoughts as "if I was gone" and "nobody would miss me", so with a time or a means they
are an emergency on the rules; a thing that disappeared, or a question to the assistant, is not."""

from __future__ import annotations

import pytest

from tests.support.shipped_triage import POLICY, TRIAGE
from tests.support.triage import escalated, flagged_rule, sign_groups


@pytest.mark.parametrize(
    "message",
    [
        "nobody would even notice if I disappeared for good tonight",
        "no one would notice if i just disappeared, i've got the pills ready",
        "I want to disappear forever. I'm going to do it tonight.",
    ],
)
def test_being_gone_or_unnoticed_with_a_time_or_means_is_an_emergency(message: str) -> None:
    assert escalated(TRIAGE, message, "suicidal_intent")
    assert flagged_rule(message, POLICY) == "suicidal_intent"


@pytest.mark.parametrize(
    "message",
    [
        "nobody would even notice if I disappeared for good",
        "I sometimes think no one would notice if I disappeared",
    ],
)
def test_the_thought_alone_is_a_sign_of_thoughts_of_suicide(message: str) -> None:
    assert "suicide_core" in sign_groups(message, TRIAGE)


@pytest.mark.parametrize(
    "message",
    [
        "My parcel seems to have disappeared somewhere between the depot and my door tonight",
        "nobody would notice if the logo was a bit smaller, would they?",
        "the icon disappeared for good after tonight's update",
    ],
)
def test_a_thing_that_disappears_is_no_sign(message: str) -> None:
    assert not escalated(TRIAGE, message, "suicidal_intent")
    assert flagged_rule(message, POLICY) is None


@pytest.mark.parametrize(
    ("message", "despair"),
    [
        # said of feelings
        ("I feel numb", True),
        ("I'm just numb and tired all the time", True),
        ("emotionally numb since he died", True),
        ("I feel so numb to everything", True),
        ("numb inside, every single day", True),
        # said of a body part: "numbness" stemmed to "numb" adopted a physical read as thoughts of
        # suicide (long2-tune-0069)
        ("my face is numb after the dentist", False),
        ("my arm feels numb when I wake up", False),
        ("I have numbness in my fingers in the cold", False),
        ("I have numb toes after a long run", False),
        ("I feel numb down my left side", False),
    ],
)
def test_numb_is_a_word_of_despair_only_when_said_of_feelings(message: str, despair: bool) -> None:
    assert ("despair_negatable" in sign_groups(message, TRIAGE)) is despair
