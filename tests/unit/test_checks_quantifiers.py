"""The quantifier check: a claim must not generalise more strongly than its evidence."""

from __future__ import annotations

from gateway.verification.checks import quantifiers
from gateway.verification.checks.analysis import Analyses
from gateway.verification.checks.quantifiers import stronger
from gateway.verification.checks.results import CheckOutcome
from tests.support.checks import CHECK_DATA, on_texts

check_quantifier = on_texts(quantifiers.check_quantifier)


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


def test_exclusive_only_is_a_universal_claim() -> None:
    evidence = "The virus spreads through symptomatic and presymptomatic people."
    assert check_quantifier("The virus spreads only by symptomatic people.", evidence).outcome is (
        CheckOutcome.MISSING
    )
    hedged = "The virus may spread through symptomatic people."
    assert check_quantifier("The virus spreads only by symptomatic people.", hedged).clash


def test_middle_quantifiers_are_not_failures() -> None:
    assert check_quantifier("Symptoms usually resolve within two weeks.", "Symptoms may resolve.").passed


def test_a_limiting_only_is_not_universal() -> None:
    assert check_quantifier("Side effects occur only in rare cases.", "Side effects are rare.").passed


def test_stronger_compares_only_with_qualified_evidence() -> None:
    analyses = Analyses(CHECK_DATA)
    some, most = analyses("Some people have pain."), analyses("Most people have pain.")
    flat, hedged = analyses("People have pain."), analyses("People may have pain.")
    assert stronger(most, some)
    assert not stronger(some, most)
    assert not stronger(hedged, flat)  # a hedge added to a flat statement is weaker
    assert not stronger(some, some)
