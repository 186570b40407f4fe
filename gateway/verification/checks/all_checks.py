"""Every check of a claim against one piece of evidence, in the order their failures are reported."""

from __future__ import annotations

from gateway.verification.checks.analysis import AnalysedText
from gateway.verification.checks.entities import check_entities
from gateway.verification.checks.numbers import check_numbers
from gateway.verification.checks.polarity import check_antonyms, check_negation
from gateway.verification.checks.quantifiers import check_quantifier
from gateway.verification.checks.results import CheckResult
from gateway.verification.checks.roles import check_role_order, check_roles


def run_all(claim: AnalysedText, evidence: AnalysedText) -> tuple[CheckResult, ...]:
    """Every check, in the order their failures are reported; the word-order gate last (where a claim is
    kept as written: the local verifier does not run it)."""
    return (
        check_numbers(claim, evidence),
        check_negation(claim, evidence),
        check_antonyms(claim, evidence),
        check_quantifier(claim, evidence),
        check_entities(claim, evidence),
        check_roles(claim, evidence),
        check_role_order(claim, evidence),
    )
