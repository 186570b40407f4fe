"""A plan under way told without the word suicide (#31, s56): each family of means told by its set-up
(what would hold a body's weight, an engine run in a closed garage, a fire lit in a sealed room, going to
the line or the height, a gun taken somewhere, blades by a run bath), with a farewell or a resolve (a
decision told without its object, a time kept from others, a place chosen) is an emergency on the rules
alone; a wish to die with a farewell too. The same set-ups in everyday life, a resolve or a farewell
alone, and a promise not to act are not. Sentences written for the tests, not taken from a probe."""

from __future__ import annotations

import pytest

from tests.support.shipped_triage import POLICY, TRIAGE, judge
from tests.support.triage import escalated, flagged_rule, sign_groups


@pytest.mark.parametrize(
    "message",
    [
        # hanging: a point to hang from, what would hold the weight
        "is a dressing gown cord strong enough to hold my weight? doing it once my flatmates are asleep",
        "going to tie the rope to the banister tonight. I've made my decision.",
        # gassing
        "engine's ticking over in the garage with the doors shut. sorry to whoever finds this",
        "sealed the gaps round the door and the charcoal is ready. I'll light it after I send this.",
        # jumping and rail
        "I'm walking to the viaduct now. I've decided.",
        "heading to the railway line once everyone is asleep, tell my sister it wasn't her fault",
        # firearms
        "the shotgun is loaded on the kitchen table. I know what I have to do now.",
        # cutting
        "razor blades are laid out by the bath. I've written to everyone.",
        # drowning, heights, vehicles, poisons
        "walking into the sea tonight with stones in my pockets. it's been nice knowing you all",
        "I'm on the wrong side of the railings on the top floor. I feel calm now.",
        "going to drive into a tree on the bypass before anyone wakes up. I've decided.",
        "bought antifreeze today. found a new home for my cat. this is my last post.",
    ],
)
def test_a_means_set_up_with_a_farewell_or_a_resolve_is_an_emergency(message: str) -> None:
    assert escalated(TRIAGE, message, "suicidal_intent")


@pytest.mark.parametrize(
    "message",
    [
        "what knot will hold a person's weight for abseiling? first climbing trip tonight",
        "can I hang the hammock from the loft hatch? it's for my son's room",
        "the car was running in the garage to warm up and the fumes set off the alarm, is that dangerous?",
        "we're going to the bridge tonight to watch the fireworks",
        "taking dad's shotgun to the field this evening for the pigeons",
        "my razor blades are on the side of the bath, how often should I change them?",
        "I've decided. I'm going to ask my GP about the menopause clinic.",
        "I'll post the birthday card after I send this email",
        "tell my husband it wasn't his fault the car got scratched",
        "can my dog go into the sea? it's his first trip to the beach",
        "I swerved into a wall on the ice last night, my neck hurts",
        "left the cat with my sister while we're on holiday, she's been sick",
        "cancel my physio, I won't be needing it any more, my knee is better",
        "I feel calm now after the breathing exercises, thank you",
    ],
)
def test_the_same_set_ups_in_everyday_life_are_no_plan(message: str) -> None:
    assert not escalated(TRIAGE, message, "suicidal_intent")


@pytest.mark.parametrize(
    "message",
    [
        "I won't see another birthday. Or any birthday after. I've said everything I needed to say to "
        "everyone.",
        "I want to die. I just wanted someone to know I wasn't a bad person.",
        "I have his oxycodone and I'm going to use it on myself tonight",
    ],
)
def test_intent_told_in_other_words_with_a_farewell_or_a_time_is_an_emergency(message: str) -> None:
    assert escalated(TRIAGE, message, "suicidal_intent")


def test_how_lethal_a_method_is_is_a_question_unless_told_as_the_askers_own() -> None:
    asked = "how many paracetamol does it take to die?"
    own = "how many paracetamol does it take to die? asking for myself"
    assert "suicide_core" not in sign_groups(asked, TRIAGE, of_now=True)
    assert "suicide_core" in sign_groups(own, TRIAGE, of_now=True)


@pytest.mark.parametrize(
    ("message", "fires"),
    [
        ("I feel awful but I'm not going to hurt myself", False),
        ("I will never kill myself, I promised my kids", False),
        ("I'm not going to lie, I want to kill myself", True),
        ("I'm not going to hurt myself. I want to die tonight though", True),
    ],
)
def test_a_promise_not_to_act_is_a_denial_of_the_act(message: str, fires: bool) -> None:
    assert (flagged_rule(message, POLICY) == "suicidal_intent") is fires


@pytest.mark.parametrize(
    ("message", "emergency"),
    [
        # a count taken, timed as done in other words
        ("i took many tablets of paracetamol, about 40, two hours before. my stomach hurts", True),
        ("I take 20 mg one hour before bed, is that right?", False),
        # blood told by what it soaks, a gaping wound
        ("cut my hand on a tin, the tea towel is soaked through and it won't stop", True),
        ("my dressing is soaked with yellow fluid after the op, is that normal?", False),
    ],
)
def test_an_overdose_or_a_bleed_told_without_its_usual_words(message: str, emergency: bool) -> None:
    assert (judge(message).scope.value == "emergency") is emergency


def test_an_age_told_with_now_does_not_bring_a_past_overdose_to_now() -> None:
    triage = judge("I took an overdose when I was 17, I'm 40 now. Do I declare it for travel insurance?")
    assert triage.scope.value != "emergency"


@pytest.mark.parametrize(
    "message",
    [
        "my exhaust pipe is rattling and I've decided. I'm taking it to the garage tomorrow",
        "the car is on the drive by the garage, is it ok to leave it there?",
    ],
)
def test_a_car_s_own_exhaust_or_a_car_parked_by_a_garage_is_no_means(message: str) -> None:
    assert "suicide_means" not in sign_groups(message, TRIAGE)


def test_a_hose_run_to_the_exhaust_is_a_means() -> None:
    assert "suicide_means" in sign_groups("taped a hose to the exhaust and fed it through the window", TRIAGE)


@pytest.mark.parametrize(
    "message",
    [
        # a means with the others' absence awaited
        "the belt will take my weight from the loft hatch, just waiting until my wife is asleep",
        "got a rope in the boot. waiting for the house to be empty",
    ],
)
def test_a_means_awaiting_the_others_absence_is_an_emergency(message: str) -> None:
    """(#31, s58) A means with the others' sleep or absence awaited is a time of acting chosen so no one
    can stop it. (No point in living, with or without a means: test_triage_death_wish.py.)"""
    assert escalated(TRIAGE, message, "suicidal_intent")


@pytest.mark.parametrize(
    "message",
    [
        "waiting for the kids to go to bed so I can finally watch the film",
        "I'm waiting until my husband is out to wrap his birthday present",
    ],
)
def test_waiting_for_the_others_alone_is_no_plan(message: str) -> None:
    assert not escalated(TRIAGE, message, "suicidal_intent")
