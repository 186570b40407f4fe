"""The number check: digits and number words, units, ranges, frequencies, statistics and years."""

from __future__ import annotations

import pytest

from gateway.verification.checks import numbers
from gateway.verification.checks.quantities import extract_quantities, parse_number
from gateway.verification.checks.results import CheckOutcome
from tests.support.checks import CHECK_DATA, on_texts

check_numbers = on_texts(numbers.check_numbers)


@pytest.mark.parametrize(
    ("text", "value"),
    [("thirty", 30), ("1,500", 1500), ("two hundred", 200), ("half", 0.5), ("twenty five", 25), ("0.5", 0.5)],
)
def test_parse_number_reads_digits_and_words(text: str, value: float) -> None:
    assert parse_number(text, CHECK_DATA.quantities) == value


def test_names_with_digits_are_not_quantities() -> None:
    assert (
        extract_quantities("COVID-19 is caused by SARS-CoV-2; take vitamin B12", CHECK_DATA.quantities) == ()
    )


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
        ("In 2020 the virus spread through care homes.", "The virus spread through care homes."),
        ("China's vaccine is 78 % effective, says 2005.", "The vaccine is 78% effective, officials said."),
    ],
)
def test_a_year_the_evidence_never_states_is_missing(claim: str, evidence: str) -> None:
    assert check_numbers(claim, evidence).outcome is CheckOutcome.MISSING


def test_a_year_the_evidence_states_passes() -> None:
    assert check_numbers(
        "In 2020 the virus spread through care homes.", "In 2020 it spread in care homes."
    ).passed


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Northern Italy quarantines 16 people.", "Northern Italy quarantines 16 million people."),
        ("Cases top 75 thousand.", "Cases top 75 million."),
    ],
)
def test_a_numeral_with_a_scale_word_is_one_number(claim: str, evidence: str) -> None:
    assert check_numbers(claim, evidence).outcome is CheckOutcome.CLASH
    assert check_numbers(evidence, evidence.replace(" million", ",000,000")).passed
