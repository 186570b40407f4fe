"""Everyday requests whose words only look like a risk to life open no gate (#31 items 1 and 2,
nonclin): speech to the assistant, a question about what it is, a thing lost, a service let go, a
game's character. The same words said of a person's life or body are still read."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from tests.support.shipped_triage import GENERAL, TRIAGE, suicide_read
from tests.support.triage import decide_message, sign_groups


@pytest.mark.parametrize(
    ("message", "emergency"),
    [
        ("i don't want you to speak any more for now", False),
        ("are you a live being", False),
        ("i believe it looks like my luggage has disappeared", False),
        ("i actually don't want this anymore, please abort", False),
        ("cancel the subscription, I don't need it any more", False),
        ("I don't want to live any more", True),
        ("I just want to disappear, nobody would miss me", True),
        ("I don't want this anymore, I want it all to end", True),
    ],
)
def test_words_of_a_life_open_the_gate_and_the_same_words_of_a_thing_do_not(
    message: str, emergency: bool
) -> None:
    result = decide_message(message, GENERAL, TRIAGE, suicide_read())
    assert (result.scope is Scope.EMERGENCY) is emergency
    if emergency:
        assert result.rule == "suicidal_intent"


def test_a_game_character_bleeding_is_no_sign_but_a_person_is() -> None:
    assert "bleeding" not in sign_groups("my character keeps bleeding out in Elden Ring", TRIAGE)
    assert "bleeding" in sign_groups("my brother keeps bleeding from a cut on his arm", TRIAGE)
