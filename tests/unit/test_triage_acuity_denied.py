"""A semantic raise answered with its safety note when the text denies what would make its signs grave
(#31, s61: ``evidence.yaml`` ``reassurance.acuity_denied``; long forum posts list what they do not
have). The exemplar and classifier layers' confident raise is given; only the rule layers decide."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from tests.support.shipped_triage import judge_raise


@pytest.mark.parametrize(
    ("message", "near"),
    [
        (
            "32 weeks with my first. Been getting mild tension headaches in the afternoons. No swelling in"
            " my face or hands, no flashing lights or changes in vision, no pain under my ribs. Is"
            " paracetamol ok?",
            "pregnancy_headache",
        ),
        (
            "When I do the faster intervals I get really out of breath and wheezy for a few minutes, then it"
            " settles. No chest pain, never breathless at rest, no cough at night. Could this be asthma?",
            "asthma_attack",
        ),
        ("tight chest on and off today, no sweating, not short of breath", "chest_pain"),
        # NICE NG232: a head hit with no vomiting, crying at once
        ("my son hit his head on the table, he cried straight away and hasn't been sick", "head_injury"),
    ],
)
def test_a_raise_whose_grave_signs_are_all_denied_gets_the_safety_note(message: str, near: str) -> None:
    found = judge_raise(message, near)
    assert found.scope is not Scope.EMERGENCY
    assert any(q.rule == near for q in found.questions)  # the red flag's safety note is kept


@pytest.mark.parametrize(
    ("message", "near"),
    [
        # one grave sign told, another denied: the raise stands
        ("wheezy and out of breath, my inhaler isn't helping, no chest pain", "asthma_attack"),
        ("my 2 year old is wheezy and breathing fast, no blue lips, she's really floppy", "breathing"),
        # nothing denied: the raise stands
        ("I have a headache and I'm 30 weeks pregnant", "pregnancy_headache"),
    ],
)
def test_a_raise_with_a_grave_sign_told_or_nothing_denied_stands(message: str, near: str) -> None:
    assert judge_raise(message, near).scope is Scope.EMERGENCY
