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
