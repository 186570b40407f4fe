"""Everyday words for bodily harm said of a thing, and a waiting room read as despair (#31, ninth
false-alarm pass): a laptop "having a heart attack", choking on paperwork, the heat told as unbearable,
"why am I still here after 3 hours in A&E? nobody has told me anything". Each both ways: the same words
said of a person, a food, a life or a mood still count. No model is loaded: the rule layers, the sign
reader and a scripted semantic read."""

from __future__ import annotations

import dataclasses

import pytest

from gateway.domain import Scope
from gateway.errors import InvalidValue
from gateway.policies import Policy
from tests.support.shipped_triage import CATARACT, POLICY, suicide_read
from tests.support.triage import decide_message, flagged_rule, sign_groups


@pytest.mark.parametrize("policy", [POLICY, CATARACT], ids=["general", "cataract"])
@pytest.mark.parametrize(
    "message",
    [
        "my laptop fan sounds like it's having a heart attack, how do I clean it?",
        "the old boiler is making a noise like it is having a heart attack",
        "my printer keeps having seizures halfway through a page",
        "the washing machine is having a fit on the spin cycle",
    ],
)
def test_a_thing_having_a_heart_attack_is_no_red_flag(message: str, policy: Policy) -> None:
    assert flagged_rule(message, policy) is None
    assert "seizure" not in sign_groups(message, policy.triage)


@pytest.mark.parametrize(
    "message",
    [
        "my dad keeps having seizures and now he won't wake up",
        "she's having a fit and it won't stop",
        "the baby has had a seizure, first one ever",
    ],
)
def test_a_person_having_a_seizure_is_still_a_sign(message: str) -> None:
    assert "seizure" in sign_groups(message, POLICY.triage)


@pytest.mark.parametrize("policy", [POLICY, CATARACT], ids=["general", "cataract"])
@pytest.mark.parametrize(
    "message",
    [
        "I think I'm having a heart attack",
        "my dad might be having a heart attack, what do I do",
        "I think he's having a heart attack right now",
    ],
)
def test_a_person_having_a_heart_attack_still_fires(message: str, policy: Policy) -> None:
    assert flagged_rule(message, policy) == "chest_pain"


@pytest.mark.parametrize(
    "message",
    [
        "I'm choking on all this paperwork, can you draft an email",
        "we are choking on admin this month",
        "honestly choking on so much homework",
    ],
)
def test_choking_on_work_is_no_airway_sign(message: str) -> None:
    assert "choking" not in sign_groups(message, POLICY.triage)


@pytest.mark.parametrize(
    "message",
    [
        "my son is choking on a grape",
        "she's choking on a sweet and can't cough",
        "grandad started choking on his dinner",
    ],
)
def test_choking_on_food_is_still_an_airway_sign(message: str) -> None:
    assert "choking" in sign_groups(message, POLICY.triage)


@pytest.mark.parametrize(
    "message",
    [
        "this heat is unbearable, set the thermostat to 19",
        "the noise from the neighbours is so unbearable",
        "the traffic today was absolutely unbearable",
    ],
)
def test_the_weather_or_a_noise_told_as_unbearable_is_no_low_mood(message: str) -> None:
    assert "low_mood" not in sign_groups(message, POLICY.triage)


@pytest.mark.parametrize(
    "message",
    [
        "my life is unbearable",
        "it's all unbearable and I feel hopeless",
        "the loneliness is unbearable",
        "the heat is unbearable and I feel completely hopeless",
    ],
)
def test_a_life_told_as_unbearable_is_still_low_mood(message: str) -> None:
    assert "low_mood" in sign_groups(message, POLICY.triage)


WAITING = "why am I still here after 3 hours in A&E? nobody has told me anything"


@pytest.mark.parametrize(
    "message",
    [
        WAITING,
        "why am I still here? been in the hospital since 10am waiting for my paperwork",
        "still at the clinic, no one has called my name for an hour",
    ],
)
def test_a_care_setting_or_a_wait_opens_no_gate_to_thoughts_of_suicide(message: str) -> None:
    result = decide_message(message, POLICY.context, POLICY.triage, suicide_read())
    assert result.scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "why am I still here? I feel so alone in A&E",
        "why am I still here, nobody cares, I'm in the hospital again",
        "still here after 3 hours in A&E and I'm so tired of everything",
    ],
)
def test_a_mood_beside_a_care_setting_still_opens_it(message: str) -> None:
    result = decide_message(message, POLICY.context, POLICY.triage, suicide_read())
    assert result.scope is Scope.EMERGENCY
    assert result.rule == "suicidal_intent"


def test_being_told_nothing_is_no_word_of_mood_but_nobody_caring_is() -> None:
    assert "mental_state" not in sign_groups(WAITING, POLICY.triage)
    assert "mental_state" in sign_groups("nobody cares whether I'm here", POLICY.triage)
    assert "mental_state" in sign_groups("no one has told me anything and I feel worthless", POLICY.triage)


def test_a_gate_group_must_be_a_health_gate_group() -> None:
    rules = dict(POLICY.triage.evidence.categories)
    rules["suicidal_intent"] = dataclasses.replace(rules["suicidal_intent"], gate_groups=("despair",))
    with pytest.raises(InvalidValue, match="gate_groups"):
        dataclasses.replace(POLICY.triage.evidence, categories=rules)
