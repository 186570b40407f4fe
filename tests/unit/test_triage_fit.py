"""Review findings of #31 (items 1, 2 and 6): a sign told with how long it has lasted, read against the
published limit (a seizure of 5 minutes or more: NHS, call 999) and the NHS seizure red flags; what one
wants to prevent, supposed only up to its object; an exception to a sign read across a dash. Each fix
both ways; no model is loaded: only the rule layers decide here."""

from __future__ import annotations

import pytest

from gateway.domain import Scope, Triage, TriageLayer
from gateway.errors import InvalidValue
from gateway.triage.vitals import read_durations, read_sign_durations
from gateway.triage.vitals_policy import SignDuration
from tests.support.shipped_triage import POLICY, TRIAGE
from tests.support.triage import reader_of, rules_only, sign_groups


def judge(message: str) -> Triage:
    return rules_only(message, POLICY)


def signs(message: str) -> set[str]:
    return sign_groups(message, TRIAGE, of_now=True)


# --- 1. a seizure told with its duration, and the NHS seizure red flags --------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "my son is having a seizure right now for 6 minutes",
        "he's been fitting for 6 minutes",
        "my wife has been convulsing for about seven minutes, what do I do",
        "grandad has had a fit for the last 8 mins",
        "she's been seizing 10 minutes",
    ],
)
def test_a_seizure_of_five_minutes_or_more_is_an_emergency(message: str) -> None:
    found = judge(message)
    assert found.scope is Scope.EMERGENCY
    assert found.layer is TriageLayer.VITALS
    assert any("5 minutes or more" in e.text for e in found.evidence)


@pytest.mark.parametrize(
    "message",
    [
        "she had a seizure 6 years ago",
        "his fits last about 2 minutes and he's fine after",
        "his fits usually last about 10 minutes and he's fine after",
        "she had a fit 5 minutes ago and is drowsy now",
        "my daughter's seizures usually last 7 minutes and she sleeps afterwards, is that normal",
        "he had fits for 3 days when he was a baby, will it affect his school work",
        "she had a fit for 2 minutes and is now back to herself, chatting and eating",
    ],
)
def test_a_seizure_told_as_a_known_pattern_short_or_long_ago_is_no_emergency(message: str) -> None:
    assert judge(message).scope is not Scope.EMERGENCY


def test_a_seizure_duration_is_read_in_minutes_and_a_span_of_illness_is_not_one_episode() -> None:
    vitals = TRIAGE.vitals
    assert [(r.vital, r.value) for r in read_sign_durations(["fitting for 6 minutes"], vitals)] == [
        ("seizure_minutes", 6.0)
    ]
    assert [r.value for r in read_sign_durations(["seizing for an hour"], vitals)] == [60.0]
    assert read_sign_durations(["fits for 3 days"], vitals) == []
    assert read_sign_durations(["a fit 20 minutes ago"], vitals) == []
    assert read_sign_durations(["no fits for 10 minutes"], vitals, lambda s, at: s[:at].endswith("no ")) == []


def test_a_bare_count_of_minutes_is_a_duration_only_when_the_caller_asks() -> None:
    assert read_durations("seizing 10 minutes") == []
    assert [(w, round(d * 1440, 6)) for w, d in read_durations("seizing 10 minutes", bare_minutes=True)] == [
        ("10 minutes", 10.0)
    ]
    assert read_durations("a fit 5 minutes ago", bare_minutes=True) == []
    told = read_durations("fitting for 6 minutes, then 2 hrs", bare_minutes=True)
    assert [(w, round(d * 1440, 6)) for w, d in told] == [("for 6 minutes", 6.0), ("2 hrs", 120.0)]
    sign = TRIAGE.vitals.sign_durations["seizure_minutes"]
    assert sign.word_patterns is sign.word_patterns  # compiled once, with the policy


def test_a_sign_duration_needs_its_words() -> None:
    with pytest.raises(InvalidValue):
        SignDuration(words=(), unit="minutes")


