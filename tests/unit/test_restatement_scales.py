"""Restatement (#35 item 5): scale words compared word by word over what each governs, and personal
pronouns as sides of the word-order gate. A frequency or quantifier word changed in one clause while
another clause keeps it, a "rare" word dropped, added or turned into a common one, a universal word
added, or an agent swapped with a pronoun is never kept; the faithful restatements beside them are."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.errors import ConfigurationError
from gateway.verification.checks.analysis import Analyses
from gateway.verification.restatement import HEDGE_CHECK, RESTATEMENT_CHECK, load_restatement_terms
from gateway.vocabulary import VerdictCheck
from tests.support.checks import CHECK_DATA, restates_text
from tests.support.restatement import decide


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        # a frequency word changed where another clause keeps the same word
        (
            "Giant cell arteritis is often treated with steroids and often comes back.",
            "Giant cell arteritis is often treated with steroids and rarely comes back.",
        ),
        # a common word for a rare one, and a rare one for a common one
        ("Most children with the condition have seizures.", "Few children with the condition have seizures."),
        ("Few children with the condition have seizures.", "Many children with the condition have seizures."),
        ("The rash often spreads to the face.", "The rash seldom spreads to the face."),
        # a rare word added, or the source's dropped
        ("In rare cases, the infection spreads to the brain.", "The infection spreads to the brain."),
        ("The condition runs in families.", "Rarely, the condition runs in families."),
        # a hedge moved to the other clause: the second clause now hedges less than its source
        (
            "The drug sometimes causes nausea and usually causes dizziness.",
            "The drug usually causes nausea and sometimes causes dizziness.",
        ),
        # a universal word over a hedged or a flat source
        ("The pain always lasts longer than 10 minutes.", "The pain usually lasts longer than 10 minutes."),
        ("All adults with the disease need surgery.", "Adults with the disease need surgery."),
    ],
)
def test_a_scale_word_changed_over_its_words_is_not_kept(claim: str, source: str) -> None:
    kept, check, _ = decide(claim, source)
    assert not kept
    assert check == HEDGE_CHECK or check != RESTATEMENT_CHECK


def test_a_scale_change_names_the_word() -> None:
    source = "Giant cell arteritis is often treated with steroids and rarely comes back."
    claim = "Giant cell arteritis is often treated with steroids and often comes back."
    kept, check, reason = decide(claim, source)
    assert (kept, check) == (False, HEDGE_CHECK)
    assert "'often'" in reason
    assert "rare" in reason


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        # a rare word kept, in other words or another place
        (
            "In rare cases, the condition runs in families.",
            "Rarely, the condition runs in families.",
        ),
        ("The condition rarely runs in families.", "Rarely, the condition runs in families."),
        # each clause keeps its own frequency word
        (
            "Giant cell arteritis rarely comes back and is often treated with steroids.",
            "Giant cell arteritis is often treated with steroids and rarely comes back.",
        ),
        # a weaker hedge, a universal word the source says too, "a few" (some) for "some"
        ("The drug may cause nausea.", "The drug usually causes nausea."),
        ("All adults with the disease need surgery.", "All adults with the disease need surgery."),
        ("A few people with gout have kidney stones.", "Some people with gout have kidney stones."),
    ],
)
def test_a_scale_word_kept_over_its_words_is_kept(claim: str, source: str) -> None:
    assert decide(claim, source)[0]


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        ("If you bite an animal, wash the wound.", "If an animal bites you, wash the wound."),
        ("They attack him without warning.", "He attacks them without warning."),
        ("You bite ticks in tall grass.", "Ticks bite you in tall grass."),
    ],
)
def test_an_agent_swapped_with_a_pronoun_is_not_kept(claim: str, source: str) -> None:
    binding = restates_text(claim, source)
    assert not binding.restates
    assert binding.check is VerdictCheck.ROLE_ORDER


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        ("If an animal bites you, wash the wound well.", "If an animal bites you, wash the wound well."),
        (
            "If an animal bites you, see a doctor and wash the wound well.",
            "If an animal bites you, wash the wound well and see a doctor.",
        ),
        ("You can take paracetamol with food.", "You can take paracetamol with food."),
    ],
)
def test_a_pronoun_in_its_place_is_kept(claim: str, source: str) -> None:
    assert restates_text(claim, source).restates


def test_a_reading_names_its_pronouns_by_their_first_form() -> None:
    analyses = Analyses(CHECK_DATA)
    assert analyses("They attack him.").reading.pronouns == frozenset({"they", "he"})
    assert analyses("The virus attacks cells.").reading.pronouns == frozenset()


def test_a_scale_word_listed_twice_stops_start_up(tmp_path: Path) -> None:
    path = tmp_path / "restatements.yaml"
    path.write_text("hedges: [[may, rarely]]\ndownward: [rarely, seldom]\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"downward\[0\]\[0\].*already listed"):
        load_restatement_terms(path, CHECK_DATA)
