"""A sign told as a part of the body and its state reads in either order (#31 items 2 and 4): "my speech
is slurred" as "slurred speech", "one side of her face has dropped", a side and its weakness across a
dash; speech cut short by breathlessness is a breathing sign; a weekly-only drug taken daily with signs of
toxicity; a denied numbness is no despair. Each both ways. No model is loaded: only the rule layers
decide."""

from __future__ import annotations

import pytest

from gateway.errors import InvalidValue
from gateway.triage.evidence_policy import SignPair
from gateway.triage.prefilter import needs
from tests.support.shipped_triage import POLICY
from tests.support.triage import flagged_rule, sign_groups


def flagged(message: str) -> str | None:
    return flagged_rule(message, POLICY)


@pytest.mark.parametrize(
    "message",
    [
        "her speech is all slurred and her arm is weak",
        "his words have gone jumbled and his hand is floppy",
        "the right side of my face has drooped in the last ten minutes",
        "my mum's mouth, the left side of it, has dropped",
        "my right leg - it's gone heavy and useless",
        "Grandma's face is lopsided since she sat down",
    ],
)
def test_a_stroke_sign_told_in_predicate_order_fires(message: str) -> None:
    assert flagged(message) == "stroke_signs"


@pytest.mark.parametrize(
    "message",
    [
        "her speech isn't slurred and her arm isn't weak, she just has a cold",
        "the arm of the sofa is weak, can you suggest a repair",
        "my hand is weak after lifting weights at the gym, it aches",
        "my dad's face dropped when he heard the score, make a meme of it",
    ],
)
def test_look_alikes_of_a_stroke_sign_do_not_fire(message: str) -> None:
    assert flagged(message) is None


@pytest.mark.parametrize(
    "message",
    [
        "my chest has been bad all winter and tonight I can't finish a sentence",
        "he is too breathless to speak and sitting bolt upright",
        "she can only manage two words at a time",
        "I cannot complete a sentence without stopping for breath",
        "my breathing is so bad I can't talk",
    ],
)
def test_speech_cut_short_by_breathlessness_is_a_breathing_emergency(message: str) -> None:
    assert flagged(message) in {"breathing", "asthma_attack"}


@pytest.mark.parametrize(
    "message",
    [
        "my husband can't finish a sentence without the dog barking, any training tips?",
        "I'm too breathless to talk after a sprint, then fine in a minute, normal?",
        "I can't get through a sentence without stammering in meetings",
    ],
)
def test_a_sentence_cut_short_by_something_else_is_no_breathing_sign(message: str) -> None:
    assert "breathless_speech" not in sign_groups(message, POLICY.triage)


@pytest.mark.parametrize(
    "message",
    [
        "by mistake I've taken methotrexate every day this week instead of on Sundays and now I've got "
        "a temperature",
        "my father has been given methotrexate each morning for 6 days and has sores in his mouth",
    ],
)
def test_a_weekly_only_drug_taken_daily_with_toxicity_fires(message: str) -> None:
    assert flagged(message) == "sepsis"


@pytest.mark.parametrize(
    "message",
    [
        "I take methotrexate on Fridays, can I take my folic acid daily?",
        "methotrexate is taken weekly, not daily, for arthritis: why?",
        "I have mouth ulcers and I take methotrexate once a week",
    ],
)
def test_a_weekly_only_drug_taken_weekly_does_not_fire(message: str) -> None:
    assert flagged(message) is None


def test_a_denied_numbness_is_no_despair_but_feeling_numb_is() -> None:
    assert "despair_negatable" not in sign_groups("no numbness in my feet after the fall", POLICY.triage)
    assert "despair_negatable" in sign_groups("I just feel numb all the time", POLICY.triage)


def test_a_pair_reads_both_orders_and_keeps_the_prefilter() -> None:
    pair = SignPair(parts=("speech", "words"), states=("slurr\\w*",))
    for pattern in pair.patterns:
        assert {frozenset({"speech", "words"}), frozenset({"slurr"})} <= set(needs(pattern))
    with pytest.raises(InvalidValue):
        SignPair(parts=(), states=("weak",))
