"""Pseudo-negations and residual deficits dated the clause before (#31 item 2, pseudoneg pass): a negative
form that tells a sign is not a denial, real denials stay denials, and a residual clause with no time of
its own reads the dated clause before it while a change of now still fires."""

from __future__ import annotations

import dataclasses

import pytest

from gateway.errors import ConfigurationError, InvalidValue
from gateway.triage.evidence_policy import EpisodePolicy
from gateway.triage.policy import NegationPolicy
from gateway.triage.tense import Time
from gateway.validation import validate
from tests.support.shipped_triage import POLICY, TRIAGE, sentence_times
from tests.support.triage import flagged_rule, reader_of, sign_groups


@pytest.mark.parametrize(
    ("message", "group"),
    [
        ("I haven't been able to catch my breath since this morning", "breathing_trouble"),
        ("he hasn't been able to breathe properly since lunch", "breathing_trouble"),
        ("my dad is unable to catch his breath", "breathing_trouble"),
        ("I've not been able to keep anything down for two days", "dehydration"),
        ("no one can wake him up", "unresponsive"),
        ("nothing stops the bleeding", "bleeding_heavy"),
        ("his leg has never been this swollen", "leg_swelling"),
        ("I have never had chest pain like this", "chest_discomfort"),
    ],
)
def test_a_negative_form_that_tells_a_sign_keeps_it(message: str, group: str) -> None:
    assert group in sign_groups(message, TRIAGE, of_now=True)


@pytest.mark.parametrize(
    ("message", "group"),
    [
        ("no chest pain today", "chest_discomfort"),
        ("he's never had a seizure in his life", "seizure"),
        ("I'm not short of breath at all", "breathing_trouble"),
        ("never had chest pain, just heartburn", "chest_discomfort"),
        ("my leg has never been swollen", "leg_swelling"),
    ],
)
def test_a_real_denial_stays_a_denial(message: str, group: str) -> None:
    assert group not in sign_groups(message, TRIAGE, of_now=True)


def test_the_words_as_written_still_count_beside_their_other_form() -> None:
    # "nobody can" is read as "can't" and as written: no group of the written words is lost
    assert {"despair", "unresponsive"} <= sign_groups("nobody can get him to respond", TRIAGE)


def test_a_pseudo_negated_emergency_fires_on_the_rules() -> None:
    assert flagged_rule("no one can wake him up, he's floppy", POLICY) is not None
    assert flagged_rule("nothing stops the bleeding from my arm, it's soaked the towel", POLICY) is not None


def test_a_residual_clause_reads_the_dated_clause_before_it() -> None:
    assert sentence_times("I had a stroke in 2021. My arm is still weak. Can I drive?")[:2] == [
        Time.HISTORY,
        Time.HISTORY,
    ]
    assert flagged_rule("Gran had a big stroke last year. She still can't lift her left arm.", POLICY) is None


def test_a_residual_clause_reads_over_a_blank_line_and_over_other_residual_clauses() -> None:
    times = sentence_times("Had a stroke two years ago.\n\nMy arm is still weak. My speech is still slow.")
    assert times == [Time.HISTORY, Time.HISTORY, Time.HISTORY]


def test_still_with_no_dated_event_before_stays_of_now() -> None:
    assert sentence_times("My arm is still weak.") == [Time.NOW]
    assert sentence_times("I have a cold. My arm is still weak.")[1] is Time.NOW


def test_a_change_of_now_still_wins() -> None:
    assert (
        flagged_rule("He had a stroke 3 years ago. This morning his face dropped.", POLICY) == "stroke_signs"
    )
    times = sentence_times("I had a stroke in 2021. This morning I felt odd. My arm is still weak.")
    assert times[2] is Time.NOW  # a clause of now between: the residual clause does not reach the date
    # a change of now set against it ("But ...") keeps the residual clause of now, as on main
    message = "I had a stroke in 2021. My arm is still weak. But in the last hour I can't lift it at all."
    assert sentence_times(message) == [Time.HISTORY, Time.NOW, Time.NOW]
    message = (
        "I had a stroke in 2021. My arm is still weak. In the last hour I can't lift my arm and I'm slurring."
    )
    assert flagged_rule(message, POLICY) == "stroke_signs"


def test_residual_reach_zero_reads_the_residual_clause_alone() -> None:
    episode = dataclasses.replace(TRIAGE.evidence.episode, residual_reach=0)
    evidence = dataclasses.replace(TRIAGE.evidence, episode=episode)
    policy = dataclasses.replace(TRIAGE, evidence=evidence)

    times = [
        s.time for s in reader_of(policy).read("I had a stroke in 2021. My arm is still weak.").sentences
    ]
    assert times == [Time.HISTORY, Time.NOW]


def test_bad_settings_are_named() -> None:
    with pytest.raises(ConfigurationError, match="residual_reach: must be <= 5, got 9"):
        validate(EpisodePolicy, {"residual_reach": 9}, "evidence.yaml")
    with pytest.raises(InvalidValue, match="forms"):
        NegationPolicy(forms={"can't": ("(unclosed",)})


ANCHORED = (
    "My dad had a stroke two years ago, at 71. He was in hospital for six weeks. He talks normally again "
    "and he can walk with a stick. His right hand has stayed weak since the stroke. "
    "Is private physio worth it?"
)


def test_a_residual_clause_naming_its_event_reads_back_to_where_that_event_is_dated() -> None:
    # three clauses back, past a recovery: beyond residual_reach, read because the clause names the stroke
    times = sentence_times(ANCHORED)
    assert times[3] is Time.HISTORY
    assert flagged_rule(ANCHORED, POLICY) is None


def test_an_anchored_residual_clause_needs_that_event_dated() -> None:
    # the dated clause names another event: beyond residual_reach the anchor finds nothing, so of now
    message = (
        "I broke my wrist in 2019. It healed well. I play tennis again. I swim every week. "
        "My arm has been weak since the stroke."
    )
    assert sentence_times(message)[4] is Time.NOW


def test_a_change_of_now_between_still_stops_an_anchored_reading() -> None:
    message = (
        "My mum had a stroke in 2022. She is walking again. This morning her face dropped. "
        "Her arm has been weak since the stroke."
    )
    assert sentence_times(message)[3] is Time.NOW
    assert flagged_rule(message, POLICY) == "stroke_signs"


def test_a_regained_function_is_no_change_of_now_but_a_lost_one_is() -> None:
    recovered = "Had a stroke in 2020. She's walking again. Her arm is still weak."
    assert sentence_times(recovered)[2] is Time.HISTORY
    lost = "Had a stroke in 2020. She can't walk again. Her arm is still weak."
    assert sentence_times(lost)[2] is Time.NOW
    again = "Had a stroke in 2020. Her face is drooping again. Her arm is still weak."
    assert sentence_times(again)[2] is Time.NOW


def test_only_a_residual_pattern_naming_its_event_anchors() -> None:
    """The anchor is the ``residual`` pattern's group ``event``: without the group, the same clause
    reads back only ``residual_reach`` clauses, and the stroke three clauses back is not found."""
    episode = TRIAGE.evidence.episode
    unnamed = tuple(p.replace("?P<event>", "") for p in episode.residual)
    assert unnamed != episode.residual
    policy = dataclasses.replace(
        TRIAGE,
        evidence=dataclasses.replace(TRIAGE.evidence, episode=dataclasses.replace(episode, residual=unnamed)),
    )
    assert [s.time for s in reader_of(policy).read(ANCHORED).sentences][3] is Time.NOW
    assert sentence_times(ANCHORED)[3] is Time.HISTORY
