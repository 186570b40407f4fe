"""Signs misread by how a word is used (#31 item 2, eighth pass): a pseudo-negation read with what
follows it, a treatment "not working" against a child "not working hard to breathe", the eye red flag's
own words, numbness by scarring, what one wants to prevent. Each fix both ways; no model is loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.domain import Scope, Triage
from gateway.policies import load_policy
from gateway.triage.evidence import negated
from tests.support.triage import decide_message, reader_of, semantic_read

REPO = Path(__file__).resolve().parents[2]
POLICY = load_policy(REPO / "policies", "general")
TRIAGE = POLICY.triage
READER = reader_of(TRIAGE)


def judge(message: str) -> Triage:
    """Only the rule layers can make an emergency: the semantic layers say nothing."""
    return decide_message(message, POLICY.context, TRIAGE, semantic_read(TRIAGE))


def signs(message: str) -> set[str]:
    """The sign groups found in ``message`` said of now (not negated, history or supposed)."""
    return {h.group for h in READER.read(message).hits if not (h.negated or h.background or h.supposed)}


def escalated(message: str, category: str) -> bool:
    found = READER.signs(READER.read(message), category)
    return found is not None and found.escalated


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
    assert escalated("his eyelid is swollen shut and he has a fever", "sudden_vision_loss")
    assert escalated("her eye is swollen and it hurts to move it", "sudden_vision_loss")


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


def test_what_one_wants_to_prevent_is_no_sign_of_now() -> None:
    text = (
        "My daughter had a febrile convulsion last winter. She is 2 now with a temperature of 38.4 today.\n\n"
        "She's drinking and playing, no rash. Will ibuprofen prevent another seizure?"
    )
    assert not {"seizure", "seizure_long"} & signs(text)
    assert judge(text).scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "she's having another seizure now and it won't stop, what do I do to prevent her choking",
        "his inhaler doesn't prevent the wheezing and now he can't breathe",
    ],
)
def test_a_sign_told_beside_prevent_still_counts(message: str) -> None:
    assert {"seizure", "breathing_trouble"} & signs(message)
    assert judge(message).scope is Scope.EMERGENCY
