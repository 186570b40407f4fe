"""The explicit checks: numbers, polarity, quantifiers and entities that similarity misses."""

from __future__ import annotations

import pytest

from gateway.verification.checks.entities import check_entities
from gateway.verification.checks.numbers import check_numbers
from gateway.verification.checks.polarity import check_antonyms, check_negation
from gateway.verification.checks.quantifiers import check_quantifier
from gateway.verification.checks.quantities import extract_quantities, parse_number
from gateway.verification.checks.results import CheckOutcome
from gateway.verification.checks.run import run_all
from gateway.verification.checks.words import coverage


@pytest.mark.parametrize(
    ("text", "value"),
    [("thirty", 30), ("1,500", 1500), ("two hundred", 200), ("half", 0.5), ("twenty five", 25), ("0.5", 0.5)],
)
def test_parse_number_reads_digits_and_words(text: str, value: float) -> None:
    assert parse_number(text) == value


def test_names_with_digits_are_not_quantities() -> None:
    assert extract_quantities("COVID-19 is caused by SARS-CoV-2; take vitamin B12") == ()


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Take 500 mg of paracetamol.", "Adults take 500 milligrams of paracetamol."),
        ("Take it twice a day.", "Take it every 12 hours."),
        ("Take it two times daily.", "Take it twice a day."),
        ("Wait 4 to 6 hours between doses.", "Leave 4-6 hours between doses."),
        ("The test takes thirty minutes.", "The assay gives a result in 30 min."),
        ("Half of patients improved.", "50% of patients improved."),
        ("A dose of 0.5 g is enough.", "A 500 mg dose is enough."),
        ("The test takes half an hour.", "The result comes in 30 minutes."),
    ],
)
def test_equivalent_numbers_pass(claim: str, evidence: str) -> None:
    assert check_numbers(claim, evidence).passed


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Take 500 mg of paracetamol.", "Take 50 mg of paracetamol."),
        ("Take it three times a day.", "Take it twice a day."),
        ("Wait 5 hours between doses.", "Wait 4 to 6 hours between doses."),
        ("The rash lasts 10 days.", "The rash lasts 7 days."),
    ],
)
def test_different_numbers_clash(claim: str, evidence: str) -> None:
    result = check_numbers(claim, evidence)
    assert result.outcome is CheckOutcome.CLASH
    assert result.name.value == "number_mismatch"


def test_number_absent_from_evidence_is_missing() -> None:
    assert check_numbers("Take 2 tablets.", "Take the tablets with water.").outcome is CheckOutcome.MISSING


def test_number_dropped_by_claim_is_fine() -> None:
    assert check_numbers("Take paracetamol with water.", "Take 2 tablets of paracetamol with water.").passed


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


def test_stronger_quantifier_than_evidence_fails() -> None:
    assert (
        check_quantifier("Statins always cause muscle pain.", "Statins sometimes cause muscle pain.").outcome
        is CheckOutcome.CLASH
    )
    assert (
        check_quantifier("All children need the vaccine.", "Children need the vaccine.").outcome
        is CheckOutcome.MISSING
    )


def test_weaker_or_equal_quantifier_passes() -> None:
    assert check_quantifier("Statins can cause muscle pain.", "Statins often cause muscle pain.").passed
    assert check_quantifier("It always helps.", "It always helps.").passed


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Ibuprofen relieves period pain.", "Paracetamol relieves period pain."),
        ("The vaccine is approved for children.", "The vaccine is approved for adults."),
        ("It is safe for pregnant women.", "It is safe for over-65s."),
    ],
)
def test_swapped_entity_clashes(claim: str, evidence: str) -> None:
    assert check_entities(claim, evidence).outcome is CheckOutcome.CLASH


def test_entity_synonyms_and_brands_pass() -> None:
    assert check_entities("Escitalopram is an SSRI.", "Lexapro is an SSRI antidepressant.").passed
    assert check_entities("Acetaminophen lowers fever.", "Paracetamol lowers a fever.").passed
    assert check_entities("Safe for kids.", "Safe for children.").passed


def test_capitalised_name_absent_is_missing() -> None:
    assert (
        check_entities("The trial ran in Boston.", "The trial ran in a large city.").outcome
        is CheckOutcome.MISSING
    )


def test_coverage_counts_claim_content_words() -> None:
    assert coverage("Aspirin thins the blood", "Aspirin thins blood and reduces clotting") == 1.0
    assert coverage("Aspirin cures cancer", "Aspirin thins blood") < 0.5


