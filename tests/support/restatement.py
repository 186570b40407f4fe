"""The shipped restatement terms and the restatement decision on one claim, as the restatement unit tests
state it (each text analysed afresh, with the session's ``CHECK_DATA``)."""

from __future__ import annotations

from gateway.resources import bundled
from gateway.verification.binding import restates
from gateway.verification.checks.analysis import Analyses
from gateway.verification.policy import VerificationPolicy
from gateway.verification.restatement import RESTATEMENT_FILE, Restatement, load_restatement_terms
from tests.support.checks import CHECK_DATA

BUNDLED = bundled("policies") / RESTATEMENT_FILE
POLICY = VerificationPolicy()
RESTATEMENT = Restatement(
    load_restatement_terms(BUNDLED, CHECK_DATA),
    POLICY.restatement_hedge_scope_words,
    POLICY.restatement_hedge_scope_overlap,
    CHECK_DATA,
)


def decide(claim: str, source: str, quote: str | None = None) -> tuple[bool, str, str]:
    """(kept as written, check, reason) for ``claim`` quoting ``quote`` (default: all of ``source``)."""
    analyses = Analyses(CHECK_DATA)
    binding = RESTATEMENT.bind(claim, quote or source, source, restates(claim, source, analyses), analyses)
    return binding.restates, binding.check, binding.detail
