"""A very high blood pressure with symptoms (#31 item 3, vitals): a reading of 180/120 or more told of now,
with a symptom of end-organ damage told of now, is an emergency (NICE NG136; NHS 111); the reading alone,
a past or usual reading, a usual headache, a normal reading with a headache and a question about what a
reading means are not. Lay wordings of a reading are read as a pressure. No model is loaded: only the
rule layers decide."""

from __future__ import annotations

import pytest

from gateway.triage.vitals import read_vitals
from tests.support.shipped_triage import POLICY
from tests.support.triage import flagged_rule


def flagged(message: str) -> str | None:
    return flagged_rule(message, POLICY)


@pytest.mark.parametrize(
    ("text", "systolic"),
    [
        ("top number 218 bottom 128", 218.0),
        ("my bp machine says 210 over 125", 210.0),
        ("190/125", 190.0),
        ("blood pressure 150/95", 150.0),
        ("pressure 230 over 140", 230.0),
    ],
)
def test_lay_readings_are_read_as_a_pressure(text: str, systolic: float) -> None:
    pressures = [r.value for r in read_vitals(text) if r.vital == "systolic_bp"]
    assert pressures == [systolic]


@pytest.mark.parametrize(
    "text", ["on 12/10 I saw the GP", "I took 2/3 of the dose", "scored 150/200 on a test"]
)
def test_dates_and_fractions_are_no_pressure(text: str) -> None:
    assert not [r for r in read_vitals(text) if r.vital == "systolic_bp"]


def test_a_top_number_of_220_alone_stays_a_news2_red_score() -> None:
    assert flagged("top number 225 bottom 130, I feel fine") == "very_high_blood_pressure"


@pytest.mark.parametrize(
    "message",
    [
        "top number 218 bottom 128 and I have a splitting headache and blurred vision",
        "my bp machine says 210 over 125 and my chest feels tight",
        "190/125 just now, and my vision has gone blurry",
        "dad's blood pressure is 200/120 and he is confused",
        "BP 185/122 today and I'm short of breath",
        "my blood pressure is 170/125 and I've got a blinding headache",
        "top number 218 bottom 128 on my machine, head feels like it's splitting and things look blurry",
    ],
)
def test_a_very_high_reading_with_symptoms_of_now_is_an_emergency(message: str) -> None:
    assert flagged(message) == "hypertensive_emergency"


def test_another_red_flag_escalated_beside_it_may_name_the_emergency() -> None:
    """Both escalate: the semantic read picks between them (here silent: the first listed)."""
    message = "BP 185/122 today, I'm short of breath and my left arm is weak"
    assert flagged(message) in ("stroke_signs", "hypertensive_emergency")


@pytest.mark.parametrize(
    "message",
    [
        # a high reading alone: same-day advice at most, not an emergency
        "my bp machine says 195 over 121, I feel completely fine",
        "blood pressure 190/120 this morning, no symptoms at all",
        # a past reading
        "my blood pressure was 200/125 two years ago with a bad headache, it's fine on tablets now",
        # a usual reading, with the usual mild headache
        "my bp usually runs at 185/120 and I get my usual mild headache",
        # a normal reading with a headache
        "bp 128/82 and I have a headache",
        # a question about what a reading means
        "what does 180/120 mean?",
    ],
)
def test_look_alikes_are_no_emergency(message: str) -> None:
    assert flagged(message) is None


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # a usual-word elsewhere in the sentence does not make today's reading a usual one
        ("My bp is normally fine and today it's 200/120 and I can't see properly", "hypertensive_emergency"),
        (
            "my blood pressure is usually ok but the machine says 210 over 125 and my head is splitting",
            "hypertensive_emergency",
        ),
        # the usual-word governs the reading itself
        ("my bp is usually around 190/120 and I get headaches", None),
        ("190/125 as usual for me, and a bit of a headache", None),
    ],
)
def test_a_usual_word_cancels_only_the_reading_it_governs(message: str, expected: str | None) -> None:
    assert flagged_rule(message, POLICY) == expected