def test_paraphrase_passes_every_check() -> None:
    results = run_all(
        "Adults can take 1 to 2 tablets every 4 to 6 hours.",
        "Adults may take one or two tablets every 4-6 hours, up to 4 times in 24 hours.",
    )
    assert [r for r in results if not r.passed] == []


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("More than half of adults have a long-term condition.", "56% of adults have a long-term condition."),
        ("Nine out of 10 infections go undetected.", "About 90% of infections go undetected."),
        ("1 in 4 patients developed a clot.", "A clot developed in 25% (20/81) of patients."),
        (
            "There were 122,000 more deaths than expected.",
            "There were 122\u202f300 more deaths than expected.",
        ),
        ("1.7 billion people are at increased risk.", "1\u00b77 billion people are at increased risk."),
        ("The odds were about 20 times higher indoors.", "The odds were 18.7 times higher indoors."),
        ("It began spreading in the second half of January.", "It began spreading in late January."),
        ("In 2020 the virus spread through care homes.", "The virus spread through care homes."),
    ],
)
def test_statistics_stated_differently_pass(claim: str, evidence: str) -> None:
    assert check_numbers(claim, evidence).passed


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Nine out of 10 infections go undetected.", "50% of infections go undetected."),
        ("More than half of adults have a long-term condition.", "30% of adults have a long-term condition."),
        ("1 in 4 patients developed a clot.", "A clot developed in 10% of patients."),
        ("There were 122,000 more deaths than expected.", "There were 118,000 more deaths than expected."),
        ("Take 1,000 mg twice a day.", "Take 1,400 mg twice a day."),
    ],
)
def test_different_statistics_and_doses_still_clash(claim: str, evidence: str) -> None:
    assert check_numbers(claim, evidence).outcome is CheckOutcome.CLASH


def test_a_year_the_evidence_contradicts_is_not_ignored() -> None:
    assert not check_numbers("Cases rose in 2020.", "Cases rose in 2019.").passed


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


def test_exclusive_only_is_a_universal_claim() -> None:
    evidence = "The virus spreads through symptomatic and presymptomatic people."
    assert check_quantifier("The virus spreads only by symptomatic people.", evidence).outcome is (
        CheckOutcome.MISSING
    )
    hedged = "The virus may spread through symptomatic people."
    assert check_quantifier("The virus spreads only by symptomatic people.", hedged).clash


def test_middle_quantifiers_are_not_failures() -> None:
    assert check_quantifier("Symptoms usually resolve within two weeks.", "Symptoms may resolve.").passed


def test_entities_match_in_singular_or_plural_and_inside_compounds() -> None:
    assert check_entities("Medicines can prevent migraines.", "Medicines can prevent a migraine.").passed
    assert check_entities(
        "Interferons may help against Covid-19.", "Interferon inhibits SARS-CoV-2 replication."
    ).passed


def test_condition_names_are_recognised_by_their_suffix() -> None:
    evidence = "Colchicine is a medication used to treat gout and familial Mediterranean fever."
    assert check_entities("Colchicine is used to treat pericarditis.", evidence).clash
    assert check_entities(
        "Some patients developed psychosis.", "Some patients had psychotic symptoms."
    ).passed
    assert check_entities("It can cause diarrhea.", "It can cause diarrhoea and nausea.").passed
    assert check_entities("Anaemia is common.", "Anemia is common in pregnancy.").passed


def test_a_diagnosis_is_not_a_condition() -> None:
    assert check_entities("See a doctor for a diagnosis.", "See a doctor to find the cause.").passed


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Transmission slowed in March.", "Transmission accelerated in March."),
        ("The bacteria are susceptible to amoxicillin.", "The bacteria are resistant to amoxicillin."),
        ("The drug suppresses the immune response.", "The drug stimulates the immune response."),
    ],
)
def test_more_direction_antonyms_clash(claim: str, evidence: str) -> None:
    assert check_antonyms(claim, evidence).clash


def test_refuting_a_finding_negates_it() -> None:
    claim = "Early cases in January caused the later outbreaks."
    evidence = "Our results refute findings linking early cases in January with later outbreaks."
    assert check_negation(claim, evidence).clash
    assert check_negation(claim, "Our results link early cases in January with later outbreaks.").passed


def test_lay_and_clinical_words_count_as_the_same_word() -> None:
    assert coverage("Kids die of sepsis.", "Paediatric mortality from sepsis.") == 1.0
    assert coverage("Doctors prescribe the medicine.", "Physicians prescribe the drug.") == 1.0
    assert coverage("Kids die of sepsis.", "Adults recover from sepsis.") < 0.5


def test_reporting_words_are_not_content() -> None:
    assert (
        coverage("Research indicates the virus originated in bats.", "The virus originated in bats.") == 1.0
    )


def test_words_that_only_sometimes_compare_are_not_no_effect_findings() -> None:
    evidence = "Deaths rose by 20% after the peak."
    assert check_antonyms("On the same day, deaths rose after the peak.", evidence).passed
    assert check_antonyms("A high blood sugar level raised deaths after the peak.", evidence).passed
    assert check_antonyms("Deaths stayed the same as before the peak.", evidence).clash


def test_a_limiting_only_is_not_universal() -> None:
    assert check_quantifier("Side effects occur only in rare cases.", "Side effects are rare.").passed
