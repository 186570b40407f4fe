"""Missed emergencies, second recall pass (#31 items 3-4): cauda equina syndrome, blows to the head,
one leg larger than the other after a hospital stay, the jaw named after its stiffness, and a fever's
duration in clinicians' shorthand; each both ways (fires when present; not when negated, absent or a
look-alike). No model is loaded: only the rule layers decide."""

from __future__ import annotations

import pytest

from gateway.triage.vitals import read_fever_days
from tests.support.shipped_triage import POLICY
from tests.support.triage import flagged_rule


def flagged(message: str) -> str | None:
    return flagged_rule(message, POLICY)


@pytest.mark.parametrize(
    "message",
    [
        "my back has been bad for a week and now i cant feel anything when i wipe",
        "45F with bilateral sciatica, saddle anaesthesia and urinary retention",
        "my back's been killing me and now I can't wee at all since this morning",
        "sciatica both legs and numbness around my back passage",
        "back pain with new bowel incontinence and numb inner thighs",
        # both legs told with "both" after them or with "of" (stop 50)
        "my legs have both gone numb and I can't feel my bum on the toilet, and I've wet myself",
        "both of my legs are tingling and I have wet myself",
    ],
)
def test_cauda_equina_red_flags_fire(message: str) -> None:
    assert flagged(message) == "cauda_equina"


@pytest.mark.parametrize(
    "message",
    [
        "I cycle a lot and sometimes get a numb bum after long rides, any tips for saddles",
        "my back is sore after moving house, can I take naproxen",
        "I have lower back pain, no numbness, no problems with my bladder or bowels",
        "45M with mechanical low back pain, no saddle anaesthesia, no urinary retention, neuro intact",
        "my elderly dad keeps wetting himself at night, who can help",
        "I have stress incontinence and wet myself a bit when I sneeze, what exercises help",
        "my legs both ache after the marathon",
        "my legs have both gone numb from sitting cross-legged",
    ],
)
def test_cauda_equina_does_not_fire_on_look_alikes(message: str) -> None:
    assert flagged(message) != "cauda_equina"


@pytest.mark.parametrize(
    "message",
    [
        "got headbutted at footy, was out for a minute and now keep throwing up",
        "my husband got punched in the head last night and now he's really drowsy and confused",
        "kid took a cricket ball to the head, knocked out for a few seconds and now being sick",
    ],
)
def test_a_blow_to_the_head_with_a_red_flag_fires(message: str) -> None:
    assert flagged(message) == "head_injury"


def test_a_blow_to_the_head_without_a_red_flag_does_not_fire() -> None:
    assert flagged("my son got headbutted by his brother, little red mark but he's fine and playing") is None


@pytest.mark.parametrize(
    "message",
    [
        "my mum came home from hospital 2 weeks ago and now one leg is twice the size of the other and red",
        "70F, swollen R leg, recent admission for pneumonia",
        "dads right leg has gone much fatter than his left since he came home from hospital",
    ],
)
def test_one_leg_larger_after_a_hospital_stay_fires(message: str) -> None:
    assert flagged(message) == "blood_clot"


@pytest.mark.parametrize(
    "message",
    [
        "both my ankles swell in the heat",
        "one leg is slightly longer than the other, will insoles help",
        "I had a recent admission for asthma, how do I use my new inhaler",
    ],
)
def test_leg_and_admission_look_alikes_do_not_fire(message: str) -> None:
    assert flagged(message) is None


def test_a_stiff_jaw_after_a_wound_fires_and_teeth_grinding_does_not() -> None:
    assert flagged("A farmer who cut his hand two weeks ago now has stiffness of the jaw") == "sepsis"
    assert flagged("my jaw is stiff from grinding my teeth at night") is None


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("4yo F fever 6 days, peak 40.1", 6.0),
        ("6 days of high fever", 6.0),
        ("fever 5/7, cough", 5.0),
        ("4 days of 39.9 temps", 4.0),
    ],
)
def test_a_fever_duration_in_shorthand_is_read(text: str, days: float) -> None:
    assert [r.value for r in read_fever_days(text)] == [days]


@pytest.mark.parametrize(
    "text", ["temp 38 after 5 days of antibiotics", "fever since 5/7", "had a fever 2 days ago"]
)
def test_a_duration_that_is_not_the_fevers_is_not_read(text: str) -> None:
    assert read_fever_days(text) == []


def test_a_small_child_with_fever_for_five_days_in_shorthand_fires_and_two_days_does_not() -> None:
    assert flagged("2 yo fever 5/7, irritable, not drinking") == "sick_infant"
    assert flagged("fever 2/7, coryzal, eating and drinking, 3 years old") is None


def test_an_age_in_months_before_a_temperature_is_not_its_duration() -> None:
    assert read_fever_days("my baby is 9 months with a temperature of 37.8, feeding well") == []


@pytest.mark.parametrize(
    ("message", "category"),
    [
        ("I have the tablets in front of me and I'm going to take them all tonight", "suicidal_intent"),
        ("my brother says he's going to hang himself and he's locked in his room", "suicidal_intent"),
        ("allergic to peanuts, I think I ate some, my throat is itchy, hard to swallow", "anaphylaxis"),
        ("baby passing redcurrant jelly stools and drawing his legs up", "heavy_bleeding"),
    ],
)
def test_means_at_hand_swallowing_beside_an_allergen_and_redcurrant_stools_fire(
    message: str, category: str
) -> None:
    assert flagged(message) == category


@pytest.mark.parametrize(
    "message",
    [
        "I have tonsillitis and it's hard to swallow, can I take ibuprofen",
        "my throat is itchy from hay fever",
        "I'm going to end up doing it wrong, how do I use a spacer",
        "my son has a peanut allergy, what should be in his school care plan",
    ],
)
def test_swallowing_and_going_to_look_alikes_do_not_fire(message: str) -> None:
    assert flagged(message) is None
