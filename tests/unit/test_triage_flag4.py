"""Signs misread by how a word is used (#31 item 2, eighth pass): a pseudo-negation read with what
follows it, a treatment "not working" against a child "not working hard to breathe", the eye red flag's
own words, numbness by scarring. Each fix both ways; no model is loaded."""

from __future__ import annotations

import pytest

from gateway.triage.evidence import negated
from tests.support.shipped_triage import TRIAGE
from tests.support.triage import escalated, sign_groups


def signs(message: str) -> set[str]:
    return sign_groups(message, TRIAGE)


def test_not_working_hard_to_breathe_denies_the_effort_of_breathing() -> None:
    calm = "our 5 month old has a snuffly nose but she's drinking her milk and not working hard to breathe"
    assert "breathing_trouble" not in signs(calm)
    assert "unrelieved" not in signs(calm)


@pytest.mark.parametrize(
    "message",
    [
        "her salbutamol is not working and she is working hard to breathe",
        "my inhaler isnt working cant breathe",
        "the nebuliser isn't working, he's struggling to breathe",
    ],
)
def test_a_treatment_not_working_still_leaves_the_breathing_sign(message: str) -> None:
    found = signs(message)
    assert {"breathing_trouble", "unrelieved"} <= found


def test_a_pseudo_negation_looks_ahead_but_removes_only_what_lies_in_scope() -> None:
    negation = TRIAGE.settings.negation
    text = "he hasn't stopped breathing"
    # "hasn't stopped" runs into the sign: the auxiliary before it still negates
    assert negated(text, text.index("stopped"), negation)
    inhaler = "the inhaler is not working wheezing badly"
    assert not negated(inhaler, inhaler.index("wheezing"), negation)
    effort = "she is not working hard to breathe"
    assert negated(effort, effort.index("hard"), negation)


def test_fever_is_no_eye_red_flag_word_but_still_escalates_a_swollen_eye() -> None:
    assert "eye_red_flag" not in signs("he has had a fever and a high temperature since yesterday")
    assert escalated(TRIAGE, "his eyelid is swollen shut and he has a fever", "sudden_vision_loss")
    assert escalated(TRIAGE, "her eye is swollen and it hurts to move it", "sudden_vision_loss")


@pytest.mark.parametrize(
    "message",
    [
        "the skin on my left arm is numb around the scarring from the graft",
        "the scarring on her right leg has always felt numb",
    ],
)
def test_numbness_by_scarring_is_no_stroke_sign(message: str) -> None:
    assert "one_side_weak" not in signs(message)


def test_one_sided_numbness_without_a_scar_is_still_a_stroke_sign() -> None:
    assert "one_side_weak" in signs("her right arm has suddenly gone numb and she can't lift it")
