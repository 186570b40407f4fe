"""Everyday requests whose words only look like a risk to life open no gate (#31 items 1 and 2,
nonclin): speech to the assistant, a question about what it is, a thing lost, a service let go, a
game's character. The same words said of a person's life or body are still read."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.domain import Scope
from gateway.policies import load_policy
from gateway.triage.semantic import SemanticScore
from tests.support.triage import decide_message, semantic_read, sign_groups

GENERAL = load_policy(Path(__file__).resolve().parents[2] / "policies", "general")


def suicide_read() -> SemanticScore:
    """A classifier read of thoughts of suicide below any confident bar, no exemplar firing."""
    return semantic_read(
        GENERAL.triage, near="suicidal_intent", similarity=0.32, emergency=0.66, classifier=True
    )


@pytest.mark.parametrize(
    "message",
    [
        "i don't want you to speak any more for now",
        "are you a live being",
        "i believe it looks like my luggage has disappeared",
        "i actually don't want this anymore, please abort",
        "cancel the subscription, I don't need it any more",
    ],
)
def test_speech_to_the_assistant_or_a_lost_thing_opens_no_gate(message: str) -> None:
    result = decide_message(message, GENERAL.context, GENERAL.triage, suicide_read())
    assert result.scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "I don't want to live any more",
        "I just want to disappear, nobody would miss me",
        "I don't want this anymore, I want it all to end",
    ],
)
def test_the_same_words_of_a_life_still_open_it(message: str) -> None:
    result = decide_message(message, GENERAL.context, GENERAL.triage, suicide_read())
    assert result.scope is Scope.EMERGENCY
    assert result.rule == "suicidal_intent"


def test_a_game_character_bleeding_is_no_sign_but_a_person_is() -> None:
    assert "bleeding" not in sign_groups("my character keeps bleeding out in Elden Ring", GENERAL.triage)
    assert "bleeding" in sign_groups("my brother keeps bleeding from a cut on his arm", GENERAL.triage)
