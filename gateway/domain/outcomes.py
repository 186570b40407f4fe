"""Cleanup's values: each claim's outcome and the answer's, or its refusal."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from gateway.domain.drafts import Span, Statement
from gateway.domain.verdicts import Verdict


class ClaimOutcome(StrEnum):
    VERIFIED = "verified"
    REWRITTEN = "rewritten"
    REMOVED = "removed"


class RefusalReason(StrEnum):
    EMERGENCY = "emergency"
    OUT_OF_SCOPE = "out_of_scope"
    NON_CLINICAL = "non_clinical"
    NO_RELEVANT_CONTEXT = "no_relevant_context"
    NOTHING_TO_QUOTE = "nothing_to_quote"
    TOO_MANY_REMOVED = "too_many_removed"
    SAFETY_CRITICAL_FAILED = "safety_critical_failed"
    NO_CLAIM_SURVIVED = "no_claim_survived"
    UPSTREAM_ERROR = "upstream_error"
    MALFORMED_OUTPUT = "malformed_output"
    VERIFIER_ERROR = "verifier_error"
    STORE_ERROR = "store_error"
    TRIAGE_ERROR = "triage_error"


@dataclass(frozen=True)
class ClaimResult:
    """What happened to one claim: its verdict, what cleanup did, and the text that reached the patient."""

    statement: Statement
    verdict: Verdict
    outcome: ClaimOutcome
    final_text: str | None
    final_span: Span | None = None
    rewrite_verdict: Verdict | None = None
    reason: str = ""
    safety_critical: bool = False


@dataclass(frozen=True)
class Outcome:
    answer: str
    statements: tuple[Statement, ...]
    claims: tuple[ClaimResult, ...]
    refused: bool = False
    refusal_reason: RefusalReason | None = None
    refusal_detail: str = ""
    ended_early: bool = False
    """Verified sentences were released, then the answer had to stop (``refusal_reason`` says why): the
    answer is what was released plus a visible note; nothing released is retracted (docs/safety.md)."""

    def with_answer(self, answer: str) -> Outcome:
        return replace(self, answer=answer)

    def with_declined(self, notes: str) -> Outcome:
        """Append the notes for declined questions after the answer (claim spans stay valid)."""
        if not notes:
            return self
        return replace(self, answer=f"{self.answer} {notes}" if self.answer else notes)
