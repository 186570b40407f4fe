"""Heavy bleeding told in single words (pumping, pulsing, pints, heavily, everywhere, soaked) is read as
written and beside the blood or wound it tells of (#31 item 2, s59). By their stems these words were a
breast pump, an insulin pump, a pulse, pints of beer, "heavily pregnant", a rash everywhere and a soak in
the bath, and with any bleeding an emergency. Each both ways. No model is loaded: only the rule layers
decide."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from tests.support.shipped_triage import TRIAGE, judge
from tests.support.triage import sign_groups


@pytest.mark.parametrize(
    "message",
    [
        "I'm using a breast pump and my nipple is bleeding a little",
        "my insulin pump site is bleeding slightly",
        "my pulse is 90 and I have a nosebleed",
        "had 4 pints last night and now I have a nosebleed",
        "I have an itchy rash everywhere and my gums bleed when I brush",
        "can I soak in the bath with a small cut that bled a bit?",
        "I'm 39 weeks, heavily pregnant, with a little pink spotting",
    ],
)
def test_a_pump_a_pulse_a_pint_or_a_rash_everywhere_is_no_heavy_bleeding(message: str) -> None:
    assert "bleeding_heavy" not in sign_groups(message, TRIAGE)


@pytest.mark.parametrize(
    "message",
    [
        "I'm using a breast pump and my nipple is bleeding a little",
        "my insulin pump site is bleeding slightly",
        "my pulse is 90 and I have a nosebleed",
    ],
)
def test_a_little_bleeding_beside_a_pump_or_a_pulse_is_no_emergency(message: str) -> None:
    assert judge(message).scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "blood is pumping out of his leg",
        "it's spurting blood",
        "there's blood everywhere",
        "blood is pouring from his head",
        "I'm bleeding very heavily from my nose",
        "she's bleeding heavily after the birth",
    ],
)
def test_heavy_bleeding_in_single_words_is_an_emergency(message: str) -> None:
    assert "bleeding_heavy" in sign_groups(message, TRIAGE)
    assert judge(message).scope is Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    ["the cut on my hand is gushing", "I've soaked through 3 pads in an hour", "he's lost about 2 pints"],
)
def test_the_flow_or_the_amount_told_of_a_wound_or_a_loss_is_heavy(message: str) -> None:
    assert "bleeding_heavy" in sign_groups(message, TRIAGE)
