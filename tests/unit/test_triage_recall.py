"""Missed emergencies (#31 items 2-4): signs told in patients' and clinicians' wording, a child's age
and vital signs, severity and trajectory, and who the message is about, each in both directions (fires
when present and current; not when negated, absent or told of something else). No model is loaded:
the semantic layers say nothing (``score()``), so only the rule layers decide."""

from __future__ import annotations

import pytest

from gateway.domain import Scope, TriageLayer
from gateway.triage.evidence import negated
from gateway.triage.vitals import check_vitals, read_age, read_vitals
from tests.support.shipped_triage import TRIAGE, VITALS, judge
from tests.support.triage import reader_of


def emergency(message: str) -> tuple[Scope, str | None]:
    result = judge(message)
    return result.scope, result.rule if result.scope is Scope.EMERGENCY else None


# --- ages and vital signs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "years"),
    [
        ("my son is 3 and has a cough", 3.0),
        ("toddler (2) breathing fast", 2.0),
        ("our daughter, 4, has a rash", 4.0),
        ("my lil one is 2 n has a temp", 2.0),
        ("my baby is 6 weeks and feels hot", 6 * 7 / 365.25),
    ],
)
def test_a_child_and_a_bare_number_give_the_age(text: str, years: float) -> None:
    assert read_age(text, VITALS) == pytest.approx(years)


@pytest.mark.parametrize(
    "text",
    [
        "my daughter is 16 weeks pregnant",
        "my son is 5 hours late home",
        "my son is 2 weeks late for his jabs",
    ],
)
def test_a_number_that_is_not_the_child_age_is_not_read(text: str) -> None:
    assert read_age(text, VITALS) is None


def test_a_breathing_rate_counted_in_a_minute_is_read() -> None:
    assert [r.value for r in read_vitals("I counted 58 breaths in a minute")] == [58.0]


@pytest.mark.parametrize(
    ("message", "fires"),
    [
        ("My son is 2.\n\nI counted 58 breaths in a minute while he was asleep.", True),
        ("My son is 12.\n\nI counted 28 breaths in a minute while he was asleep.", False),
        ("my 4yo has been running temps of 39-40 for a week despite calpol", True),
        ("my son is 12 and has been running temps of 39 for a week", False),
        ("my daughter is 3 and has had a runny nose for a week, no temperature", False),
    ],
)
def test_a_child_rate_or_days_of_fever_is_read_against_the_childs_age(message: str, fires: bool) -> None:
    denied = lambda sentence, at: negated(sentence, at, TRIAGE.settings.negation)  # noqa: E731
    assert bool(check_vitals(message, VITALS, denied=denied)) is fires
    result = judge(message)
    assert (result.scope is Scope.EMERGENCY) is fires
    if fires:
        assert result.layer is TriageLayer.VITALS


@pytest.mark.parametrize(
    ("note", "fires"), [("80F, fall at home, GCS 13", True), ("80F, fall at home, GCS 15/15", False)]
)
def test_a_glasgow_coma_scale_below_15_is_news2_red(note: str, fires: bool) -> None:
    result = judge(note)
    assert (result.scope is Scope.EMERGENCY) is fires
    if fires:
        assert result.layer is TriageLayer.VITALS


def test_a_vital_in_clinical_shorthand_opens_the_health_gate() -> None:
    assert emergency("Found at home, BP 78/40, HR 128, cool peripheries")[0] is Scope.EMERGENCY
    assert emergency("Found at home, BP 128/80, HR 72, warm peripheries")[0] is not Scope.EMERGENCY


# --- who the message is about, anywhere in a long post -------------------------------------------


def test_a_child_named_at_the_top_of_a_long_post_counts_for_its_worst_paragraph() -> None:
    post = (
        "My son is 2 and has had a cold for 3 days. Our whole family has colds. We had a busy week.\n\n"
        "Tonight he is making a grunting sound with every breath."
    )
    reader = reader_of(TRIAGE)
    signs = reader.signs(reader.read(post), "sick_infant")
    assert signs is not None
    assert signs.escalated
    no_child = post.replace("My son is 2", "I am 32").replace("he is", "I am")
    assert reader.signs(reader.read(no_child), "sick_infant") is None


