"""A context red-flag rule made of two parts ("sweating ... chest pain", "sudden ... weakness") is denied
when the red flag it needs is denied, wherever the denial stands (#31 item 2: negation respected).

Before, only the words before the match's start were read, so "I was sweating at the gym and had no
chest pain" fired the chest-pain rule, and "sudden urge to pee, no numbness" the stroke rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.policies import Policy, load_policy
from tests.support.triage import flagged_rule

POLICIES = Path(__file__).resolve().parents[2] / "policies"
GENERAL = load_policy(POLICIES, "general")
CATARACT = load_policy(POLICIES, "cataract-followup")
CONTEXTS = pytest.mark.parametrize("policy", [GENERAL, CATARACT], ids=["general", "cataract"])


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
def test_a_denied_red_flag_in_the_second_part_does_not_fire(message: str, policy: Policy) -> None:
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
        flagged_rule("no sweating or breathlessness, and the chest pain is only when I press on it", GENERAL)
        != "chest_pain"
    )