@pytest.mark.parametrize(
    "message",
    [
        "he had a fit and hasn't woken up",
        "she had a seizure earlier and she's not woken up since",
        "my brother keeps fitting one after another without waking up in between",
        "my 20 year old just had a fit and she's never had a fit before",
        "our neighbour is having her first fit, what do we do",
    ],
)
def test_not_waking_after_a_seizure_or_seizures_without_waking_are_emergencies(message: str) -> None:
    assert judge(message).scope is Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "my baby hasn't woken up from her nap yet, should I wake her for a feed",
        "I've never had a fit before, is tramadol safe for me",
        "my son had his first seizure 3 years ago, can he swim",
    ],
)
def test_sleep_without_a_seizure_or_a_first_seizure_long_ago_is_no_emergency(message: str) -> None:
    assert judge(message).scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "he's having a fit right now",
        "my daughter is fitting",
        "my son is having a seizure right now what do i do",
        "our baby is seizing",
        "my husband is fitting on the floor",
        "my friend is having a seizure help",
        "my son's having a fit right now",
    ],
)
def test_a_seizure_told_as_happening_now_is_an_emergency(message: str) -> None:
    """Whoever writes during a seizure cannot know it will stop within 5 minutes or is not a first fit
    (NHS: call 999 for either)."""
    found = judge(message)
    assert found.scope is Scope.EMERGENCY
    assert found.rule == "unconscious_or_seizure"


@pytest.mark.parametrize(
    "message",
    [
        "my mum is having a fit about my grades",
        "she's having a fit because I crashed the car",
        "my son is having seizures since starting the new tablets, is that normal",
        "what should i do if my son is having a seizure",
        "when my daughter is having a seizure should i turn her on her side",
        "the dress is fitting well",
        "she is fitting in well at her new school",
        "we are fitting a new kitchen",
    ],
)
def test_a_temper_a_pattern_of_seizures_or_a_supposed_one_is_no_seizure_now(message: str) -> None:
    assert judge(message).scope is not Scope.EMERGENCY


# --- 2. what one wants to prevent or avoid: the object only is supposed --------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "she's 2 and has a temperature, will calpol prevent another fit",
        "how do i prevent him having another seizure when he has a fever",
    ],
)
def test_what_one_wants_to_prevent_gives_no_sign(message: str) -> None:
    assert "seizure_long" not in signs(message)
    assert judge(message).scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "will this medicine prevent another fit he is fitting now and wont stop",
        "can aspirin prevent a stroke my face is drooping on one side",
        "what can prevent him dying he is not breathing",
    ],
)
def test_a_report_of_now_after_what_one_wants_to_prevent_keeps_its_sign(message: str) -> None:
    assert judge(message).scope is Scope.EMERGENCY


def test_the_supposed_span_is_the_object_of_prevent() -> None:
    message = "will this medicine prevent another fit he is fitting now"
    reading = reader_of(TRIAGE).read(message)
    supposed = [h.text for h in reading.hits if h.supposed]
    current = [h.text for h in reading.hits if not h.supposed]
    assert "another fit" in supposed
    assert "fitting" in current


# --- 6. an exception to a sign read across a dash -------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "right arm pain and numbness - is it the zoster scarring",
        "numbness down my left leg - could it be from the scar of my knee op?",
    ],
)
def test_numbness_asked_to_be_a_scars_across_a_dash_is_no_stroke_sign(message: str) -> None:
    assert "one_side_weak" not in signs(message)
    assert judge(message).scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "sudden weakness in his right arm - he can't lift it",
        "her left arm went numb - she can't lift it - is it a stroke",
        "his right arm is numb and weak - he has an old scar on his leg",
    ],
)
def test_one_sided_weakness_beside_a_dash_without_a_scar_is_still_a_stroke_sign(message: str) -> None:
    assert judge(message).scope is Scope.EMERGENCY
