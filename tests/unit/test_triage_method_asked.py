"""A way to die sought by its ease or pain, or a method of suicide asked whether it hurts, is thoughts of
suicide (#31, s59): researching methods is a warning sign in the Samaritans' and NICE NG225's lists, so
both contexts' rule answer it with the crisis lines. Each both ways: a dye for the hair, a stretch, a
history question, a video game and pain in labour do not fire. No model is loaded: only the rule layers
decide."""

from __future__ import annotations

import pytest

from tests.support.shipped_triage import CATARACT, POLICY
from tests.support.triage import flagged_rule


@pytest.mark.parametrize(
    "message",
    [
        "is hanging painful",
        "how painful is hanging",
        "is overdosing painful?",
        "what is the most painless way to kill yourself",
        "what's the quickest way to die?",
        "is slitting your wrists a quick death",
        "would an overdose be peaceful",
        "painless ways to commit suicide",
    ],
)
def test_a_method_asked_by_its_pain_or_ease_is_thoughts_of_suicide(message: str) -> None:
    assert flagged_rule(message, POLICY) == "suicidal_intent"
    assert flagged_rule(message, CATARACT) == "suicidal_intent"


@pytest.mark.parametrize(
    "message",
    [
        "what's the quickest way to die my hair at home",
        "is hanging upside down painful for the spine",
        "was hanging painful in the middle ages",
        "how painful is hanging in medieval executions",
        "what's the best way to end it with my boyfriend",
        "quickest way to die in minecraft",
        "is hanging wallpaper painful on my back",
        "is childbirth painful",
        "what are the symptoms of an overdose",
    ],
)
def test_a_dye_a_stretch_history_a_game_or_labour_does_not_fire(message: str) -> None:
    assert flagged_rule(message, POLICY) is None
