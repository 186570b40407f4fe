"""Sign groups that over-matched (#31, crying wolf): each fix pinned by a message that must not give
the sign and one that still must. No model is loaded: only the rule layers decide here."""

from __future__ import annotations

import pytest

from gateway.domain import Scope, Triage
from tests.support.shipped_triage import POLICY, TRIAGE
from tests.support.triage import escalated, reader_of, rules_only, sign_groups

READER = reader_of(TRIAGE)
CATEGORIES = tuple(dict.fromkeys(TRIAGE.categories))


def judge(message: str) -> Triage:
    return rules_only(message, POLICY)


def groups(message: str) -> set[str]:
    return sign_groups(message, TRIAGE)


@pytest.mark.parametrize(
    ("ordinary", "sign", "group"),
    [
        # one's own named medicine is not a poison; someone else's, or one a child got into, is
        (
            "I've had my bisoprolol tablets this morning, can I drink coffee?",
            "My toddler got into my tablets and swallowed some",
            "poison_substance",
        ),
        # "I've had" is any experience; with an amount after it, a taking
        ("I've had a cough for a week", "I've had 30 paracetamol tonight", "took"),
        # Snowball stems "handful" to "hand"
        ("my hands shake since I started sertraline", "I took a handful of my sertraline", "overdose_amount"),
        # a swap of medicines is no amount; a count in place of another is
        (
            "I took ibuprofen instead of paracetamol",
            "I took 4 instead of 2 of my sertraline",
            "overdose_amount",
        ),
        ("my nose bled and I had a cup of tea", "I coughed up a cupful of blood", "bleeding_heavy"),
        # one small muscle twitching is no fit
        ("my eyelid keeps twitching when I'm tired", "he's twitching all over", "seizure"),
        # by stem "still going" was "still go"
        ("I still go to the gym", "the fit is still going", "seizure_long"),
        # a pregnancy told as past
        (
            "piles since my pregnancy, a little bright red blood on the paper",
            "bright red blood on the pad in pregnancy",
            "pregnancy",
        ),
        # the auxiliary just before the sign negates it
        ("he hit his head and hasnt been sick", "he hit his head and has been sick", "head_red"),
    ],
)
def test_an_over_broad_sign_no_longer_matches_ordinary_wording(ordinary: str, sign: str, group: str) -> None:
    assert group not in groups(ordinary)
    assert group in groups(sign)


def test_own_medicine_taken_is_no_poisoning_but_a_child_in_someone_elses_is() -> None:
    assert (
        READER.signs(READER.read("I've had my bisoprolol tablets, is that ok with a cold?"), "poisoning")
        is None
    )
    assert escalated(TRIAGE, "My toddler got into my tablets and swallowed some", "poisoning")
    assert escalated(TRIAGE, "My son ate some of grandma's pills", "poisoning")


def test_an_amount_after_ive_had_is_an_overdose_and_a_hand_is_not() -> None:
    assert escalated(TRIAGE, "I've had 30 paracetamol tonight and feel drowsy", "overdose")
    assert escalated(TRIAGE, "I took a handful of my sertraline", "overdose")
    assert (
        judge("I took ibuprofen instead of paracetamol for my hands, is that ok?").scope
        is not Scope.EMERGENCY
    )


def test_an_ending_not_reached_is_not_history() -> None:
    """ "hasn't settled" read as "settled" made the sentence history and dropped its signs."""
    message = "The crushing chest pain hasn't settled down and I'm sweating"
    assert not READER.read(message).sentences[0].when.history
    assert judge(message).scope is Scope.EMERGENCY
    over = "The crushing chest pain and sweating settled down after an hour, can I go to work tomorrow?"
    assert READER.read(over).sentences[0].when.history


def test_twitching_muscles_and_the_gym_are_no_seizure() -> None:
    post = "For a month my eyelid and calf muscles twitch randomly. I still go to the gym."
    assert READER.signs(READER.read(post), "unconscious_or_seizure") is None
    assert escalated(TRIAGE, "He's fitting and twitching and it's still going", "unconscious_or_seizure")


def test_a_past_pregnancy_does_not_make_old_piles_a_pregnancy_bleed() -> None:
    old = "hemorrhoids on and off since my pregnancy, a little bright red blood on the paper sometimes"
    assert judge(old).scope is not Scope.EMERGENCY
    assert escalated(TRIAGE, "I'm 12 weeks into my pregnancy and bleeding", "pregnancy_bleeding")


@pytest.mark.parametrize(
    ("ordinary", "swallowed"),
    [
        ("I ate lunch and had some sharp pain in my side", "my son swallowed something sharp"),
        ("I ate dinner and now have pins and needles in my hand", "she swallowed a pin"),
        ("I drank a glass of water with my lithium", "he ate a piece of glass"),
        ("I swallowed my lithium tablet", "my toddler swallowed a lithium coin cell"),
    ],
)
def test_a_swallowed_object_is_the_object_not_the_word_in_another_sense(
    ordinary: str, swallowed: str
) -> None:
    assert READER.signs(READER.read(ordinary), "swallowed_object") is None
    assert escalated(TRIAGE, swallowed, "swallowed_object")
