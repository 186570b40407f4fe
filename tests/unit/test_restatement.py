"""Restatement (#35 item 5): a chat claim that restates its quote in other listed words, inflection,
word order or an added hedge is kept as written; a stronger claim, a changed number or unit, a
negation, a swapped entity, an added quantifier or a dropped hedge never is."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.errors import ConfigurationError
from gateway.settings import Settings
from gateway.verification.cascade import build_verifier
from gateway.verification.policy import VerificationPolicy
from gateway.verification.restatement import (
    HEDGE_CHECK,
    RESTATEMENT_CHECK,
    RESTATEMENT_FILE,
    load_restatement_terms,
    restatement_path,
)
from tests.support.checks import CHECK_DATA, restates_text
from tests.support.restatement import BUNDLED, decide


@pytest.mark.parametrize(
    ("claim", "source", "named"),
    [
        # a lay / clinical pair
        (
            "High blood pressure raises the risk of stroke.",
            "Hypertension raises the risk of stroke.",
            "'high blood pressure' ~ 'hypertension'",
        ),
        (
            "Kidney damage is a side effect of ibuprofen.",
            "Renal damage is an adverse effect of ibuprofen.",
            "'side effect' ~ 'adverse effect'",
        ),
        # word order and inflection with a listed pair
        (
            "Stomach pain is caused by ibuprofen.",
            "Ibuprofen causes abdominal pain.",
            "'stomach pain' ~ 'abdominal pain'",
        ),
        # a listed synonym
        (
            "Too much paracetamol can lead to liver damage.",
            "Too much paracetamol can cause liver damage.",
            "'lead to' ~ 'cause'",
        ),
        # a hedge the source does not have: a weaker claim
        ("Ibuprofen can cause stomach pain.", "Ibuprofen causes abdominal pain.", "hedged (can)"),
        ("Ibuprofen usually causes stomach pain.", "Ibuprofen causes abdominal pain.", "hedged (usually)"),
        # a weaker hedge than the source's
        ("Ibuprofen may cause stomach pain.", "Ibuprofen usually causes abdominal pain.", "hedged (may)"),
        # a listed pair the entity check reads as two names (a clash on the texts as written)
        (
            "These symptoms include insomnia, anxiety and anger.",
            "These symptoms include sleeplessness, anxiety and anger.",
            "'insomnia' ~ 'sleeplessness'",
        ),
    ],
)
def test_a_restatement_is_kept_and_its_reason_names_what_differs(claim: str, source: str, named: str) -> None:
    assert restates_text(claim, source).restates is False  # binding alone rewrites it to the source
    kept, check, reason = decide(claim, source)
    assert (kept, check) == (True, RESTATEMENT_CHECK), reason
    assert named in reason


@pytest.mark.parametrize(
    ("claim", "source", "check"),
    [
        # stronger: a weaker hedge in the source, a stronger one in the claim
        ("Ibuprofen usually causes stomach pain.", "Ibuprofen may cause abdominal pain.", "entity_missing"),
        (
            "Ibuprofen often causes stomach pain.",
            "Ibuprofen sometimes causes abdominal pain.",
            "entity_missing",
        ),
        # a changed number, a changed unit
        (
            "Take 400 mg of ibuprofen for stomach pain.",
            "Take 200 mg of ibuprofen for abdominal pain.",
            "number_mismatch",
        ),
        (
            "Take 5 ml of ibuprofen for stomach pain.",
            "Take 5 mg of ibuprofen for abdominal pain.",
            "number_mismatch",
        ),
        # a negation, a negated hedge
        ("Ibuprofen does not cause stomach pain.", "Ibuprofen causes abdominal pain.", "negation"),
        (
            "Ibuprofen does not usually cause stomach pain.",
            "Ibuprofen causes abdominal pain.",
            "entity_missing",
        ),
        # a swapped entity
        ("Paracetamol causes high blood pressure.", "Ibuprofen causes hypertension.", "entity_missing"),
        # an added quantifier
        ("Ibuprofen always causes stomach pain.", "Ibuprofen causes abdominal pain.", "quantifier"),
        # a word the source does not have, and a quote the claim does not restate in full
        ("Ibuprofen causes severe stomach pain.", "Ibuprofen causes abdominal pain.", "entity_missing"),
        # a changed quantifier ("few" for "most"), a changed code, swapped groups of a comparison
        (
            "Few heart attack patients have stomach pain.",
            "Most heart attack patients have abdominal pain.",
            "antonym",
        ),
        (
            "Vegetarians may need vitamin B6 for joint pain.",
            "Vegetarians may need vitamin B12 for joint pain.",
            "quote_binding",
        ),
        (
            "Joint pain is more common in women than in men.",
            "Joint pain is more common in men than in women.",
            "role_order",
        ),
        # a listed pair beside a swapped name: the swap still stops it
        ("Paracetamol causes insomnia.", "Ibuprofen causes sleeplessness.", "entity_missing"),
    ],
)
def test_a_claim_that_says_more_or_otherwise_is_not_kept(claim: str, source: str, check: str) -> None:
    kept, found, reason = decide(claim, source)
    assert not kept, reason
    assert found == check


def test_the_claim_must_restate_its_whole_quote() -> None:
    source = "Ibuprofen causes abdominal pain in older adults."
    kept, _, _ = decide("Stomach pain is caused by ibuprofen.", source, quote=source)
    assert not kept
    assert decide("Stomach pain is caused by ibuprofen in older adults.", source)[0]


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        ("Ibuprofen causes abdominal pain.", "Ibuprofen may cause abdominal pain."),
        ("Ibuprofen causes abdominal pain.", "In some cases ibuprofen causes abdominal pain."),
        ("Ibuprofen causes abdominal pain.", "Ibuprofen causes abdominal pain in some cases."),
        (
            "Data show that ibuprofen causes abdominal pain.",
            "Data suggest that ibuprofen causes abdominal pain.",
        ),
    ],
)
def test_a_claim_that_drops_its_sources_hedge_is_not_supported_even_when_binding_was(
    claim: str, source: str
) -> None:
    assert restates_text(claim, source).restates  # binding alone ignored the hedge
    kept, check, reason = decide(claim, source)
    assert (kept, check) == (False, HEDGE_CHECK)
    assert "a stronger claim" in reason


@pytest.mark.parametrize(
    ("claim", "source", "check"),
    [
        # both hedged by "may": the quantifier is stronger, not the hedge
        (
            "Most people with gout may get kidney stones.",
            "Some people with gout may get kidney stones.",
            HEDGE_CHECK,
        ),
        # a word its source lacks ("often") and a universal claim: binding and the quantifier check refuse
        ("Ibuprofen often causes abdominal pain.", "Ibuprofen can cause abdominal pain.", "quote_binding"),
        ("All people with gout get kidney stones.", "Some people with gout get kidney stones.", "quantifier"),
    ],
)
def test_a_claim_with_a_stronger_quantifier_than_its_qualified_source_is_not_kept(
    claim: str, source: str, check: str
) -> None:
    kept, found, reason = decide(claim, source)
    assert (kept, found) == (False, check)
    assert found != HEDGE_CHECK or "quantifier is stronger" in reason


def test_a_quantifier_as_strong_or_weaker_than_the_sources_is_kept() -> None:
    source = "Most people with gout have kidney stones."
    assert decide("Most people with gout have kidney stones.", source)[0]
    assert decide("Some people with gout have kidney stones.", source)[0]
    assert decide("Ibuprofen may cause abdominal pain.", "Ibuprofen causes abdominal pain.")[0]


def test_a_hedge_of_another_clause_or_a_date_does_not_weaken_the_claims_statement() -> None:
    source = "Paracetamol is safe in pregnancy, but it may upset the stomach in some people."
    assert decide("Paracetamol is safe in pregnancy.", source)[:2] == (True, "quote_bound")
    dated = "Paracetamol is safe in pregnancy (leaflet of May 5, 2024)."
    assert decide("Paracetamol is safe in pregnancy.", dated)[:2] == (True, "quote_bound")
    assert decide("It upsets the stomach.", source)[:2] == (False, HEDGE_CHECK)


def test_a_claim_binding_already_supports_keeps_its_check() -> None:
    source = "Ibuprofen may cause abdominal pain."
    assert decide("Ibuprofen can cause abdominal pain.", source)[:2] == (True, "quote_bound")


BAD_ENTRIES = [
    ("terms:\n  - [renal, Kidney]\n", "terms[0][1]", "lower-case"),
    ("terms:\n  - [paracetamol, two tablets]\n", "terms[0][1]", "quantity"),
    ("terms:\n  - [fever, no fever]\n", "terms[0][1]", "negation"),
    ("terms:\n  - [the, a]\n", "terms[0][0]", "function words"),
    ("terms:\n  - [renal, kidney]\n  - [kidneys, nephric]\n", "terms[1][0]", "already listed at terms[0]"),
    ("terms:\n  - [renal]\n", "terms[0]", "at least two"),
    ("hedges:\n  - [may, 'usually ']\n", "hedges[0][1]", "lower-case"),
    ("synonyms:\n  - [renal, kidney]\n", "synonyms", ""),
]


@pytest.mark.parametrize(("text", "key", "reason"), BAD_ENTRIES)
def test_a_bad_entry_is_a_configuration_error_naming_the_file_and_the_entry(
    tmp_path: Path, text: str, key: str, reason: str
) -> None:
    path = tmp_path / RESTATEMENT_FILE
    path.write_text(text)
    with pytest.raises(ConfigurationError) as info:
        load_restatement_terms(path, CHECK_DATA)
    assert RESTATEMENT_FILE in str(info.value)
    assert key in str(info.value)
    assert reason in str(info.value)


@pytest.mark.slow  # builds the verifier with MiniLM
def test_a_bad_file_stops_start_up_and_a_directory_without_one_uses_the_bundled_list(  # type: ignore[no-untyped-def]
    tmp_path: Path, embedder
) -> None:
    assert restatement_path(Settings(policy_dir=tmp_path)) == BUNDLED
    (tmp_path / RESTATEMENT_FILE).write_text(
        "terms:\n  - [hypertension, high blood pressure]\n  - [renal, 2 kidneys]\n"
    )
    with pytest.raises(ConfigurationError, match=r"restatements\.yaml: terms\[1\]\[1\]"):
        build_verifier(Settings(policy_dir=tmp_path), VerificationPolicy(), embedder)
    # a site that turns the check off does not need the file to be valid
    build_verifier(Settings(policy_dir=tmp_path), VerificationPolicy(restatement=False), embedder)


def test_the_bundled_file_is_valid_and_lists_the_pairs_the_docs_name() -> None:
    terms = load_restatement_terms(BUNDLED, CHECK_DATA)
    groups = {entry: group[0] for group in terms.terms for entry in group}
    assert groups["high blood pressure"] == groups["hypertension"]
    assert groups["kidney"] == groups["renal"]
    assert groups["stomach pain"] == groups["abdominal pain"]
    assert [len(level) > 0 for level in terms.hedges] == [True, True, True]
