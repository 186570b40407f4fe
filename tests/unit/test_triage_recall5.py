"""Missed emergencies, fifth recall pass (#31 items 3-4): a sign whose own words are a negative ("didn't
know where he was") is not denied by them; recency in text-speak ("this morn", "2day"); breath told as
short; a sentence's inability to say long sentences; the gesture of chest pain; pink frothy phlegm with
breathlessness (acute pulmonary oedema); pain told as having gone to the lower right and guarding in a
parent's words; a clot risk told in the past (a hospital stay, an operation in lay words) unless dated
months or years ago (NICE NG89; the date keeps out only the risk it dates, #34); a child's age and a
fever's days in non-native English. Each both ways. No model is loaded: only the rule layers decide."""

from __future__ import annotations

import pytest

from gateway.errors import InvalidValue
from gateway.triage.evidence_policy import TermGroup
from gateway.triage.vitals import read_age, read_fever_days
from tests.support.shipped_triage import POLICY
from tests.support.triage import flagged_rule, sign_groups


def flagged(message: str) -> str | None:
    return flagged_rule(message, POLICY)


@pytest.mark.parametrize(
    ("message", "category"),
    [
        # a negative that is the sign, told in the past with a time of now
        ("My dad has a chest infection and this morning he didn't know where he was", "sepsis"),
        ("grandma's got a UTI, earlier today she did not recognise me at all", "sepsis"),
        ("nan has pneumonia n this morn she didnt no who i was", "sepsis"),
        ("he's had flu since friday and couldn't tell me where he was 2day", "sepsis"),
        # breath told as short, at rest; long sentences
        ("my breathing is so short even sitting down, since last night", "breathing"),
        ("I have short breath when I lie in bed, very bad from yesterday", "breathing"),
        ("my wife cannot say long sentences, she is gasping for breath", "breathing"),
        # the gesture of chest pain with breathlessness
        ("dad keeps gripping his chest and he's short of breath", "chest_pain"),
        # pink frothy phlegm with breathlessness
        ("she's breathless and coughing up pink frothy spit", "breathing"),
        # appendicitis told as a moving pain, and guarding in a parent's words
        (
            "son is 10, pain started round his belly button then moved across to the lower right, temp 38.6",
            "acute_abdomen",
        ),
        ("her pain has now gone down to the lower right side and she has a fever of 39", "acute_abdomen"),
        ("my daughter won't let me touch her tummy, she's crying with pain", "acute_abdomen"),
        # a clot risk told in the past
        (
            "he was in hospital for 10 days with a chest infection, now his right calf is swollen and hot",
            "blood_clot",
        ),
        ("mum had her knee replaced 3 weeks ago and her calf has gone red and swollen", "blood_clot"),
    ],
)
def test_signs_told_in_lay_and_past_wording_fire(message: str, category: str) -> None:
    assert flagged(message) == category


@pytest.mark.parametrize(
    "message",
    [
        # the negative as a plain denial, or a past episode told as over
        "she didn't know where her glasses were this morning, is that a sign of dementia?",
        "mum was confused with a UTI in 2019, how do we prevent another",
        "my grandad has dementia and doesn't know who I am any more, how do I cope",
        # short of something else; a short walk
        "I run short of time to cook, any quick healthy meals",
        "my breath smells bad in the morning, short of ideas, any tips?",
        # holding a chest of something; a chest rub
        "I'm holding my chest x-ray results, what does hyperinflation mean",
        # frothy phlegm without breathlessness; pink without froth
        "coughing up a bit of white frothy phlegm with a cold, otherwise ok",
        # a past, moving pain; a child who won't let me cut his nails
        "she had appendicitis last year, pain moved to the lower right then, fine now",
        "my son won't let me touch his hair to cut it, any tips",
        # a clot risk long ago
        "I had a hip replacement in 2015 and my calf is a bit sore after football today",
        "he was in hospital for his heart last year, his ankles swell in the heat",
    ],
)
def test_look_alikes_do_not_fire(message: str) -> None:
    assert flagged(message) is None


def test_a_negative_sign_is_not_denied_by_its_own_words() -> None:
    assert "not_recognising" in sign_groups("this morning he didn't know where he was", POLICY.triage)
    assert "not_recognising" in sign_groups("she did not recognise me", POLICY.triage)
    assert "not_recognising" not in sign_groups("she recognised me", POLICY.triage)


def test_a_clot_risk_counts_in_the_past_but_not_when_long_ago() -> None:
    recent = "she was in hospital with pneumonia, now her left leg is swollen and red"
    old = "she was in hospital with pneumonia in 2016, now her left leg is swollen and red"
    assert flagged(recent) == "blood_clot"
    assert flagged(old) is None


@pytest.mark.parametrize(
    ("message", "category"),
    [
        # a long-ago operation told beside a recent risk does not cancel it (#31, #34)
        ("had my knee done years ago and was in hospital last week, now my calf is swollen", "blood_clot"),
        (
            "I had surgery 5 years ago and a long flight last week, now one calf is swollen and red",
            "blood_clot",
        ),
        ("knee op 2 yrs ago, in hospital last week, now one calf is swollen and red", "blood_clot"),
        # the date told with the risk, before or after it, still keeps it out
        ("years ago I had surgery and now my calf is swollen and red", None),
        ("I had an operation, many years ago, and my calf is swollen and red", None),
        ("she was in hospital with pneumonia, back in 2016, now her left leg is swollen and red", None),
        ("I had surgery on my hip and knee 5 years ago, now my calf is swollen and red", None),
        ("I had an operation on my back, which was many years ago, now my calf is swollen and red", None),
    ],
)
def test_a_clot_risks_date_keeps_out_only_the_risk_it_dates(message: str, category: str | None) -> None:
    assert flagged(message) == category


def test_a_non_native_age_and_fever_days_are_read() -> None:
    vitals = POLICY.triage.vitals
    assert read_age("my son 4 years have high fever", vitals) == 4.0
    assert read_age("my daughter 18 months breathing fast", vitals) == 1.5
    assert read_age("my son 4 years ago had a fever", vitals) is None
    assert [r.value for r in read_fever_days("fever 40 degree already six days")] == [6.0]
    assert flagged("my daughter 3 years has fever 39.5 already 5 days, very tired") == "sick_infant"
    assert flagged("my son 9 years has fever 39 already 5 days") is None


def test_a_term_scope_needs_unless_patterns() -> None:
    with pytest.raises(InvalidValue):
        TermGroup(words=("cast",), unless_scope="term")
    assert TermGroup(words=("cast",), unless=(r"\byears ago\b",), unless_scope="term").unless_scope == "term"
