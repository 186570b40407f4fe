"""A device or a piece of furniture told in words of a body's state is no one's body (#31 item 1, s60).

A red flag's own signs open the health gate, so a tech-support request read them on a machine: "my
laptop screen went grey and won't respond" was grey skin and unresponsiveness, "my phone has gone blue"
cyanosis, "the engine won't respond" unresponsiveness, "the left leg of the table has gone wobbly and
weak" one-sided weakness: each an emergency on the rules. ``evidence.yaml`` ``figurative`` blanks a
device's state up to the next clause about a person, and the leg or arm of a piece of furniture. No
model is loaded."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from tests.support.shipped_triage import TRIAGE, judge
from tests.support.triage import sign_groups


@pytest.mark.parametrize(
    "message",
    [
        "my laptop screen went grey and won't respond to anything, how do i force it to restart?",
        "my phone has gone blue and won't turn on",
        "my car battery is dead and the engine won't respond",
        "my laptop won't wake from sleep",
        "the screen has gone black and the app is frozen",
        "the left leg of the table has gone wobbly and weak, how do I fix it?",
        "one arm of the chair is loose and floppy",
    ],
)
def test_a_thing_in_words_of_a_body_is_no_emergency(message: str) -> None:
    found = sign_groups(message, TRIAGE)
    assert not found & {"unresponsive", "cyanosis", "child_red", "one_side_weak", "sepsis_sign"}
    assert judge(message).scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "my dad has gone grey and won't respond to us",
        "my phone went dead and my dad has gone grey and won't respond",
        "my baby has gone floppy and won't wake, I'm on the phone to 999",
        "my son fell off the table and hit his head, now he won't wake up",
        "her left arm has gone weak and her face dropped",
        "my screen went black and I collapsed, now my left leg is numb and weak",
    ],
)
def test_a_person_beside_a_thing_is_still_read(message: str) -> None:
    assert judge(message).scope is Scope.EMERGENCY
