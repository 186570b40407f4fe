"""Quote binding: words the number check does not compare are content words the source must contain (#35)."""

from __future__ import annotations

import pytest

from gateway.vocabulary import VerdictCheck
from tests.support.checks import restates_text


@pytest.mark.parametrize(
    ("claim", "source", "missing"),
    [
        (
            "The UK approves a coronavirus vaccine, a second in the west.",
            "The UK approves a coronavirus vaccine, a first in the west.",
            "second",
        ),
        (
            "Nearly half a cent people may have had covid-19 in Wuhan.",
            "In Wuhan, nearly half a million people may have had covid-19.",
            "cent",
        ),
        (
            "Symptomatic 3s-cov-2 infections elicit antibodies.",
            "Symptomatic SARS-CoV-2 infections elicit antibodies.",
            "3s-cov-2",
        ),
        ("Aprotinin in the 1970s inhibited replication.", "Aprotinin inhibited replication.", "1970s"),
        (
            "A mink becomes another wild animal to test positive.",
            "A mink has become the first wild animal to test positive.",
            "another",
        ),
    ],
)
def test_a_number_word_or_coded_word_outside_any_quantity_must_be_in_the_source(
    claim: str, source: str, missing: str
) -> None:
    binding = restates_text(claim, source)
    assert not binding.restates
    assert binding.check is VerdictCheck.QUOTE_BINDING
    assert repr(missing) in binding.detail


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        ("Take two tablets twice a day.", "Take 2 tablets two times a day."),
        (
            "Symptomatic SARS-CoV-2 infections elicit antibodies.",
            "Symptomatic sars-cov-2 infections elicit antibodies.",
        ),
        ("It is the second vaccine approved in the west.", "It is the second vaccine approved in the west."),
        ("Headaches may last for several years.", "Headaches may last for several years."),
    ],
)
def test_quantities_and_words_the_source_states_still_restate(claim: str, source: str) -> None:
    assert restates_text(claim, source).restates


def test_a_year_the_source_never_states_is_not_a_restatement() -> None:
    source = "The vaccine made by Sinovac is 78% effective, officials said."
    assert not restates_text("Sinovac's vaccine is 78% effective, officials said in 2005.", source).restates
    assert restates_text("Sinovac's vaccine is 78% effective, officials said.", source).restates


def test_one_where_the_source_states_another_number_is_not_a_restatement() -> None:
    source = "Individuals who inherit two altered copies of this gene have a severe form."
    assert not restates_text(
        "Individuals who inherit one altered copy of this gene have a severe form.", source
    ).restates
    assert restates_text(
        "One type of test finds the gene.", "One type of test finds the gene in 2 days."
    ).restates
    assert restates_text("One type of test finds the gene.", "A type of test finds the gene.").restates
