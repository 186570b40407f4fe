"""Unbound raises (#31 item 2, eighth pass): a red flag the semantic layers raise without its own signs
is moved to a red flag whose signs the text holds, stands on acuity said of now, or gives the safety
note. Each rule both ways; no model is loaded: the semantic read is given (``confident_read``)."""

from __future__ import annotations

import dataclasses

import pytest

from gateway.domain import Scope, TriageLayer
from gateway.errors import ConfigurationError, InvalidValue
from gateway.messages import Messages, ReplyNotes
from gateway.triage.evidence_policy import UnboundPolicy
from gateway.triage.outcome import named_signs, red_flag_notes
from gateway.triage.policy import TriagePolicy
from tests.support.shipped_triage import GENERAL, POLICY, REPO, TRIAGE
from tests.support.shipped_triage import judge_raise as judge
from tests.support.triage import flagged_rule, sign_groups, with_unbound_rule


def with_unbound(*, enabled: bool = True, rehome: bool = True) -> TriagePolicy:
    return with_unbound_rule(TRIAGE, enabled=enabled, rehome=rehome)


def test_the_rule_ships_on() -> None:
    # on since the fourth pass: eleven fewer false alarms for one held emergency (docs/safety.md)
    message = "I've been on bisoprolol for palpitations for a year, how do I come down off it?"
    assert TRIAGE.evidence.unbound.enabled
    assert judge(message, "overdose", TRIAGE).scope is not Scope.EMERGENCY
    assert judge(message, "overdose", with_unbound(enabled=False)).scope is Scope.EMERGENCY


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


# --- a dropped raise: visible, counted, its note naming the signs (unbound2) -----------------------


def test_a_dropped_raise_names_its_layer_red_flag_and_signs() -> None:
    result = judge("my stomach aches after meals and I bruise easily on my shins", "heavy_bleeding")
    assert result.scope is Scope.IN_SCOPE
    assert result.layer in (TriageLayer.EXEMPLAR, TriageLayer.CLASSIFIER)
    assert "raised without its signs" in result.reason
    assert "heavy_bleeding" in result.reason
    (dropped,) = result.dropped
    assert dropped.rule == "heavy_bleeding"
    assert dropped.signs  # the message's own words for what it tells of now
    assert red_flag_notes(result) == ("heavy_bleeding",)
    assert named_signs(result, "heavy_bleeding") == dropped.signs


def test_an_information_question_is_no_dropped_raise() -> None:
    result = judge("what are the signs of internal bleeding?", "heavy_bleeding")
    assert result.dropped == ()
    assert "raised without its signs" not in result.reason


def test_the_safety_note_of_a_dropped_raise_names_the_signs() -> None:
    messages = Messages(REPO / "templates", GENERAL)
    named = messages.render("red_flag_information", rule="sepsis", signs=("aches", "a rash"))
    assert "aches, a rash" in named
    assert GENERAL.emergency_number in named
    plain = messages.render("red_flag_information", rule="sepsis", signs=())
    assert "aches" not in plain
    assert "these signs" in plain
    result = judge("my stomach aches after meals and I bruise easily on my shins", "heavy_bleeding")
    assert all(sign in ReplyNotes(messages).run(result) for sign in result.dropped[0].signs)


# --- re-homing to an acute abdomen and to thoughts of suicide (unbound2) ---------------------------


@pytest.mark.parametrize(
    "message",
    [
        "my son is curled up in a ball and won't let me touch his tummy, he's been sick twice",
        "the pain in my stomach is really bad and I've got a fever",
        "I can't straighten up, my belly hurts so much",
        "worst tummy pain he has ever had",
        "she keeps holding her tummy, she has a temperature and keeps being sick",
    ],
)
def test_severe_tummy_pain_in_lay_words_moves_a_raise_to_an_acute_abdomen(message: str) -> None:
    assert "abdomen_distress" in sign_groups(message, TRIAGE, of_now=True)
    result = judge(message, "sepsis")
    assert result.scope is Scope.EMERGENCY
    assert result.rule == "acute_abdomen"


@pytest.mark.parametrize(
    "message",
    [
        "my tummy is a bit sore after dinner",
        "my stomach aches after meals, should I try peppermint tea?",
        "that was the worst curry I have ever had and now my stomach is churning",
    ],
)
def test_a_mild_tummy_ache_is_no_acute_abdomen(message: str) -> None:
    assert "abdomen_distress" not in sign_groups(message, TRIAGE)
    assert judge(message, "acute_abdomen").scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    ("message", "near"),
    [
        ("I've started burning myself again, I deserve the pain", "burns"),
        ("I am exhausted and I keep asking myself why I am still alive.", "stroke_signs"),
        ("I'm so tired of being alive", "chest_pain"),
        ("I took the rest of my tablets because I wanted everything to stop", "sepsis"),
    ],
)
def test_wanting_to_die_or_harm_oneself_moves_a_physical_raise_to_thoughts_of_suicide(
    message: str, near: str
) -> None:
    assert sign_groups(message, TRIAGE) & {"suicide_words", "low_mood"}
    result = judge(message, near)
    assert result.scope is Scope.EMERGENCY
    assert result.rule in ("suicidal_intent", "overdose", "poisoning")
    if near != "sepsis":
        assert result.rule == "suicidal_intent"


@pytest.mark.parametrize(
    "message",
    [
        "I burnt my hand on the oven door",
        "why am I still so tired after covid?",
        "what's the point of taking statins if my cholesterol is normal?",
        "I'm tired after my night shifts",
    ],
)
def test_everyday_tiredness_and_accidents_are_no_wish_to_die(message: str) -> None:
    assert not sign_groups(message, TRIAGE) & {"suicide_words", "low_mood"}


def test_despair_told_as_history_still_moves_a_raise_to_thoughts_of_suicide_unless_told_as_over() -> None:
    past = "I used to be really depressed and hopeless. I keep getting headaches."
    assert judge(past, "sepsis").rule == "suicidal_intent"
    over = (
        "I used to be really depressed and hopeless, but I have been well for years now. "
        "I keep getting headaches."
    )
    result = judge(over, "sepsis")
    assert result.scope is Scope.IN_SCOPE
    assert result.dropped[0].signs == ("headaches",)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("I can't get out of bed and nothing makes me happy anymore, my head is pounding", True),
        ("I've lost interest in everything and my chest feels tight", True),
        ("I can't feel anything in my toes since the cast came off", False),
        ("I can't get out of the car without my knee locking", False),
    ],
)
def test_low_mood_in_lay_words_is_despair(message: str, expected: bool) -> None:
    assert ("despair" in sign_groups(message, TRIAGE, of_now=True)) is expected
