"""Breathlessness or chest pain *at rest* is an emergency on its own; the noun "rest" is no time of rest
(#31 item 4, s59): "need a rest halfway up the stairs", "it eases with rest", "fine the rest of the time"
tell breathlessness on effort that settles, and were read as "at rest" through the stem of "resting",
giving the emergency message to people asking whether they are unfit. No model is loaded: only the rule
layers decide."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from tests.support.shipped_triage import TRIAGE, judge
from tests.support.triage import sign_groups


@pytest.mark.parametrize(
    "message",
    [
        "I get short of breath walking uphill but after a rest I'm fine",
        "i'm a bit wheezy after a cold, it eases with rest",
        "I get out of breath on the stairs and need a rest halfway",
        "i get breathless running for the bus but i'm fine the rest of the time, how do i get fitter?",
        "my chest feels tight when I walk fast in the cold and goes with rest, should I see my GP?",
    ],
)
def test_a_rest_that_eases_effort_is_not_at_rest(message: str) -> None:
    assert "at_rest" not in sign_groups(message, TRIAGE)
    assert judge(message).scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "I'm breathless even when resting",
        "short of breath at rest",
        "he's breathless while resting on the sofa",
        "crushing chest pain that came on while I was resting",
    ],
)
def test_breathlessness_or_chest_pain_at_rest_is_an_emergency(message: str) -> None:
    assert "at_rest" in sign_groups(message, TRIAGE)
    assert judge(message).scope is Scope.EMERGENCY
