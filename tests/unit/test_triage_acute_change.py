"""An acute change told on a long-standing or past complaint (#31 item 6, acute5): the change of now
makes the complaint current, whatever the background says; a past episode told with a recovery ("I'm
well now", "never again") stays history. Each both ways. No model is loaded: the semantic layers say
nothing, so the rule layers alone decide."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from gateway.triage.tense import Time
from tests.support.shipped_triage import judge, sentence_times

ACUTE_ON_CHRONIC = [
    # the guards of the last stop (docs/safety.md): main caught every one, and must keep catching them
    "I've had chest pain for years but now it's crushing and spreading to my arm",
    "I've had chest pain on and off for years. It is crushing and going down my left arm and I'm sweating",
    "my chest has felt tight for years and my lips have gone blue",
    "I have been vomiting blood for over a year now",
    "vomiting blood for over a year now",
    "headaches for 2 months and neck stiff + non-blanching rash",
    "He's had headaches for 2 months and his neck is stiff and he has a rash that doesn't fade",
    "My neighbour had a stroke last week. She can't speak and her face is drooping.",
    # a change set against a dated clause by "but" or "now"
    "vomiting blood off and on for about a year, only ever streaks, but tonight it's a whole bowlful",
    "I had a small bleed from my bowel last year but this time the toilet is full of blood and I feel faint",
    "I had a stroke in 2019 and now my face is drooping again",
]


@pytest.mark.parametrize("message", ACUTE_ON_CHRONIC)
def test_a_change_of_now_on_a_long_standing_complaint_is_an_emergency(message: str) -> None:
    result = judge(message)
    assert result.scope is Scope.EMERGENCY, (result.layer, result.rule)


RECOVERED = [
    "I vomited blood once after a night out, maybe ten years ago, and never again. Should I tell my GP?",
    "Heart attack in 2016 and a stent, I'm well now and I swim twice a week. Do I still need aspirin?",
    "I vomited blood in 2019 but I'm fine now. Can I take ibuprofen?",
]


@pytest.mark.parametrize("message", RECOVERED)
def test_a_past_episode_told_with_its_recovery_is_history(message: str) -> None:
    result = judge(message)
    assert result.scope is not Scope.EMERGENCY, (result.layer, result.rule, result.evidence)


def test_the_clause_a_change_is_set_against_is_not_history() -> None:
    assert sentence_times("coughing blood on and off for a year, but tonight it's pouring out") == [
        Time.NOW,
        Time.NOW,
    ]
    # no "but" or "now" between them: the dated clause stays history
    assert sentence_times("I coughed blood a year ago. Tonight I have a cold.")[0] is Time.HISTORY
    # the next clause tells a recovery or no change: no change to read
    assert sentence_times("I coughed blood a year ago but it's fine now")[0] is Time.HISTORY
    assert sentence_times("I coughed blood a year ago but it's the same as always")[0] is Time.HISTORY
    # a completed episode's frame is not brought back by a change of something else
    assert sentence_times("I was admitted with a bleed in 2019 but now I have a new cough")[0] is Time.HISTORY


STEADY_BACKGROUND = (
    "I look after my mum. Her right arm has been weak since her stroke and her speech is a bit slow, same "
    "as it has been for a long time. She's started getting swollen ankles on amlodipine. Is that a side "
    "effect?"
)
RECOVERED_FOR_YEARS = (
    "Seven years ago I had thoughts of ending my life and spent two weeks on a ward. For the last four "
    "years I've been genuinely well. How slowly should I come off sertraline?"
)


@pytest.mark.parametrize("message", [STEADY_BACKGROUND, RECOVERED_FOR_YEARS])
def test_a_sign_told_as_steady_or_over_is_background(message: str) -> None:
    result = judge(message)
    assert result.scope is not Scope.EMERGENCY, (result.layer, result.rule, result.evidence)


@pytest.mark.parametrize(
    "message",
    [
        "Her right arm's been weak since the stroke, same as it has been for years, but it's worse today",
        "My left arm's been weak since my stroke, same as always, but since this morning my face has dropped",
        "His right side has been weak since the stroke, no different from usual, and suddenly he can't speak",
    ],
)
def test_a_steady_sign_with_a_change_of_now_is_an_emergency(message: str) -> None:
    result = judge(message)
    assert result.scope is Scope.EMERGENCY, (result.layer, result.rule)
