"""The polarity checks: negation cues and negative prefixes, opposite words, effect vs no effect."""

from __future__ import annotations

import pytest

from gateway.verification.checks import polarity
from gateway.verification.checks.results import CheckOutcome
from tests.support.checks import on_texts

check_negation = on_texts(polarity.check_negation)
check_antonyms = on_texts(polarity.check_antonyms)


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Do not take aspirin with warfarin.", "Take aspirin with warfarin."),
        ("There is an increased risk of bleeding.", "There is no increased risk of bleeding."),
        ("It is not recommended for children.", "It is recommended for children."),
        ("Take it with food.", "Do not take it with food."),
    ],
)
def test_flipped_polarity_clashes(claim: str, evidence: str) -> None:
    assert check_negation(claim, evidence).outcome is CheckOutcome.CLASH


def test_matching_negations_pass() -> None:
    assert check_negation(
        "Do not take ibuprofen if you are pregnant.", "You should not take ibuprofen when pregnant."
    ).passed


def test_unrelated_negation_is_ignored() -> None:
    assert check_negation(
        "Paracetamol relieves pain.", "Paracetamol relieves pain but does not reduce swelling."
    ).passed


def test_opposite_direction_clashes() -> None:
    assert (
        check_antonyms(
            "Statins increase the risk of diabetes.", "Statins reduce the risk of diabetes."
        ).outcome
        is CheckOutcome.CLASH
    )
    assert check_antonyms("Statins increase the risk.", "Statins raise the risk.").passed


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("The severity is unrelated to age.", "The severity is related to age."),
        ("The new virus is dissimilar to the bat virus.", "The new virus is similar to the bat virus."),
        ("Most infected children were asymptomatic.", "Most infected children had symptomatic disease."),
        ("Masks did not reduce transmission.", "Masks reduced transmission in households."),
    ],
)
def test_negative_prefixes_and_cues_clash_with_the_positive(claim: str, evidence: str) -> None:
    assert check_negation(claim, evidence).outcome is CheckOutcome.CLASH


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Most infected children were asymptomatic.", "Most infected children had no symptoms."),
        (
            "It is uncommon for bronchitis to turn into pneumonia.",
            "Bronchitis does not usually turn into pneumonia.",
        ),
        ("Migraines often involve a headache.", "Not all migraines involve a headache."),
        (
            "If a fissure does not heal, surgery may be offered.",
            "Surgery is offered when a fissure persists.",
        ),
        ("Pregnant women had a higher risk than nonpregnant women.", "Risk was higher in pregnant women."),
        ("Aspirin must not be given to children.", "Children should not take aspirin."),
    ],
)
def test_hedges_conditions_and_comparisons_are_not_negations(claim: str, evidence: str) -> None:
    assert check_negation(claim, evidence).passed


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        (
            "Obese patients were just as likely to be admitted.",
            "Obese patients were more likely to be admitted.",
        ),
        ("Birth rates stayed level after the peak.", "Birth rates dropped by 20% after the peak."),
        ("Statins raise the risk of falls.", "Statins showed no difference in the risk of falls."),
    ],
)
def test_no_effect_against_an_effect_clashes(claim: str, evidence: str) -> None:
    assert check_antonyms(claim, evidence).outcome is CheckOutcome.CLASH


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Outcomes were similar in both groups.", "There was no difference in outcomes between groups."),
        ("Masks reduced transmission.", "Masks reduced transmission by 40%."),
        ("Risk was higher in men.", "Risk was higher in men; other outcomes were similar."),
    ],
)
def test_agreeing_effect_statements_pass(claim: str, evidence: str) -> None:
    assert check_antonyms(claim, evidence).passed


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Transmission slowed in March.", "Transmission accelerated in March."),
        ("The bacteria are susceptible to amoxicillin.", "The bacteria are resistant to amoxicillin."),
        ("The drug suppresses the immune response.", "The drug stimulates the immune response."),
        ("Few patients with gout have kidney stones.", "Most patients with gout have kidney stones."),
        ("This causes many symptoms.", "This causes few symptoms."),
    ],
)
def test_more_direction_antonyms_clash(claim: str, evidence: str) -> None:
    assert check_antonyms(claim, evidence).clash


def test_refuting_a_finding_negates_it() -> None:
    claim = "Early cases in January caused the later outbreaks."
    evidence = "Our results refute findings linking early cases in January with later outbreaks."
    assert check_negation(claim, evidence).clash
    assert check_negation(claim, "Our results link early cases in January with later outbreaks.").passed


def test_words_that_only_sometimes_compare_are_not_no_effect_findings() -> None:
    evidence = "Deaths rose by 20% after the peak."
    assert check_antonyms("On the same day, deaths rose after the peak.", evidence).passed
    assert check_antonyms("A high blood sugar level raised deaths after the peak.", evidence).passed
    assert check_antonyms("Deaths stayed the same as before the peak.", evidence).clash


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        (
            "The sars-cov-2 and other human coronavirus spike proteins are fine-tuned towards temperature.",
            "Replication in the upper airways is not observed for other pathogenic human coronaviruses.",
        ),
        ("The vaccine does not protect elderly people.", "Elderly people were admitted after the vaccine."),
        ("Patients who received no treatment had higher mortality.", "Patients had higher mortality."),
    ],
)
def test_a_negation_of_another_predicate_blocks_support_but_names_no_conflict(
    claim: str, evidence: str
) -> None:
    result = check_negation(claim, evidence)
    assert result.clash
    assert result.conflict is None


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Hydroxychloroquine did not reduce mortality.", "Hydroxychloroquine reduced mortality in patients."),
        ("Masks no longer protect against infection.", "Masks protect against infection."),
        (
            "The vaccine does not significantly protect elderly people.",
            "The vaccine protects elderly people.",
        ),
        ("Remdesivir improved recovery.", "In the trial remdesivir did not improve recovery."),
        ("The new drug had no effect on deaths from sepsis.", "The new drug reduced deaths from sepsis."),
    ],
)
def test_a_negation_of_the_same_predicate_names_its_conflict(claim: str, evidence: str) -> None:
    result = check_negation(claim, evidence)
    assert result.clash
    assert result.conflict is not None


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("The severity is not unrelated to age.", "The severity is related to age."),
        ("Surgery is not without risk for older adults.", "Surgery carries a risk for older adults."),
    ],
)
def test_a_double_negative_asserts_the_positive(claim: str, evidence: str) -> None:
    assert check_negation(claim, evidence).passed
    assert check_negation(claim.replace(" not ", " "), evidence).clash


def test_a_cue_before_a_word_that_only_looks_prefixed_still_negates() -> None:
    evidence = "Use of the medicine was not associated with an increased risk of serious events."
    assert check_negation(
        "Use of the medicine does not increase the risk of serious events.", evidence
    ).passed
    assert check_negation("Use of the medicine increases the risk of serious events.", evidence).clash
