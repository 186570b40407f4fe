"""A fever told in words in a baby under 3 months is an emergency on the rules (#31 item 3, s60).

``vitals.yaml`` reads a measured 38 °C or more under 3 months as NICE NG143 red; "my 6 week old has a
fever" (no reading) was answered as a question, though NG143 takes a parent's report of fever as valid.
``evidence.yaml`` ``young_infant_fever`` reads the age (under 3 months) and a fever word in one sentence,
with nobody else named between them, and escalates ``sick_infant``. Not: an older child, a reading
under 38, no fever, a supposition, the parent's own fever. No model is loaded."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from tests.support.shipped_triage import TRIAGE, judge
from tests.support.triage import sign_groups


@pytest.mark.parametrize(
    "message",
    [
        "my 6 week old has a fever",
        "my 2 month old is boiling hot",
        "my 8 week old baby has a high temperature",
        "my 10 week old feels really hot and is burning up",
        "she's 3 weeks and has a temperature",
        "our newborn has a fever and is sleepy",
        "fever in my 5 week old, what do I do",
        "my 8 week old has a fever after his jabs",
    ],
)
def test_a_fever_under_3_months_is_an_emergency(message: str) -> None:
    assert "young_infant_fever" in sign_groups(message, TRIAGE)
    decision = judge(message)
    assert decision.scope is Scope.EMERGENCY
    assert decision.rule == "sick_infant"


@pytest.mark.parametrize(
    "message",
    [
        "my 4 month old has a fever",
        "my 2 year old has a fever",
        "my 6 week old has a temperature of 37.6",
        "my 6 week old had her jabs yesterday, no fever, just crying",
        "what should I do if my 6 week old gets a fever?",
        "I have a fever, can I still breastfeed my 6 week old?",
        "my 6 week old is fine but I have a fever",
        "can I breastfeed my newborn if I have a fever",
    ],
)
def test_no_fever_of_a_baby_under_3_months_is_no_emergency(message: str) -> None:
    assert judge(message).scope is not Scope.EMERGENCY


def test_a_reading_under_3_months_is_still_read_by_the_vitals() -> None:
    decision = judge("my 10 day old has a temp of 38.2")
    assert decision.scope is Scope.EMERGENCY
    assert decision.rule == "sick_infant"
