"""Missed emergencies, fourth recall pass (#31 items 3-4): a temperature in clinicians' shorthand ("T 38.9")
read as a fever beside confusion or a swollen eye, pain when the eye moves (NICE CKS periorbital
cellulitis), breathing told as worse with breathlessness on the smallest task (MRC dyspnoea grade 5), a
child's age put after the complaint (", 11 months"), and an ectopic pregnancy told as a positive test
with shoulder-tip pain (NHS), "SOB" and "2/52 post TKR" in notes, an older person newly not knowing their
family (NICE NG51 new confusion); each both ways (fires when present; not on its look-alike). No model is
loaded: only the rule layers decide."""

from __future__ import annotations

import pytest

from tests.support.shipped_triage import POLICY
from tests.support.triage import flagged_rule, sign_groups


def flagged(message: str) -> str | None:
    return flagged_rule(message, POLICY)


@pytest.mark.parametrize(
    ("message", "category"),
    [
        ("80M, brought in from care home, drowsy and not making sense, T 39.2", "sepsis"),
        ("pt c/o feeling awful, new confusion, T39.0", "sepsis"),
        ("4yo, R eyelid swollen shut, hurts when she looks to the side, T38.7", "sudden_vision_loss"),
        ("her eye is swollen and red and it hurts when she moves it, temp 38.5", "sudden_vision_loss"),
        ("breathing got worse over 2 days, I stop to catch my breath going to the bathroom", "breathing"),
        ("mum is 90, breathing is harder today, she can't get to the kitchen without stopping", "breathing"),
        ("short of breath getting dressed since this morning, much worse than usual", "breathing"),
        ("wheezing, 9 months, chest pulling in under the ribs", "sick_infant"),
        (
            "positive test last week, bad pain low down on the right and pain at the tip of my shoulder",
            "pregnancy_bleeding",
        ),
        ("positive pregnancy test, shoulder tip pain and I keep nearly fainting", "pregnancy_bleeding"),
        ("hx: nil. c/o SOB + chest tightness 1hr", "chest_pain"),
        ("58F, 2/52 post TKR, c/o R calf pain and swelling", "blood_clot"),
        ("post-op day 3, calf tender and swollen", "blood_clot"),
        ("grandma (86) has a UTI and today doesn't know who I am and is burning up", "sepsis"),
        ("dad doesn't know where he is today and has a temp of 38.5", "sepsis"),
    ],
)
def test_signs_in_notes_shorthand_and_by_function_fire(message: str, category: str) -> None:
    assert flagged(message) == category


@pytest.mark.parametrize(
    "message",
    [
        "T 37.2, HR 80, feeling fine",
        "my eye hurts when I look at screens all day",
        "stye on my eyelid, a bit swollen, no pain moving the eye",
        "I have COPD and get breathless walking to the loo, same as always, can I have a new inhaler?",
        "my breathing is worse in the mornings, is that normal? I walk to the loo fine",
        "my breathing got worse when I had covid in 2021, fine now",
        "after my run I had to stop to catch my breath, normal?",
        "my asthma is worse at night, is it ok to go to the toilet and use my inhaler",
        "cough for 11 months, what could it be",
        "positive test for covid, shoulder aches",
        "pregnant, shoulder hurts from sleeping on it, any tips",
        "12 weeks pregnant and the top of my shoulder is stiff from work, no tummy pain",
        "I sob every night since the breakup and my chest feels tight",
        "she started to sob and her chest went tight",
        "SOB on exertion for months, known COPD, stable",
        "mum has dementia, doesn't know who I am any more, on antibiotics for a UTI: can they sedate her",
    ],
)
def test_look_alikes_do_not_fire(message: str) -> None:
    assert flagged(message) is None


def test_a_temperature_in_shorthand_is_a_fever_only_at_38_or_more() -> None:
    assert "fever" in sign_groups("T 38.4, eyelid swollen", POLICY.triage)
    assert "fever" not in sign_groups("T 37.4, eyelid swollen", POLICY.triage)


def test_an_age_after_the_complaint_is_an_infant_but_a_time_is_not() -> None:
    assert "infant" in sign_groups("grunting and floppy, 4 months", POLICY.triage)
    assert "infant" not in sign_groups("grunting and floppy for 4 months", POLICY.triage)
    assert "infant" not in sign_groups("it started 4 months ago", POLICY.triage)
