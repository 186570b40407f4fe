"""The form check: a claim that is no complete statement is left undecided, never supported."""

from __future__ import annotations

import pytest

from gateway.verification.checks.form import FormCheck
from gateway.verification.checks.results import CheckName, CheckOutcome
from gateway.verification.lexicon import load_lexicon
from tests.support.checks import analysed

FORM = FormCheck.of(load_lexicon())


@pytest.mark.parametrize(
    ("claim", "why"),
    [
        ("Preliminary results of the national screening and", "ends on 'and'"),
        ('"Masks reduce the"".', "ends on 'the'"),
        ("Aspirin is not safe for children because", "ends on 'because'"),
        ("Aprotinin (s blocks viral replication", "leaves '(' open"),
    ],
)
def test_an_incomplete_statement_is_missing_its_form(claim: str, why: str) -> None:
    result = FORM.run(analysed(claim))
    assert result.outcome is CheckOutcome.MISSING
    assert result.name is CheckName.FORM
    assert why in result.detail


@pytest.mark.parametrize(
    "claim",
    [
        "Paracetamol is safe in pregnancy [1].",
        "Trump halts travel from Europe to the US",
        "Vitamin D sufficiency reduced the risk of severe disease",
        "Global covid-19 cases surpass 75 million",
        "Take ibuprofen with food.",
        "Adults usually take 200 mg to 400 mg of ibuprofen every 4 to 6 hours",
        "Do not take aspirin if you are under 16.",
        "Masks protect children",  # a listed verb in its base form after a plural subject
        "Vaccines prevent severe disease",
        "The trial was halted",
        "The study is put on hold (pending review).",
        "Increased LDL receptors play a role in the reduction of plasma Lp(a).",
        "Pregnant women are admitted more often than other women are",
        # what no verb test could tell from a headline without a parser: complete, never flagged
        "Read the ingredients of every medicine before taking it alongside paracetamol.",
        "Most people recover from a cold in 7 to 10 days.",
        "Do not stop the eye drops early unless the eye team tells you to.",
        "Nerve pain can last in the area where the rash was.",
        "Convalescent plasma to treat covid-19",
    ],
)
def test_a_complete_statement_passes(claim: str) -> None:
    assert FORM.incomplete(analysed(claim)) == ""
    assert FORM.run(analysed(claim)).passed