# --- negation reaches a pattern's last word --------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "found"),
    [
        ("my 5 year old has had loose poos for a day, no blood, drinking well", False),
        ("my 5 year old has had loose poos for a day with blood in them", True),
        ("My 4 year old has had blood and mucus in her runny poos since yesterday", True),
    ],
)
def test_blood_in_the_stool_is_read_and_its_denial_respected(message: str, found: bool) -> None:
    reader = reader_of(TRIAGE)
    hits = [h for h in reader.read(message).hits if h.group == "blood_in_stool" and not h.negated]
    assert bool(hits) is found
    assert (emergency(message)[0] is Scope.EMERGENCY) is found


# --- signs as people describe them ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "category"),
    [
        ("he's breathless and can only say two or three words then stops for air", "breathing"),
        ("nosebleed won't stop after an hour of pinching and it's pouring down my throat", "heavy_bleeding"),
        ("gashed my hand gardening last week and now my jaw is locking and my neck keeps spasming", "sepsis"),
        ("G1 at 36 weeks, BP 168/112, headache", "pregnancy_headache"),
        ("105F fever after a week in the tropics, shaking, yellow eyes", "sepsis"),
        ("I keep thinking about hanging myself and I bought rope today", "suicidal_intent"),
        ("she went limp and floppy in my arms, she's 5 months", "sick_infant"),
        ("is it normal to have chest pain and sweating for the last hour at rest?", "chest_pain"),
        ("a red lump next to her eye is getting bigger by the hour", "sudden_vision_loss"),
        ("mum came out of hospital last week and now her calf is swollen and hot", "blood_clot"),
        ("9 year old with fever 39.5 and an acute abdomen", "acute_abdomen"),
        ("a dark curtain came down over my left eye this morning", "sudden_vision_loss"),
    ],
)
def test_signs_told_in_lay_and_clinical_words_fire(message: str, category: str) -> None:
    assert emergency(message) == (Scope.EMERGENCY, category)


def test_jaundice_with_a_fever_under_the_right_ribs_is_an_emergency() -> None:
    """Charcot's triad (cholangitis): both the abdomen's and sepsis's signs escalate; either is right."""
    scope, category = emergency(
        "gallstone pain under my right ribs, temperature of 39.2 and my eyes look yellow"
    )
    assert scope is Scope.EMERGENCY
    assert category in ("acute_abdomen", "sepsis")


@pytest.mark.parametrize(
    "message",
    [
        "he's a bit breathless on hills but can talk in full sentences",
        "I'm 16 weeks pregnant and get nosebleeds, is that normal",
        "do I need a tetanus jab after a clean cut from a kitchen knife?",
        "36 weeks pregnant, BP 118/72 at my check, mild headache after a long day",
        "my eyes look a bit yellow in this light, no fever, feel fine",
        "planning a climbing trip tonight, need a new rope",
        "my 5 year old woke up with a limp and doesn't want to put weight on his leg, temp 37.8",
        "I get out of breath running for the bus but I'm fine at rest",
        "is it normal to get chest pain when I'm anxious?",
        "a small lump next to her eye, it has not changed for months",
        "mum came out of hospital last week and is walking a bit further every day",
        "i ordered some curtains off amazon, has it shipped yet",
    ],
)
def test_the_same_words_without_the_emergency_do_not_fire(message: str) -> None:
    assert emergency(message)[0] is not Scope.EMERGENCY


# --- thoughts of suicide: a denial of the thought or the plan, not a "not" before the act ------------


@pytest.mark.parametrize(
    "message",
    [
        "I've got no thoughts of harming myself, I just want to taper my citalopram",
        "I have no plans to hurt myself but my mood has been low since the new job",
        "I don't have any thoughts or plans to kill myself, can I stop sertraline?",
    ],
)
def test_a_denied_thought_or_plan_of_suicide_does_not_fire_the_rule(message: str) -> None:
    assert emergency(message) != (Scope.EMERGENCY, "suicidal_intent")


@pytest.mark.parametrize(
    "message",
    [
        # a "not" before the act tells a struggle or a survival, never a denial (crisis-line guidance)
        "every single day is a fight not to hurt myself",
        "I didn't kill myself tonight but I came close",
        "I just need a reason not to end my life",
        "I've never been closer to killing myself than now",
        # a denial of one thing does not deny what follows
        "no thoughts of harming myself before, but now I want to kill myself",
    ],
)
def test_thoughts_of_suicide_not_denied_still_fire(message: str) -> None:
    assert emergency(message) == (Scope.EMERGENCY, "suicidal_intent")
