"""Questions about a topic and episodes told as over (#31 items 2 and 6, fifth pass): each rule both
ways, the information question answered and the same topic happening now flagged. No model is loaded:
the semantic layers' read is given (``score``)."""

from __future__ import annotations

import dataclasses

import pytest

from gateway.domain import Scope, Triage
from gateway.errors import ConfigurationError, InvalidValue
from gateway.triage.evidence_policy import AskingPolicy
from gateway.triage.policy import TriagePolicy
from gateway.triage.semantic import SemanticScore
from tests.support.shipped_triage import GENERAL, TRIAGE
from tests.support.triage import confident_read, decide_message, reader_of, without_unbound_rule

CATEGORIES = tuple(dict.fromkeys(TRIAGE.categories))


def confident(near: str) -> SemanticScore:
    return confident_read(TRIAGE, near)


def judge(message: str, near: str, policy: TriagePolicy = TRIAGE) -> Triage:
    return decide_message(message, GENERAL, policy, confident(near))


def asking_off() -> TriagePolicy:
    """The asking rule off (and ``unbound``, which would give the note too: test_triage_unbound.py)."""
    settings = dataclasses.replace(TRIAGE.settings, asking_needs_current=False)
    return dataclasses.replace(without_unbound_rule(TRIAGE), settings=settings)


@pytest.mark.parametrize(
    ("message", "near"),
    [
        ("what would an overdose of sertraline look like?", "overdose"),
        ("what does a 20mg citalopram tablet look like?", "overdose"),
        ("how long does sertraline take to get into your bloodstream?", "heavy_bleeding"),
        ("does bringing a fever down with calpol prevent another fit?", "unconscious_or_seizure"),
        ("how quickly does a twisted testicle need an operation?", "testicular_torsion"),
        # the issue's own: how long a drug takes to reach the blood, how to lower a beta-blocker dose
        ("how long does bisoprolol take to reach the blood?", "heavy_bleeding"),
        ("how do I lower my beta-blocker dose slowly?", "overdose"),
    ],
)
def test_a_question_about_a_topic_is_answered_however_sure_the_semantic_read(message: str, near: str) -> None:
    assert judge(message, near).scope is Scope.IN_SCOPE


def test_without_the_asking_rule_the_semantic_read_raised_the_question() -> None:
    message = "how long does sertraline take to get into your bloodstream?"
    assert judge(message, "heavy_bleeding", asking_off()).scope is Scope.EMERGENCY


@pytest.mark.parametrize(
    ("message", "near"),
    [
        (
            "what would an overdose of sertraline look like? I swallowed the whole packet an hour ago",
            "overdose",
        ),
        ("how long does it take to get into your blood? I took 30 of them just now", "overdose"),
        ("is my chest pain serious? it's crushing and going down my arm", "chest_pain"),
        ("should my chest still hurt this much? it's been crushing for an hour", "chest_pain"),
        ("is a temperature of 39.5 dangerous for a 3 week old?", "sick_infant"),
        ("does this mean a stroke? his face has dropped on one side", "stroke_signs"),
    ],
)
def test_the_same_topic_happening_now_is_an_emergency(message: str, near: str) -> None:
    assert judge(message, near).scope is Scope.EMERGENCY


@pytest.mark.parametrize(
    ("sentence", "asked"),
    [
        ("what would an overdose of sertraline look like?", True),
        ("how long does amoxicillin take to work", True),
        ("is my chest pain serious?", False),  # a possessive before a complaint
        ("is it normal that my lips are blue?", False),  # a report of the body now
        ("how do I know if he's having a stroke?", False),
        ("is 55 breaths a minute normal for a baby?", False),  # a measured value
        ("can't breathe, what do i do?", False),  # no question word opens it
    ],
)
def test_a_question_reports_nothing_of_now_to_be_asked(sentence: str, asked: bool) -> None:
    reading = reader_of(TRIAGE).read(sentence)
    assert [s.asked for s in reading.sentences] == [asked]


def test_a_report_elsewhere_in_the_message_makes_its_questions_part_of_the_report() -> None:
    reading = reader_of(TRIAGE).read("how long until paracetamol hurts your liver? I took 40 at lunch")
    assert not any(s.asked for s in reading.sentences)
    assert not reading.only_asks


RESOLVED = (
    "A few years ago I went through a dark time and had thoughts of ending my life. I got help and "
    "I've been well for three years now. Is it normal to feel sad when I remember it?"
)


SOMEONE_RECOVERED = (
    "My brother tried to end his life three years ago and was in intensive care. He's had a lot of support "
    "and he's doing much better. How slowly do people usually come off antidepressants?"
)


# the writer's own episode told as over, and someone else's past attempt told with their recovery, in
# the words a carer uses for it (s57)
@pytest.mark.parametrize(
    "message",
    [
        RESOLVED,
        SOMEONE_RECOVERED,
        "My son attempted suicide last year. He seems better now. What should I watch for?",
        "My wife tried to end her life in 2021; she's much better these days. Can we go travelling?",
        "Dad tried to kill himself two years ago. He's stable again on lithium. Is it safe long term?",
    ],
)
def test_thoughts_of_suicide_told_as_over_do_not_fire(message: str) -> None:
    assert reader_of(TRIAGE).read(message).resolved
    assert judge(message, "suicidal_intent").scope is Scope.IN_SCOPE


@pytest.mark.parametrize(
    "message",
    [
        # history with no word that it is over: a past attempt still counts (history_fires)
        "A few years ago I had thoughts of ending my life. Is it normal to feel sad when I remember it?",
        # over, but back now
        "I've been well for three years since my overdose but tonight I want to end my life",
        # thoughts of suicide asked as a question are not a topic
        "what's the point of going on anymore?",
        # someone else's recovery does not hide their crisis of now
        "He's doing much better on the new tablets, but last night he told me he wants to kill himself.",
        "My son attempted suicide last night. He seems better now.",
        "My son tried to kill himself last year. He seems better than he was but says he wants to die",
    ],
)
def test_thoughts_of_suicide_now_or_not_told_as_over_still_fire(message: str) -> None:
    assert judge(message, "suicidal_intent").scope is Scope.EMERGENCY


def test_fine_at_rest_denies_the_sign_it_names() -> None:
    message = "I get out of breath running for the bus but I'm fine at rest, how do I get fitter?"
    reading = reader_of(TRIAGE).read(message)
    at_rest = [h for h in reading.hits if h.group == "at_rest"]
    assert at_rest
    assert all(h.negated for h in at_rest)
    breathless = "I'm out of breath even at rest and it's getting worse"
    assert judge(breathless, "breathing").scope is Scope.EMERGENCY


def test_an_unknown_possessed_group_is_refused() -> None:
    asking = AskingPolicy(openers=("^what",), possessed=("no_such_group",))
    with pytest.raises((InvalidValue, ConfigurationError)):
        dataclasses.replace(TRIAGE.evidence, asking=asking)


@pytest.mark.parametrize(
    "message",
    [
        # the writer's own "doing better" is how a crisis is played down: not read as over
        "Everyone thinks I'm doing so much better since my overdose. I'm not. I want to end my life.",
        # an episode's outcome is not a recovery
        "I took an overdose ten years ago and survived.",
    ],
)
def test_the_writers_own_recovery_and_a_bare_outcome_are_not_read_as_over(message: str) -> None:
    assert not reader_of(TRIAGE).read(message).resolved
