"""The relation reading (``checks.reading``): one reading per text, shared by the role checks."""

from __future__ import annotations

import pytest

from gateway.verification.checks.analysis import Analyses
from gateway.verification.checks.reading import forms
from gateway.vocabulary import VerdictCheck
from tests.support.checks import CHECK_DATA, restates_text


def test_a_text_is_read_once_and_its_relations_come_from_that_reading() -> None:
    analyses = Analyses(CHECK_DATA)
    text = analyses("Obesity causes type 2 diabetes.")
    assert analyses("Obesity causes type 2 diabetes.").reading is text.reading
    assert text.relations is text.reading.relations
    assert [r.cue for r in text.relations] == ["causes"]


def test_listed_verbs_are_read_by_their_forms_and_nouns_are_not() -> None:
    clause = Analyses(CHECK_DATA)("The release of GH stops, and the damage binds cells.").reading.clauses[0]
    verbs = {w for w, verb in zip(clause.words, clause.verbs, strict=True) if verb}
    assert verbs == {"stops", "binds"}  # "release of", "the damage": nouns
    assert {"stopped", "stopping", "carries", "caused"} <= forms("stop") | forms("carry") | forms("cause")


@pytest.mark.parametrize(
    ("source", "claim"),
    [
        # a relation the reader confirms ("produce") vouches for its own cue only
        (
            "Secretion of GH by the pituitary into the bloodstream stimulates the liver to produce IGF-I.",
            "Secretion of GH by the liver into the bloodstream stimulates the pituitary to produce IGF-I.",
        ),
        # a verb the reader has no cue for: the word order around it
        (
            "The tumor presses on the nerve and causes pain.",
            "The nerve presses on the tumor and causes pain.",
        ),
        # a from/to frame, and a setting exchanged with the patient
        (
            "An electrical signal spreads from the top of the heart to the bottom.",
            "An electrical signal spreads from the bottom of the heart to the top.",
        ),
        (
            "In people with sickle cell disease, infections can trigger a pain crisis.",
            "In people with a pain crisis, infections can trigger sickle cell disease.",
        ),
        # a word on both sides ("lupus"): the sides' own words are compared (#35 item 5)
        ("Lupus nephritis is caused by lupus.", "Lupus is caused by lupus nephritis."),
        # two relations whose sides overlapped: each side ends before the next cue
        (
            "The virus that causes chickenpox also causes shingles.",
            "The virus that shingles causes also causes chickenpox.",
        ),
    ],
)
def test_a_swap_is_not_kept(source: str, claim: str) -> None:
    binding = restates_text(claim, source)
    assert not binding.restates
    assert binding.check is VerdictCheck.ROLE_ORDER


@pytest.mark.parametrize(
    ("source", "claim"),
    [
        (
            "HRT that contains only estrogen also increases the risk of stroke and blood clots.",
            "The risk of stroke and blood clots is also increased by HRT that contains only estrogen.",
        ),
        (
            "Being infected with HPV can lead to squamous cell carcinoma of the anus.",
            "Squamous cell carcinoma of the anus can result from being infected with HPV.",
        ),
        (
            "The hypothalamus makes a hormone called somatostatin, which inhibits GH production.",
            "The hypothalamus makes a hormone, called somatostatin, which inhibits the production of GH.",
        ),
        ("Lupus nephritis is caused by lupus.", "Lupus causes lupus nephritis."),
        (
            "The virus that causes chickenpox also causes shingles.",
            "Shingles is also caused by the virus that causes chickenpox.",
        ),
        (
            "Primary hemochromatosis is caused by a defect in the genes that control how much iron you take.",
            "A defect in the genes that control how much iron you take causes primary hemochromatosis.",
        ),
        (
            "Hepatitis C is due to a viral infection that causes inflammation and damage to the liver.",
            "Hepatitis C is due to a viral infection that causes inflammation and damage to the liver.",
        ),
    ],
)
def test_a_restatement_in_another_order_is_kept(source: str, claim: str) -> None:
    assert restates_text(claim, source).restates


def test_a_verbatim_sentence_run_into_its_heading_is_kept() -> None:
    """A heading joined to its text repeats words on both sides of the claim's verb (a97aaff)."""
    source = "How to take paracetamol Adults can take paracetamol every 4 to 6 hours."
    claim = "Adults can take paracetamol every 4 to 6 hours."
    assert restates_text(claim, source).restates
