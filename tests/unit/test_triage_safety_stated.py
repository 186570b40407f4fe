"""A person who says they are safe now ("not thinking of hurting myself", "I'm not going to do anything
stupid", "no thoughts of harming myself") is not given the emergency message on a read of despair alone:
the semantic layers may not raise thoughts of suicide then, and the message is answered with its safety
note and crisis lines (#31, s55 crisis probe). A wish to die, a plan, a means or a farewell told beside
the statement outweighs it. The statement is read once (``evidence.yaml`` ``safety_stated``, by
``suicidal_intent.safe_when``) for every layer, the contexts' rules included (s57)."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from tests.support.shipped_triage import POLICY, judge, suicide_read
from tests.support.triage import flagged_rule


@pytest.mark.parametrize(
    ("message", "statement"),
    [
        (
            "I haven't slept for days and I cry a lot. Not thinking of hurting myself, I just can't cope.",
            "Not thinking of hurting myself, ",
        ),
        (
            "I feel empty since the divorce but I have no thoughts of harming myself. Should I see my GP?",
            " but I have no thoughts of harming myself",
        ),
        (
            "I feel so low and hopeless. I'm not going to do anything stupid, I just need someone to talk to",
            "I'm not going to do anything stupid, ",
        ),
        ("low for weeks, some dark thoughts but no plan. who do I call today?", " but no plan"),
    ],
)
def test_a_statement_of_safety_keeps_a_read_of_despair_to_the_safety_note(
    message: str, statement: str
) -> None:
    triage = judge(message, suicide_read())
    assert triage.scope is Scope.IN_SCOPE
    assert any(q.rule == "suicidal_intent" for q in triage.questions)  # the crisis lines are shown
    assert judge(message.replace(statement, " "), suicide_read()).scope is Scope.EMERGENCY  # without it


@pytest.mark.parametrize(
    "message",
    [
        "I promise I won't hurt myself, I just feel flat all the time",
        "I'm not going to kill myself, I just feel empty.",
        "I have no plans to end my life, I just can't sleep.",
        "Patient denies any thoughts of wanting to die; low mood for a month, poor sleep.",
        # the act referred to by "it" is no wish to die of now (a taper done properly)
        "No thoughts of harming myself. I stopped citalopram too fast last time; I want to do it properly.",
    ],
)
def test_the_rules_read_the_same_statement_of_safety_as_the_semantic_layers(message: str) -> None:
    """The contexts' rule fires on the act's own words ("hurt myself", "end my life"); the statement
    that holds them denies the rule as it denies the classifier's raise, and the safety note is shown."""
    assert flagged_rule(message, POLICY) is None
    for read in (suicide_read(), None):  # the classifier reading thoughts of suicide, or nothing
        triage = judge(message, read)
        assert triage.scope is Scope.IN_SCOPE
        assert any(q.rule == "suicidal_intent" for q in triage.questions)  # its note, crisis lines


@pytest.mark.parametrize(
    "message",
    [
        "I'm not going to hurt myself, I'm going to do it tonight when everyone's asleep",
        "I won't hurt myself. I won't be here tomorrow anyway.",
        # a "not" before the act that is no promise
        "every night is a fight not to hurt myself",
        "I didn't kill myself last night but I will tonight",
        "no thoughts of harming myself, I just want to die",
        "I'm not going to do anything stupid, the tablets are lined up on my desk, that's all",
        "I'm safe, I've just stockpiled my pills in case",
    ],
)
def test_a_wish_to_die_a_plan_or_a_means_outweighs_it(message: str) -> None:
    assert judge(message, suicide_read()).scope is Scope.EMERGENCY


@pytest.mark.parametrize(
    ("message", "emergency"),
    [
        ("what happens if you take 40 paracetamol? I already took them, about 2 hours ago", True),
        ("what would happen if someone swallowed a whole box of sertraline. she's already taken it", True),
        # still a question: nothing was taken
        ("what happens if you take 40 paracetamol? asking for a pharmacology quiz", False),
        ("what happens if I take two ibuprofen with my paracetamol? I already took the paracetamol", False),
    ],
)
def test_a_supposition_told_as_done_is_a_report(message: str, emergency: bool) -> None:
    """``asking.confirms``: what the message supposed, told as done, makes its supposing clause a report."""
    assert (judge(message).scope is Scope.EMERGENCY) is emergency


@pytest.mark.parametrize(
    ("message", "emergency"),
    [
        ("My grandad died by suicide when I was small. How do I explain it to my 9 year old?", False),
        ("I'm writing a play where the mum dies by suicide offstage. How do I write it with care?", False),
        ("our school is running a suicide prevention week, what should the leaflet say?", False),
        # the clause beside the death still tells the speaker's own wish
        ("my sister died by suicide and now I want to die too", True),
        ("since my friend's suicide I can't stop thinking about ending my life", True),
    ],
)
def test_someones_death_by_suicide_is_no_sign_of_the_speakers_risk(message: str, emergency: bool) -> None:
    """``unless`` on suicide_words, suicide_core and risk_to_life: a read of thoughts of suicide has no
    sign or gate to stand on in a death told as a death; the clause beside it is read on its own."""
    assert (judge(message, suicide_read()).scope is Scope.EMERGENCY) is emergency
