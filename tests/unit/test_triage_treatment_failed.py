"""A condition not responding to a treatment is a treatment that failed, not a person who cannot be roused
(#31, s59): "eczema not responding to hydrocortisone", "not responding to NSAIDs" were read as
unresponsiveness and given the emergency message. Someone not responding to voice, to pain or to the
people with them still is an emergency, also beside a treatment that failed. No model is loaded: only the
rule layers decide."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from tests.support.shipped_triage import TRIAGE, judge
from tests.support.triage import sign_groups

UNROUSABLE = {"unresponsive", "altered_consciousness", "child_red"}


@pytest.mark.parametrize(
    "message",
    [
        "In this patient who is not responding to nonsteroidal anti-inflammatory drugs for superficial "
        "thrombophlebitis, what is round two?",
        "my 15 month old's eczema is not responding to hydrocortisone cream, what next?",
        "my UTI isn't responding to nitrofurantoin, what now?",
        "mum's blood pressure is not responding to ramipril, should she go up a dose?",
        "his acne hasn't responded well to the antibiotics",
    ],
)
def test_a_condition_not_responding_to_a_treatment_is_no_sign(message: str) -> None:
    assert not sign_groups(message, TRIAGE) & UNROUSABLE
    assert judge(message).scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "my baby is floppy and not responding to me",
        "he's not responding to his name or to pain",
        "grandad collapsed and isn't responding",
        "she won't respond when I shake her",
        "my toddler's chest infection isn't responding to amoxicillin and now he is floppy and not "
        "responding to us",
    ],
)
def test_not_responding_to_voice_pain_or_people_is_an_emergency(message: str) -> None:
    assert judge(message).scope is Scope.EMERGENCY
