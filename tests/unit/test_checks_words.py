"""Content words: coverage with stems, synonyms and stopwords."""

from __future__ import annotations

from gateway.verification.checks import words
from tests.support.checks import on_texts

coverage = on_texts(words.coverage)


def test_coverage_counts_claim_content_words() -> None:
    assert coverage("Aspirin thins the blood", "Aspirin thins blood and reduces clotting") == 1.0
    assert coverage("Aspirin cures cancer", "Aspirin thins blood") < 0.5


def test_lay_and_clinical_words_count_as_the_same_word() -> None:
    assert coverage("Kids die of sepsis.", "Paediatric mortality from sepsis.") == 1.0
    assert coverage("Doctors prescribe the medicine.", "Physicians prescribe the drug.") == 1.0
    assert coverage("Kids die of sepsis.", "Adults recover from sepsis.") < 0.5


def test_reporting_words_are_not_content() -> None:
    assert (
        coverage("Research indicates the virus originated in bats.", "The virus originated in bats.") == 1.0
    )
