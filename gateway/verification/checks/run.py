"""Every check of a claim against one piece of evidence, in the order their failures are reported;
and ``load_word_data``, which reads the checks' word data (the verifier calls it when it is built)."""

from __future__ import annotations

from gateway.verification.checks.analysis import AnalysedText
from gateway.verification.checks.entities import check_entities, entity_words
from gateway.verification.checks.numbers import check_numbers
from gateway.verification.checks.polarity import check_antonyms, check_negation, polarity_words
from gateway.verification.checks.quantifiers import check_quantifier, strength_patterns
from gateway.verification.checks.quantities import quantity_patterns
from gateway.verification.checks.results import CheckResult
from gateway.verification.checks.roles import check_role_order, check_roles, role_patterns
from gateway.verification.checks.words import word_data


def load_word_data() -> None:
    """Read, validate and compile every word list and cue pattern of the checks (``data/*.yaml``).

    Importing the checks reads no file; each analysis loads what it needs on first use, once. The
    verifier calls this when it is built, so a bad file stops start-up (naming the file and the key)
    instead of failing the first request, and the first request pays no loading time.
    """
    word_data()
    quantity_patterns()
    polarity_words()
    strength_patterns()
    entity_words()
    role_patterns()


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
