"""Long posts judged by their worst current complaint (#31 item 6): episodes told as completed (no
date needed: "we ended up in A&E", "back then", "was diagnosed with") give no signs, and the present
emergency after a back-story still fires. No model is loaded: the semantic layers say nothing unless a
test scripts them (``score``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gateway.domain import Scope, TriageLayer
from gateway.errors import ConfigurationError
from gateway.triage.policy import load_triage_policy
from tests.support.shipped_triage import TRIAGE, copy_policies, judge, score
from tests.support.triage import reader_of, without_unbound_rule


def history(text: str) -> list[bool]:
    return [s.background for s in reader_of(TRIAGE).read(text).sentences]


# --- reading the narrative -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a frame without a date, and the past-tense sentences around it in its paragraph
        (
            "He went floppy and blue round the lips. We ended up in A&E.\n\nHe is fine today.",
            [True, True, False],
        ),
        ("Back then my chest was crushing. The pain went down my arm.", [True, True]),
        ("She was diagnosed with asthma at four. She couldn't talk for wheezing.", [True, True]),
        # a new paragraph starts a new frame
        ("We ended up in A&E.\n\nHe fell and hit his head and was sick twice.", [True, False]),
        # present tense or a time of now is never history by the frame or the run
        ("Last time it settled with the spray. My chest is crushing.", [True, False]),
        ("At the time they said it was nothing. Twenty minutes ago my face dropped.", [True, False]),
        # past tense alone is not history: nothing in the paragraph frames it as over
        ("He fell off the ladder. He was sick and very drowsy.", [False, False]),
    ],
)
def test_an_episode_told_as_completed_is_history(text: str, expected: list[bool]) -> None:
    assert history(text) == expected


# --- history does not fire, in patients' wording --------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "My little girl went stiff and her eyes rolled back when she had a fever. We ended up in A&E and "
        "they said it was a febrile fit.\n\nShe is 4 and has a runny nose today. Can she go to nursery?",
        "Back then I couldn't breathe and my lips went blue, it was the worst asthma attack of my life. "
        "They kept me in for three nights.\n\nWhich preventer inhaler has the fewest side effects?",
        "My uncle was diagnosed with a stroke after his face dropped and his speech went slurred. He was "
        "in hospital for a month.\n\nHe wants to know if he can fly to see us at Christmas.",
        "At the time the bleeding was so heavy I was soaking a pad an hour and fainted, and they did an "
        "operation.\n\nI'm due a smear test. Does the scarring make it more painful?",
    ],
)
def test_an_undated_past_emergency_told_as_background_does_not_fire(message: str) -> None:
    result = judge(message)
    assert result.scope is Scope.IN_SCOPE, (result.layer, result.rule)


def test_a_red_flag_whose_signs_are_only_history_is_denied_to_the_semantic_layers() -> None:
    past = (
        "My son swallowed a magnet when he was two and started drooling, and we ended up in A&E.\n\n"
        "He is six now. What toys are safe for his age?"
    )
    read = score(emergency=0.9, near="swallowed_object", similarity=0.9)
    assert judge(past, read).scope is Scope.IN_SCOPE
    now = "My son is 2. He swallowed a magnet an hour ago and keeps drooling."
    result = judge(now, read)
    assert (result.scope, result.rule) == (Scope.EMERGENCY, "swallowed_object")


def test_without_history_denies_the_semantic_layers_read_history_as_before(tmp_path: Path) -> None:
    directory = copy_policies(tmp_path)
    path = directory / "evidence.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["episode"]["history_denies"] = False
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    policy = without_unbound_rule(load_triage_policy(directory))  # (test_triage_unbound.py)
    past = (
        "My son swallowed a magnet when he was two and started drooling, and we ended up in A&E.\n\n"
        "He is six now. What toys are safe for his age?"
    )
    read = score(emergency=0.9, near="swallowed_object", similarity=0.9)
    assert judge(past, read, policy).scope is Scope.EMERGENCY


# --- the present complaint after the back-story still fires ---------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "I had a stroke in 2019 and now my face is drooping again",
        "We ended up in A&E with his asthma last winter and they gave him steroids.\n\n"
        "Tonight his lips are blue and he can't talk between breaths.",
        "Back then it was a kidney stone and they said it would pass.\n\n"
        "This time I have crushing chest pain going down my left arm and I'm grey and sweating.",
        "She was diagnosed with epilepsy as a child. She has been fitting for ten minutes and won't wake up.",
        "Last time I took too many it was by accident. Tonight I have taken 40 paracetamol on purpose.",
    ],
)
def test_a_present_emergency_after_background_fires(message: str) -> None:
    result = judge(message)
    assert result.scope is Scope.EMERGENCY
    assert result.layer in {TriageLayer.RULE, TriageLayer.SIGNS, TriageLayer.VITALS}


def test_a_denied_sign_after_background_is_still_denied() -> None:
    message = "Back then I had a clot on my lung.\n\nNo chest pain and no breathlessness, just a sore calf."
    assert judge(message).scope is Scope.IN_SCOPE


def test_thoughts_of_suicide_told_as_history_with_thoughts_now_still_fire() -> None:
    message = "I was in hospital after an overdose back then.\n\nTonight I want to die and I have a plan."
    assert judge(message).scope is Scope.EMERGENCY


def test_a_vital_sign_of_a_past_episode_is_not_read_as_now() -> None:
    past = "Back then my heart was racing at 190 and they gave me an injection.\n\nIs decaf coffee okay?"
    assert judge(past).scope is Scope.IN_SCOPE
    now = "Back then it was 120.\n\nRight now my heart is racing at 190 and I feel faint."
    assert judge(now).scope is Scope.EMERGENCY


def test_a_bad_episode_pattern_names_the_key(tmp_path: Path) -> None:
    directory = copy_policies(tmp_path)
    path = directory / "evidence.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["episode"]["frames"].append("(unclosed")
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigurationError) as info:
        load_triage_policy(directory)
    assert info.value.key.startswith("episode"), info.value.key
