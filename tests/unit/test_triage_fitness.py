"""A fit is a seizure; being fit, keeping fit and a thing that fits are not (#31 item 2, s59). "fit" was
read by its stem, so "my 3 year old is usually fit and well but has had a fever" was a seizure with a
child's fever, an emergency on its own. Each both ways. No model is loaded: only the rule layers decide."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from tests.support.shipped_triage import TRIAGE, judge
from tests.support.triage import sign_groups


@pytest.mark.parametrize(
    "message",
    [
        "my 3 year old is usually fit and well but has had a fever since yesterday, what can I give him?",
        "my son is fit and healthy, he has a temperature of 38 and a runny nose",
        "72M, previously fit and well, presents with fever and cough",
        "I keep fit by swimming but my knee hurts",
        "these new shoes don't fit and my toddler's feet hurt",
        "the cast fits tightly on my son's arm, is that ok?",
        "is my dad fit to fly after his knee operation?",
    ],
)
def test_fitness_and_a_thing_that_fits_are_no_seizure(message: str) -> None:
    assert "seizure" not in sign_groups(message, TRIAGE)
    assert judge(message).scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "she had a fit last night with a high temperature, she's 2",
        "my son is fitting in his sleep",
        "he's had 3 fits today",
        "He was fit and well until yesterday when he had a fit",
    ],
)
def test_a_fit_is_a_seizure(message: str) -> None:
    assert "seizure" in sign_groups(message, TRIAGE)


def test_a_first_fit_or_a_fit_with_a_childs_fever_is_an_emergency() -> None:
    assert judge("my 18 month old has a temperature of 39 and just had a fit").scope is Scope.EMERGENCY
    assert judge("first fit at age 40, what happens now?").scope is Scope.EMERGENCY
