"""Unbound raises (#31 item 2, eighth pass): a red flag the semantic layers raise without its own signs
is moved to a red flag whose signs the text holds, stands on acuity said of now, or gives the safety
note. Each rule both ways; no model is loaded: the semantic read is given (``confident_read``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gateway.domain import Scope, Triage, TriageLayer
from gateway.errors import ConfigurationError, InvalidValue
from gateway.policies import load_policy
from gateway.triage.evidence_policy import UnboundPolicy
from gateway.triage.policy import TriagePolicy
from tests.support.triage import confident_read, decide_message, flagged_rule, sign_groups, with_unbound_rule

REPO = Path(__file__).resolve().parents[2]
POLICY = load_policy(REPO / "policies", "general")
GENERAL = POLICY.context
TRIAGE = POLICY.triage


RULE_ON = with_unbound_rule(TRIAGE)
"""The shipped policy with ``unbound`` turned on (it ships off: docs/safety.md, eighth pass)."""


def judge(message: str, near: str, policy: TriagePolicy = RULE_ON) -> Triage:
    return decide_message(message, GENERAL, policy, confident_read(policy, near))


def with_unbound(*, enabled: bool = True, rehome: bool = True) -> TriagePolicy:
    return with_unbound_rule(TRIAGE, enabled=enabled, rehome=rehome)


def test_the_rule_ships_off() -> None:
    # a site turns it on knowingly: on, it lost two emergencies for eleven fewer false alarms
    message = "I've been on bisoprolol for palpitations for a year, how do I come down off it?"
    assert not TRIAGE.evidence.unbound.enabled
    assert judge(message, "overdose", TRIAGE).scope is Scope.EMERGENCY
    assert judge(message, "overdose").scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    ("message", "near"),
    [
        ("I've been on bisoprolol for palpitations for a year, how do I come down off it?", "overdose"),
        ("my stomach aches after meals and I bruise easily on my shins", "heavy_bleeding"),
        ("my mum has dementia and her knee aches in the cold", "sepsis"),
        ("my knee has ached for two years when I run", "blood_clot"),
    ],
)
def test_a_red_flag_raised_without_any_signs_or_acuity_gets_its_safety_note(message: str, near: str) -> None:
    result = judge(message, near)
    assert result.scope is not Scope.EMERGENCY
    assert judge(message, near, with_unbound(enabled=False)).scope is Scope.EMERGENCY


@pytest.mark.parametrize(
    ("message", "near"),
    [
        ("I feel awful and it's getting worse by the hour", "sepsis"),
        ("my husband has a bad cough and feels awful, it's getting worse", "sepsis"),
    ],
)
def test_acuity_said_of_now_keeps_an_unbound_raise(message: str, near: str) -> None:
    result = judge(message, near)
    assert result.scope is Scope.EMERGENCY
    assert result.rule == near
    assert result.layer in (TriageLayer.EXEMPLAR, TriageLayer.CLASSIFIER)


def test_acuity_denied_does_not_keep_it() -> None:
    message = "my knee has ached for two years when I run, it is not getting worse"
    assert judge(message, "blood_clot").scope is not Scope.EMERGENCY


def test_a_raise_moves_to_the_red_flag_whose_signs_the_text_holds() -> None:
    result = judge("I've had a crushing pain in my chest for an hour, what dose of aspirin?", "overdose")
    assert result.scope is Scope.EMERGENCY
    assert result.rule == "chest_pain"
    assert result.evidence  # the chest pain's own words are shown
    kept = judge(
        "I've had a crushing pain in my chest for an hour, what dose of aspirin?",
        "overdose",
        with_unbound(enabled=False),
    )
    assert kept.rule == "overdose"
    moved = judge("my dad's tummy ache came on suddenly and he looks terrible", "sepsis")
    assert moved.rule == "acute_abdomen"


def test_despair_moves_a_physical_raise_to_thoughts_of_suicide() -> None:
    result = judge("I've been feeling hopeless and empty for weeks", "chest_pain")
    assert result.scope is Scope.EMERGENCY
    assert result.rule == "suicidal_intent"


def test_thoughts_of_suicide_raised_without_words_are_exempt() -> None:
    result = judge("I don't see the point anymore", "suicidal_intent")
    assert result.scope is Scope.EMERGENCY
    assert result.rule == "suicidal_intent"


def test_the_policy_refuses_unknown_groups_and_red_flags() -> None:
    with pytest.raises((InvalidValue, ConfigurationError)):
        dataclasses.replace(TRIAGE.evidence, unbound=UnboundPolicy(enabled=True, stands_on=("nonesuch",)))
    with pytest.raises((InvalidValue, ConfigurationError)):
        dataclasses.replace(TRIAGE.evidence, unbound=UnboundPolicy(enabled=True, exempt=("nonesuch",)))


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("what are the warning signs that a teenager might be suicidal?", None),
        ("how can you tell if someone is suicidal?", None),
        ("what are the signs that a student may be feeling suicidal", None),
        ("I think I might be suicidal", "suicidal_intent"),
        ("how do I know if my son is suicidal", "suicidal_intent"),
        ("how can I tell if a friend is suicidal? she posted goodbye messages tonight", "suicidal_intent"),
    ],
)
def test_a_question_how_to_tell_whether_someone_is_suicidal_is_a_topic(
    message: str, expected: str | None
) -> None:
    assert flagged_rule(message, POLICY) == expected


def test_not_responding_beside_hearing_loss_is_no_unresponsive_sign() -> None:
    hearing = "my mum has hearing loss - she not respond when I call her, should she see audiology?"
    assert "unresponsive" not in sign_groups(hearing, TRIAGE, of_now=True)
    assert "unresponsive" in sign_groups(
        "she collapsed and is not responding when I call her", TRIAGE, of_now=True
    )


def test_a_cup_of_tea_pulled_over_a_child_is_a_burn() -> None:
    assert "burn" in sign_groups("my toddler pulled a cup of tea over himself, his chest is red", TRIAGE)
    assert "burn" not in sign_groups(
        "my toddler pulled a cup of tea off the table, none of it touched him", TRIAGE
    )
