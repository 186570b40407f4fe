"""The values a request passes through, stage by stage.

Every pipeline stage takes and returns these frozen dataclasses, so a request's path reads as data:
ChatRequest -> Triage -> Retrieval -> Draft -> SplitReply -> Verdict list -> Outcome -> TrustReport.
Nothing here knows about HTTP, Chroma or the model.
"""

from __future__ import annotations

from gateway.domain.conversation import ChatRequest, Message, Role, Vector, unit_rows
from gateway.domain.drafts import (
    Draft,
    DraftClaim,
    DraftFormat,
    Passage,
    Retrieval,
    Span,
    SplitReply,
    Statement,
    StatementKind,
    Urgency,
    UrgencyRead,
)
from gateway.domain.outcomes import ClaimOutcome, ClaimResult, Outcome, RefusalReason
from gateway.domain.reports import Badge, ClaimReport, SourceTier, TrustReport, TrustSummary
from gateway.domain.scoping import QuestionTriage, Scope, Triage, TriageEvidence, TriageLayer
from gateway.domain.verdicts import (
    ClaimToCheck,
    Conflict,
    ConflictKind,
    Evidence,
    Verdict,
    VerdictLabel,
    VerificationStatus,
)

__all__ = [
    "Badge",
    "ChatRequest",
    "ClaimOutcome",
    "ClaimReport",
    "ClaimResult",
    "ClaimToCheck",
    "Conflict",
    "ConflictKind",
    "Draft",
    "DraftClaim",
    "DraftFormat",
    "Evidence",
    "Message",
    "Outcome",
    "Passage",
    "QuestionTriage",
    "RefusalReason",
    "Retrieval",
    "Role",
    "Scope",
    "SourceTier",
    "Span",
    "SplitReply",
    "Statement",
    "StatementKind",
    "Triage",
    "TriageEvidence",
    "TriageLayer",
    "TrustReport",
    "TrustSummary",
    "Urgency",
    "UrgencyRead",
    "Vector",
    "Verdict",
    "VerdictLabel",
    "VerificationStatus",
    "unit_rows",
]
