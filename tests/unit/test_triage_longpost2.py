"""Long posts judged by their worst current complaint, second pass (#31 item 6): a question cut from a
long post keeps the time its sentences have in the whole post, a year with its month dates an episode,
and "the worst pain of my life" measures a pain, not a life. Each both ways. No model is loaded: the
semantic layers say nothing."""

from __future__ import annotations

import pytest

from gateway.domain import ChatRequest, Message, Role, Scope, TriageLayer
from gateway.triage.planning import TriagePlan, plan
from tests.support.shipped_triage import GENERAL, TRIAGE, judge
from tests.support.triage import reader_of, readings_of, sign_groups


def plan_of(message: str) -> TriagePlan:
    return plan(
        ChatRequest(messages=(Message(Role.USER, message),), model="m"), GENERAL, TRIAGE, reader_of(TRIAGE)
    )


# --- a question cut from a long post keeps the post's history ----------------------------------------

PAST_OVERDOSE = (
    "I want to ask about coming off my antidepressant. In 2020, during lockdown, I went through the "
    "worst period of my life. I'd lost my job, my relationship ended and in the October I took an "
    "overdose.\n\nI've been well for two years now. How slowly should I taper sertraline?"
)
PAST_AURA = (
    "The first time I had a migraine with aura, when I was 22, I was convinced I was having a stroke. "
    "The left side of my face and my hand went numb and tingly for twenty minutes.\n\n"
    "I'm 26 now. Can I stay on the combined pill?"
)


@pytest.mark.parametrize("message", [PAST_OVERDOSE, PAST_AURA])
def test_a_statement_cut_out_of_its_episode_is_still_history(message: str) -> None:
    triage_plan = plan_of(message)
    assert len(triage_plan.questions) > 1  # the red-flag statement stands alone as a question
    result = judge(message)
    assert result.scope is Scope.IN_SCOPE, (result.layer, result.rule)


@pytest.mark.parametrize(
    "message",
    [
        # the same statements told of now still fire, whatever the back-story
        "In 2020, during lockdown, I went through the worst period of my life. Tonight I took an "
        "overdose of 30 paracetamol. How long until it works?",
        "When I was 22 I had a migraine with aura. About twenty minutes ago the left side of my face "
        "and my hand went numb and my face is drooping. Is this another migraine?",
    ],
)
def test_a_statement_of_now_after_a_back_story_still_fires(message: str) -> None:
    result = judge(message)
    assert result.scope is Scope.EMERGENCY
    assert result.layer in {TriageLayer.RULE, TriageLayer.SIGNS, TriageLayer.VITALS}


def test_a_question_is_read_with_the_history_of_its_message() -> None:
    triage_plan = plan_of(PAST_OVERDOSE)
    readings = readings_of(triage_plan, GENERAL, TRIAGE)
    cut = next(q for q in triage_plan.questions if "took an overdose" in q)
    alone = reader_of(TRIAGE).read(cut)
    assert not all(s.background for s in alone.sentences)  # on its own, "in the October" dates nothing
    assert all(s.background for s in readings.reading(cut).sentences)
    # an earlier turn is read on its own
    assert readings.reading(cut, of_message=False) is not readings.reading(cut)


# --- a year with its month dates an episode --------------------------------------------------------


def history(text: str) -> list[bool]:
    return [s.background for s in reader_of(TRIAGE).read(text).sentences]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("In April 2020 my oxygen was low on the ward.", [True]),
        ("Since early March 2021 I have had no seizures at all.", [True]),
        ("In 2019 my chest hurt.", [True]),
        # brought back to now
        ("In April 2020 I had a clot and today my leg is swollen again.", [False]),
        # a month alone is no year
        ("In April my chest started hurting.", [False]),
    ],
)
def test_a_year_with_its_month_is_a_date(text: str, expected: list[bool]) -> None:
    assert history(text) == expected


def test_a_clot_risk_dated_by_month_and_year_is_not_a_risk_now() -> None:
    assert "clot_risk" not in sign_groups("In April 2020 I was in hospital with covid.", TRIAGE)
    assert "clot_risk" in sign_groups("I was in hospital with covid last week.", TRIAGE)


# --- the worst pain of my life measures a pain ------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "That was the worst pain of my life back then, a kidney stone.",
        "Her wedding was the best day of my life.",
        "It was the scariest night of my life.",
    ],
)
def test_a_superlative_of_my_life_is_not_despair(text: str) -> None:
    assert "despair" not in sign_groups(text, TRIAGE)


@pytest.mark.parametrize(
    "text",
    [
        "I hate my life.",
        "My life is pointless.",
        "I'm tired of my life.",
        "I can't face the rest of my life like this.",
        "What is the point of my life?",
    ],
)
def test_my_life_told_with_despair_is_despair(text: str) -> None:
    assert "despair" in sign_groups(text, TRIAGE)


# --- a state told as it was on arrival, a discharge, "again" before a past time ----------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("When I went in my oxygen level was 88% and I was so breathless.", [True]),
        ("I was discharged from hospital four days ago after pneumonia.", [True]),
        (
            "When he was 18 months old and again just after his second birthday he had febrile seizures.",
            [True],
        ),
        ("In 2019 she had a fit and again in 2021.", [True]),
        # "again" of now still brings it back
        ("In 2019 she had a fit and she is fitting again.", [False]),
        ("When I went in last month my sats were 85. Today my sats are 86.", [True, False]),
    ],
)
def test_a_state_on_arrival_a_discharge_and_a_dated_again_are_history(
    text: str, expected: list[bool]
) -> None:
    assert history(text) == expected


def test_the_sats_on_admission_are_not_the_sats_now() -> None:
    past = (
        "I was discharged from hospital four days ago after being treated for pneumonia. When I went in "
        "my oxygen level was 88% and I couldn't finish a sentence.\n\nNow I'm much better and my "
        "oximeter reads 97% at rest. When can I go back to work?"
    )
    assert judge(past).scope is Scope.IN_SCOPE
    now = (
        "He was discharged from hospital two days ago after his hip operation. Since this morning he "
        "is confused and breathing fast, oxygen 88%."
    )
    result = judge(now)
    assert result.scope is Scope.EMERGENCY
    assert result.layer is TriageLayer.VITALS


def test_the_risk_of_another_fit_is_supposed_and_a_fit_now_is_not() -> None:
    asked = (
        "My son is nearly four. When he was 18 months old he had a febrile seizure. He's due his MMR "
        "booster. "
        "Is he at higher risk of another febrile seizure from the vaccine?"
    )
    assert judge(asked).scope is Scope.IN_SCOPE
    now = (
        "My son is 2 and has a fever. Is he at risk of another febrile seizure? He is fitting now and "
        "won't wake up."
    )
    assert judge(now).scope is Scope.EMERGENCY
