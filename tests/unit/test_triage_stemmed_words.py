"""Single-word triage terms matched by a stem that is another word (#31, s60).

A listed word is matched by its Snowball stem, so a term written in one form is also read in every
other form of that stem, and some of those are other words: "resting" was read in "need a rest",
"fitting" in "fit and well" (s59); "expecting" in "what should I expect after my operation", "singed"
in "loves to sing", "discharged" in "a green discharge", "od'd" in "I feel odd" (s60), three of them
an emergency on the rules alone. Those terms are patterns now. The guard: every single-word term whose
stem differs from it is listed in ``tests/fixtures/triage/stemmed_words.yaml`` after a reading of
what else its stem matches, so the next one is looked at before it ships. No model is loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gateway.domain import Scope
from gateway.triage.evidence import listed_stems
from tests.support.shipped_triage import TRIAGE, judge
from tests.support.triage import sign_groups

REVIEWED = Path(__file__).resolve().parents[1] / "fixtures" / "triage" / "stemmed_words.yaml"


def _stemmed_terms() -> dict[str, str]:
    """Each single-word term of the shipped evidence groups whose stem is not the word itself."""
    found: dict[str, str] = {}
    for group in TRIAGE.evidence.terms.values():
        for word in group.words:
            if word.startswith("*") or word.endswith("*"):
                continue
            stems = listed_stems(word)
            if stems is not None and len(stems) == 1 and stems[0] != word.lower():
                found[word.lower()] = stems[0]
    return found


def test_every_single_word_matched_by_another_stem_has_been_reviewed() -> None:
    reviewed = yaml.safe_load(REVIEWED.read_text(encoding="utf-8"))["reviewed"]
    found = _stemmed_terms()
    unreviewed = {word: stem for word, stem in found.items() if reviewed.get(word) != stem}
    assert not unreviewed, (
        f"single-word terms matched by their stem, not reviewed: {unreviewed}; each also matches every "
        f"other word with that stem: write the term as a pattern if one of them has another sense, "
        f"then list it in {REVIEWED.name}"
    )
    stale = sorted(set(reviewed) - set(found))
    assert not stale, f"{REVIEWED.name} lists words no group matches by stem any more: {stale}"


@pytest.mark.parametrize(
    ("message", "group"),
    [
        ("what should I expect after my hip operation, there is some bleeding from the wound", "pregnancy"),
        ("I'm expecting the results of my scan tomorrow and have stomach pain", "pregnancy"),
        ("when will my prescription delivery arrive, I have a headache", "pregnancy"),
        ("my child loves to sing but has burned his hand on the oven", "burn_severe"),
        ("I have green discharge and my leg is swollen and painful", "clot_risk"),
        ("I feel odd and dizzy after my tablets", "overdose_word"),
        ("I feel down and have 30 paracetamol tablets at home", "took"),
        ("my ears pop when I fly and now one ear hurts", "took"),
        ("my neck hurts after two ibuprofen", "took"),
        ("I have a boil on my arm that is red and sore", "fever"),
        ("I spilled boiling water on my hand", "fever"),
        ("should I shake my inhaler before using it, my son's chest is tight", "fever_high"),
        ("I'm cutting down on alcohol and feel shaky", "suicide_words"),
        ("I cut my finger chopping onions", "suicide_words"),
        ("I have a care plan for my diabetes and my sugars are high", "suicide_words"),
        ("my final exam is next week and I have a migraine", "suicide_plan"),
        ("I have pain under my shoulder blade when I breathe", "suicide_plan"),
        ("I have pain under my shoulder blade when I breathe", "foreign_object"),
        ("my wee is dark and I have back pain", "low_mood"),
        ("is it ok to take ibuprofen on an empty stomach", "despair"),
        ("I get hot flashes and headaches", "vision_change"),
        ("I get hot flashes and headaches", "vision_loss"),
        ("my voice is hoarse and I have a sore throat", "psychosis"),
        ("crow's feet around my eyes are getting worse", "stridor"),
        ("my son is growing up fast and has knee pain", "worsening"),
        ("my rash is making good progress but still itchy", "worsening"),
        ("I did a rapid test and it was positive, now breathless", "worsening"),
    ],
)
def test_another_word_with_the_stem_is_not_the_sign(message: str, group: str) -> None:
    assert group not in sign_groups(message, TRIAGE)


@pytest.mark.parametrize(
    "message",
    [
        "what should I expect after my hip operation, there is some bleeding from the wound",
        "my child loves to sing but has burned his hand on the oven",
        "I have green discharge and my leg is swollen and painful",
    ],
)
def test_a_look_alike_of_a_stem_is_no_emergency_on_the_rules(message: str) -> None:
    assert judge(message).scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    ("message", "group"),
    [
        ("I'm expecting and I'm bleeding heavily with bad cramps", "pregnancy"),
        ("we're expecting twins and she has a terrible headache", "pregnancy"),
        ("my wife delivered 5 days ago and is bleeding through a pad every hour", "pregnancy"),
        ("I burned my face and my eyebrows are singed", "burn_severe"),
        ("my leg is swollen, I was discharged on Monday after my knee op", "clot_risk"),
        ("I OD'd on my sertraline an hour ago", "overdose_word"),
        ("I downed a bottle of vodka and 20 paracetamol", "took"),
        ("I necked 30 tablets", "took"),
        ("I popped 25 codeine tablets", "took"),
        ("my 6 week old baby is boiling and won't feed", "fever"),
        ("my 2 year old has a high temperature and is shaking", "fever_high"),
        ("I've been cutting again and it's deep", "suicide_words"),
        ("I have planned how I'm going to do it", "suicide_words"),
        ("I've finally decided to end it", "suicide_plan"),
        ("the blades are laid out in the bathroom", "suicide_plan"),
        ("my son swallowed a razor blade", "foreign_object"),
        ("the darkness never lifts", "low_mood"),
        ("I feel so empty all the time", "despair"),
        ("I'm seeing flashes in my left eye", "vision_change"),
        ("he is hearing voices again", "psychosis"),
        ("my baby is crowing when she breathes in", "stridor"),
        ("the lump is growing", "worsening"),
        ("the redness has progressed up my arm", "worsening"),
        ("the swelling is spreading rapidly", "worsening"),
    ],
)
def test_the_term_as_written_is_still_read(message: str, group: str) -> None:
    assert group in sign_groups(message, TRIAGE)


def test_the_signs_read_as_written_still_make_an_emergency() -> None:
    assert judge("I'm expecting and I'm bleeding heavily with bad cramps").scope is Scope.EMERGENCY
    assert judge("I popped 25 codeine tablets").scope is Scope.EMERGENCY
    assert judge("my 6 week old baby is boiling and won't feed").scope is Scope.EMERGENCY
    discharged = "my leg is swollen and painful, I was discharged from hospital last week"
    assert judge(discharged).scope is Scope.EMERGENCY
