"""Two-part red-flag rules read for denial at each part (#31 item 2: negation respected). A match was read
only before its first word, so "I was sweating at the gym and had no chest pain" fired the chest-pain rule
and "sudden urge to pee, no numbness" the stroke rule (stop 50). Then the audit of every two-part
red-flag rule (``bench/negation_audit.py``):
a rule whose second part is a sign the patient can deny names it ``flag`` (or ``flag_<part>``), so that
"chest pain, no sweating", "some bleeding, not a lot", "a seizure, not his first" and "bleeding, I'm not
pregnant" no longer fire; a sign that holds its own negation ("won't stop", "can't breathe", "not
breathing") is never read as a denial.
"""

from __future__ import annotations

import pytest

from gateway.policies import Policy
from tests.support.shipped_triage import CATARACT, POLICY
from tests.support.triage import flagged_rule

CONTEXTS = pytest.mark.parametrize("policy", [POLICY, CATARACT], ids=["general", "cataract"])


@CONTEXTS
@pytest.mark.parametrize(
    "message",
    [
        "I have chest pain when I press on it, no sweating or breathlessness",
        "chest pain, not short of breath",
        "chest pain but I'm not sweating",
        "I took my tablets this morning, not too many",
        "some bleeding after the smear, not a lot",
        "bleeding, not heavily",
        "he had a seizure, it's not his first",
    ],
)
def test_a_denied_second_part_does_not_fire(message: str, policy: Policy) -> None:
    assert flagged_rule(message, policy) is None


def test_bleeding_when_not_pregnant_is_no_pregnancy_bleeding() -> None:
    assert flagged_rule("light bleeding after sex, I'm not pregnant", POLICY) is None
    assert flagged_rule("bleeding heavily, not pregnant", POLICY) == "heavy_bleeding"


@CONTEXTS
@pytest.mark.parametrize(
    ("message", "rule"),
    [
        ("I have chest pain and I can't breathe", "chest_pain"),
        ("chest tightness and I can't catch my breath", "chest_pain"),
        ("chest pain going down my left arm", "chest_pain"),
        ("chest pain and I'm not breathing properly", "unconscious_or_seizure"),
        ("I took too many of my pills", "overdose"),
        ("I took paracetamol and I don't know how many, maybe too many", "overdose"),
        ("I swallowed all my pills", "overdose"),
        ("I'm bleeding a lot from the cut", "heavy_bleeding"),
        ("bleeding and it won't stop", "heavy_bleeding"),
        ("the bleeding hasn't slowed and won't stop", "heavy_bleeding"),
        ("the cut on my leg won't stop bleeding", "heavy_bleeding"),
        ("he had a fit and it won't stop", "unconscious_or_seizure"),
        ("my son had a seizure, I don't know if it's his first", "unconscious_or_seizure"),
        ("she had a seizure and is still not waking up", "unconscious_or_seizure"),
        ("my dad collapsed and is not responding", "unconscious_or_seizure"),
        ("my baby is not breathing", "unconscious_or_seizure"),
    ],
)
def test_the_emergency_still_fires(message: str, rule: str, policy: Policy) -> None:
    assert flagged_rule(message, policy) == rule


@pytest.mark.parametrize(
    "message",
    [
        "bleeding and I'm 12 weeks pregnant",
        "bleeding, I think I might be pregnant",
        "bleeding and I don't know if I'm pregnant",
        "I'm 30 weeks pregnant and bleeding",
    ],
)
def test_bleeding_in_pregnancy_still_fires(message: str) -> None:
    assert flagged_rule(message, POLICY) == "pregnancy_bleeding"


@pytest.mark.parametrize("message", ["my eye pain is not severe", "eye ache, not getting worse"])
def test_eye_pain_denied_severe_does_not_fire(message: str) -> None:
    assert flagged_rule(message, CATARACT) is None


@pytest.mark.parametrize(
    "message",
    [
        "the eye pain is severe",
        "eye pain that isn't easing and is getting worse",
        "my eye ache won't go away and it's unbearable",
        "my eye ache is not going away, getting worse",
    ],
)
def test_severe_eye_pain_still_fires(message: str) -> None:
    assert flagged_rule(message, CATARACT) == "severe_eye_pain"


@CONTEXTS
@pytest.mark.parametrize(
    "message",
    [
        "I was sweating at the gym and had no chest pain, is that fine?",
        "my arm aches from the jab, no chest pain",
        "my breathing is too fast after climbing stairs since covid, no chest pain",
        "I got up suddenly and felt dizzy, no weakness or numbness though",
        "sudden urge to pee, no numbness",
        "suddenly my wrist hurts when I type, no weakness",
        "allergic reaction to a plaster, no swelling or breathing problems, just itchy",
    ],
)
def test_a_denied_red_flag_after_its_companion_does_not_fire(message: str, policy: Policy) -> None:
    assert flagged_rule(message, policy) is None


@CONTEXTS
@pytest.mark.parametrize(
    ("message", "rule"),
    [
        ("I can't breathe and I have chest pain", "chest_pain"),
        ("sweating and chest pain going into my jaw", "chest_pain"),
        ("my arm is numb and I have chest tightness", "chest_pain"),
        ("suddenly I have weakness down one side and can't lift my arm", "stroke_signs"),
        ("sudden numbness in my face and arm", "stroke_signs"),
        ("my face is drooping on one side", "stroke_signs"),
        ("I'm having an allergic reaction and I can't breathe", "anaphylaxis"),
        ("heavy period, bleeding through a pad every hour", "heavy_bleeding"),
    ],
)
def test_the_same_rules_still_fire_when_nothing_is_denied(message: str, rule: str, policy: Policy) -> None:
    assert flagged_rule(message, policy) == rule


def test_a_denied_first_part_still_denies() -> None:
    """The match's start is still read: a denied companion sign denies the combination."""
    assert (
        flagged_rule("no sweating or breathlessness, and the chest pain is only when I press on it", POLICY)
        != "chest_pain"
    )
