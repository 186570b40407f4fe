"""Signs that bind an unbound raise, fourth pass (#31 item 2): what a severe illness does to the person,
told in lay words (on hands and knees, will not be picked up, gone a horrible colour, a hernia gone hard,
the chin that will not go down, not making any sense). Each sign both ways; no model is loaded: the
semantic read is given (``confident_read``). Written from scratch phrasings, not from any held row."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from tests.support.shipped_triage import TRIAGE
from tests.support.shipped_triage import judge_raise as judge
from tests.support.triage import reader_of, sign_groups


def abdomen_met(message: str) -> bool:
    reader = reader_of(TRIAGE)
    return reader.signs(reader.read(message), "acute_abdomen") is not None


# (message, the red flag the semantic layers raise, the sign group that binds it)
BOUND = [
    ("I think I have appendicitis, it's getting hard to walk", "acute_abdomen", "abdomen_distress"),
    ("72M, AF, abdo pain out of proportion to examination findings", "acute_abdomen", "abdomen_distress"),
    ("my hernia has gone hard and I can't push it back in", "acute_abdomen", "abdomen_distress"),
    ("he's on his hands and knees with tummy pain", "acute_abdomen", "abdomen_distress"),
    ("my husband is sweating buckets and his belly hurts", "acute_abdomen", "abdomen_distress"),
    ("my daughter won't let me pick her up, her tummy hurts", "acute_abdomen", "abdomen_distress"),
    ("tummy ache and he's gone a horrible colour", "acute_abdomen", "abdomen_distress"),
    ("my wife's stomach hurts and she can't get off the floor", "acute_abdomen", "abdomen_distress"),
    ("mum has a chest infection and she's not making any sense today", "sepsis", "altered_consciousness"),
    ("he's got a headache and can't bend his head forward", "meningitis", "stiff_neck"),
    ("my daughter can't put her chin down to her chest and she's boiling", "meningitis", "stiff_neck"),
]


@pytest.mark.parametrize(("message", "near", "group"), BOUND)
def test_what_the_illness_does_binds_the_raise_of_its_red_flag(message: str, near: str, group: str) -> None:
    assert group in sign_groups(message, TRIAGE, of_now=True)
    result = judge(message, near)
    assert result.scope is Scope.EMERGENCY
    assert result.rule == near
    assert result.evidence


@pytest.mark.parametrize(
    "message",
    [
        "my hernia is small and goes back in when I lie down, should I get it looked at?",
        "I've had appendicitis in the past, is keyhole surgery better?",
        "my toddler won't let me pick him up when he's cross, is that a phase?",
        "my hair has gone a funny colour after the hair dye, how do I fix it?",
    ],
)
def test_the_same_words_without_a_tummy_in_distress_bind_no_acute_abdomen(message: str) -> None:
    assert not abdomen_met(message)
    assert judge(message, "acute_abdomen").scope is not Scope.EMERGENCY


def test_a_neck_and_chin_moved_freely_are_no_stiff_neck() -> None:
    assert "stiff_neck" not in sign_groups("he can bend his head forward fine, just a cold", TRIAGE)
    assert "stiff_neck" not in sign_groups("put your chin down to your chest for the stretch", TRIAGE)
