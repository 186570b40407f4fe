"""Reassurance said of now, local numbness, and questions beside a report (#31 item 2, seventh pass):
each rule both ways. No model is loaded: the semantic layers' read is given (``confident``)."""

from __future__ import annotations

import dataclasses
from typing import Literal

import pytest

from gateway.domain import Scope, Triage, TriageLayer
from gateway.errors import ConfigurationError, InvalidValue
from gateway.triage.evidence_policy import ReassurancePolicy, TermGroup
from gateway.triage.policy import TriagePolicy
from gateway.triage.semantic import SemanticScore
from tests.support.shipped_triage import GENERAL, TRIAGE
from tests.support.triage import confident_read, decide_message, reader_of, without_unbound_rule

READER = reader_of(TRIAGE)


def confident(near: str) -> SemanticScore:
    return confident_read(TRIAGE, near)


def judge(message: str, near: str, policy: TriagePolicy = TRIAGE) -> Triage:
    return decide_message(message, GENERAL, policy, confident(near))


def reassurance_off() -> TriagePolicy:
    evidence = TRIAGE.evidence
    off = dataclasses.replace(evidence.reassurance, enabled=False)
    base = without_unbound_rule(TRIAGE)  # which would give the note too (test_triage_unbound.py)
    return dataclasses.replace(base, evidence=dataclasses.replace(base.evidence, reassurance=off))


@pytest.mark.parametrize(
    ("message", "near"),
    [
        (
            "my 5 year old has had loose poos for a day, no blood, drinking and weeing well",
            "child_dehydration",
        ),
        (
            "my 3 year old has a temp of 38.4 but he's drinking plenty and running round the house",
            "sick_infant",
        ),
        (
            "sharp twinge by one rib when I press on it after moving furniture, breathing is fine",
            "blood_clot",
        ),
        ("had cystitis for 3 days, now a fever and an ache in my back, still eating", "acute_abdomen"),
    ],
)
def test_what_is_well_now_keeps_a_semantic_emergency_from_deciding_alone(message: str, near: str) -> None:
    result = judge(message, near)
    assert result.scope is Scope.IN_SCOPE
    assert result.questions[0].rule == near  # answered with the red flag's safety note
    assert judge(message, near, reassurance_off()).scope is Scope.EMERGENCY


@pytest.mark.parametrize(
    ("message", "near"),
    [
        # a sign of severity, trajectory or onset said of now: the semantic read stands
        (
            "my son has had the runs all day and is drinking well but now he's floppy and hard to wake",
            "child_dehydration",
        ),
        ("he's still eating but the pain in his tummy is getting worse by the hour", "acute_abdomen"),
        ("breathing is fine but I suddenly can't see out of my left eye", "sudden_vision_loss"),
        # a negated well-sign is no reassurance
        ("my baby isn't feeding well and has a temperature", "sick_infant"),
        ("she's not drinking well and hasn't weed since this morning", "child_dehydration"),
    ],
)
def test_acuity_or_a_negated_well_sign_keeps_the_emergency(message: str, near: str) -> None:
    assert judge(message, near).scope is Scope.EMERGENCY


def test_thoughts_of_suicide_are_never_calmed_by_reassurance() -> None:
    message = "I'm eating and drinking fine, no one would notice if I was gone"
    assert judge(message, "suicidal_intent").scope is Scope.EMERGENCY


def test_the_rule_layers_are_not_calmed() -> None:
    # escalated signs decide without the semantic layers: reassurance does not apply to them
    result = judge(
        "crushing chest pain spreading to my arm and I'm sweating, still eating though", "chest_pain"
    )
    assert result.scope is Scope.EMERGENCY
    assert result.layer not in (TriageLayer.EXEMPLAR, TriageLayer.CLASSIFIER)


@pytest.mark.parametrize(
    "message",
    [
        "The stitches came out last week and the scar feels numb along one side.",
        "since my c-section the skin above the scar feels numb on the left side",
        "my left hand goes numb when I sleep on it",
    ],
)
def test_local_numbness_is_not_a_stroke_sign(message: str) -> None:
    groups = {h.group for h in READER.read(message).hits}
    assert "one_side_weak" not in groups


@pytest.mark.parametrize(
    "message",
    [
        "I've felt numb down my left side for about an hour",
        "his right arm has gone numb and heavy",
        "after his operation his left arm went weak",
    ],
)
def test_one_sided_numbness_and_weakness_are_still_stroke_signs(message: str) -> None:
    groups = {h.group for h in READER.read(message).hits}
    assert "one_side_weak" in groups


def test_a_closing_question_in_its_own_paragraph_stays_a_question() -> None:
    text = (
        "My son had a febrile seizure last year. He's 3 now and has a cold today.\n\n"
        "Does bringing a fever down prevent another fit?"
    )
    reading = READER.read(text)
    assert reading.sentences[-1].asked
    last = len(reading.sentences) - 1
    assert all(h.asked for h in reading.hits if h.sentence == last)  # "another fit" is asked about


def test_a_question_beside_a_report_of_its_paragraph_is_about_it() -> None:
    reading = READER.read("I took 40 of my paracetamol. How long until it gets dangerous?")
    assert not reading.sentences[-1].asked


def test_a_worry_alone_does_not_make_a_question_a_report() -> None:
    reading = READER.read("I'm so anxious about it. Does a fever cause a fit in toddlers?")
    assert reading.sentences[-1].asked


def test_reassurance_groups_and_red_flags_are_validated() -> None:
    evidence = TRIAGE.evidence
    with pytest.raises((InvalidValue, ConfigurationError)):
        dataclasses.replace(evidence, reassurance=ReassurancePolicy(enabled=True, well=("no_such_group",)))
    with pytest.raises((InvalidValue, ConfigurationError)):
        dataclasses.replace(evidence, reassurance=ReassurancePolicy(enabled=True, exempt=("no_such_flag",)))
    with pytest.raises((InvalidValue, ConfigurationError)):
        TermGroup(words=("numb",), unless=("(unclosed",))


def reassurance_on(applies_to: Literal["semantic", "unbound"]) -> TriagePolicy:
    evidence = TRIAGE.evidence
    # acuity_denied off: it calms a raise whatever applies_to says (test_triage_acuity_denied.py)
    mode = dataclasses.replace(evidence.reassurance, enabled=True, applies_to=applies_to, acuity_denied=False)
    return dataclasses.replace(TRIAGE, evidence=dataclasses.replace(evidence, reassurance=mode))


def test_a_red_flag_whose_own_signs_are_present_is_calmed_only_in_semantic_mode() -> None:
    message = "my son hit his head on the table, he cried straight away and hasn't been sick"
    assert judge(message, "head_injury", reassurance_on("unbound")).scope is Scope.EMERGENCY
    result = judge(message, "head_injury", reassurance_on("semantic"))
    assert result.scope is Scope.IN_SCOPE
    assert result.questions[0].rule == "head_injury"


def test_the_shipped_mode_binds_reassurance_to_red_flags_raised_without_their_signs() -> None:
    assert TRIAGE.evidence.reassurance.enabled
    assert TRIAGE.evidence.reassurance.applies_to == "unbound"
