"""A wish to be dead told in the person's own words is thoughts of suicide (#31): the first item of the
Columbia suicide severity scale ("wished you were dead or wished you could go to sleep and not wake
up"), which crisis-line guidance answers with the crisis lines. Each both ways: a figure of speech
about something else, a misspelt "dye", "rather be dead than ...", a topic question, a wish told as
over and an ordinary wish not to wake up at night do not fire. No model is loaded: only the rule
layers decide."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from tests.support.shipped_triage import CATARACT, POLICY, judge
from tests.support.triage import flagged_rule


@pytest.mark.parametrize(
    "message",
    [
        "I wish I was dead",
        "honestly some days i wish i were dead",
        "sometimes I wish I could just die, my back never stops hurting",
        "I'd rather be dead",
        "I wish I had never been born",
        "I'm so tired of being alive.",
        "why am I even still alive",
        "I keep asking myself why I am still alive.",
        "I hope I never wake up.",
        "i just dont want to wake up anymore and my chest hurts",
        "what's the point of living",
    ],
)
def test_a_wish_to_be_dead_is_thoughts_of_suicide(message: str) -> None:
    assert flagged_rule(message, POLICY) == "suicidal_intent"


@pytest.mark.parametrize(
    "message",
    [
        "I wish I could die my hair purple",
        "I'd rather be dead than go back to that dentist",
        "why do some people wish they were dead?",
        "I'm tired of living with constant pain, what can help?",
        "I'm sick of living here",
        "why am I still here after 3 hours in A&E?",
        "I don't want to wake up again at 3am to pee",
        "I hope I don't wake up with a headache again",
        "my tomatoes are dead",
    ],
)
def test_figures_of_speech_topics_and_ordinary_wishes_do_not_fire(message: str) -> None:
    assert flagged_rule(message, POLICY) is None


@pytest.mark.parametrize(
    "message",
    [
        "i just want to sleep and never wake up",
        "some nights I want to fall asleep forever and not wake up.",
        "honestly there's nothing left to live for",
        "I've got nobody to live for any more",
        "no point to keep on living like this",
        "maybe it's better if I didn't wake up",
        "it would be for the best if I didn't exist anymore",
        "I'm going to set myself on fire",
    ],
)
def test_a_wish_to_be_dead_in_other_words_is_thoughts_of_suicide(message: str) -> None:
    """(#31, s58) Sleep with no waking, nothing left to live for, better that I did not live, a means
    turned on oneself by fire: each at the end of its clause or told of oneself."""
    assert flagged_rule(message, POLICY) == "suicidal_intent"


@pytest.mark.parametrize(
    "message",
    [
        "how do I sleep and not wake up at 3am every night",
        "my toddler fell asleep and didn't wake up until 9, is that normal",
        "it's better if I don't live near my parents, they fuss",
        "I light myself a candle when I'm anxious",
        "is it better if I don't exercise with a cold?",
    ],
)
def test_sleep_troubles_and_a_place_to_live_do_not_fire(message: str) -> None:
    assert flagged_rule(message, POLICY) is None


def test_every_context_reads_the_same_wishes() -> None:
    assert flagged_rule("I wish I was dead", CATARACT) == "suicidal_intent"
    assert flagged_rule("I wish I could die my hair purple", CATARACT) is None


@pytest.mark.parametrize(
    "message",
    [
        "there is no point living anymore",
        "no point carrying on.",
        "I just don't see the point in going on anymore",
        "honestly there's no reason to live without her",
        "no point in going on like this",
        # with a means at hand (before s59 the means made it an emergency; now the wish alone does)
        "honestly can't see the point in carrying on, the tablets are lined up on my desk",
        "I can't see any point in being alive anymore. I've saved up my mum's pills",
    ],
)
def test_no_point_or_reason_to_live_is_a_wish_to_be_dead(message: str) -> None:
    """(#31, s59) Seeing no point or reason in living or going on is the C-SSRS wish to be dead told as
    hopelessness: one pattern list (``death_wish``) for every context and every group that reads it."""
    assert flagged_rule(message, POLICY) == "suicidal_intent"
    assert flagged_rule(message, CATARACT) == "suicidal_intent"


@pytest.mark.parametrize(
    "message",
    [
        "there's no point going on about it, the GP won't change the dose",
        "no point carrying on with the diet if I'm not losing weight",
        "there's no point in living in London any more, the rent is too high",
        "no reason to live with flatmates once you can afford your own place",
        "I don't see the point of this new diet",
        "no point in going on holiday if my knee is this bad",
    ],
)
def test_no_point_in_a_place_a_diet_or_a_trip_does_not_fire(message: str) -> None:
    assert flagged_rule(message, POLICY) is None


def test_no_point_in_going_on_with_a_promise_of_safety_is_the_safety_note() -> None:
    """A wish to be dead told beside a promise not to act is kept to the safety note, as "I wish I was
    dead" is: the wish is C-SSRS item 1, not intent or a plan (#31, s59; before, this wording alone
    outweighed the promise because it was written among the words of intent)."""
    message = "I don't see the point in going on but I'm not going to hurt myself, I promise"
    assert judge(message).scope is not Scope.EMERGENCY
    assert judge("I don't see the point in going on, I've got the pills ready").scope is Scope.EMERGENCY
