"""The values a request passes through, stage by stage.

Every pipeline stage takes and returns these frozen dataclasses, so a request's path reads as data:
ChatRequest -> Triage -> Passage list -> Draft -> Statement list -> Verdict list -> Outcome -> TrustReport.
Nothing here knows about HTTP, Chroma or the model.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


def unit_rows(vectors: Vector) -> Vector:
    """``vectors`` scaled to unit length along the last axis (a zero vector stays zero), as float32."""
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return np.asarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)


class Role(StrEnum):
    SYSTEM = "system"
    DEVELOPER = "developer"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[Message, ...]
    model: str
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool = False
    user: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)

    @property
    def question(self) -> str:
        """The latest user message: what the gateway answers."""
        for message in reversed(self.messages):
            if message.role is Role.USER:
                return message.content
        return ""


class Scope(StrEnum):
    IN_SCOPE = "in_scope"
    OUT_OF_SCOPE = "out_of_scope"
    NON_CLINICAL = "non_clinical"
    EMERGENCY = "emergency"


class TriageLayer(StrEnum):
    """Which triage layer decided (bounded: a metric label and an audit field)."""

    RULE = "rule"
    """A rule of the operating context (red flag, non-clinical, out of scope)."""
    EXEMPLAR = "exemplar"
    """Nearest emergency exemplar of ``policies/triage/emergency_exemplars.yaml``."""
    CLASSIFIER = "classifier"
    """The logistic-regression heads over MiniLM embeddings."""
    SIGNS = "signs"
    """A red flag's own signs with a severity or trajectory word (``policies/triage/evidence.yaml``)."""
    VITALS = "vitals"
    """A vital sign outside its age's published limit (``policies/triage/vitals.yaml``)."""
    CONTEXT = "context"
    """An earlier turn of the conversation (an emergency reported before; a clinical topic inherited)."""
    DEFAULT = "default"
    """Nothing decided: treated as a health question (refusing one is the worse error)."""


@dataclass(frozen=True)
class TriageEvidence:
    """One thing triage found in the message: a sign, a severity word, a vital sign out of range.

    ``kind`` is the evidence group (``bleeding``, ``at_rest``, ``vital``, ...; another layer may add
    its own, e.g. a model's reason); ``text`` is what was found, in the patient's words or as read."""

    kind: str
    text: str


@dataclass(frozen=True)
class QuestionTriage:
    """The decision for one question of a (possibly multi-question) message."""

    text: str
    scope: Scope
    reason: str
    rule: str | None = None
    layer: TriageLayer = TriageLayer.DEFAULT


@dataclass(frozen=True)
class Triage:
    scope: Scope
    reason: str
    rule: str | None = None
    questions: tuple[QuestionTriage, ...] = ()
    layer: TriageLayer = TriageLayer.DEFAULT
    """The layer that decided the message's scope."""
    recognised: str | None = None
    """Emergencies: what was recognised, as the emergency message names it (the category's label)."""
    evidence: tuple[TriageEvidence, ...] = ()
    """Emergencies: what the deciding layer found (signs, severity words, vital signs out of range)."""

    @property
    def answerable(self) -> tuple[str, ...]:
        return tuple(q.text for q in self.questions if q.scope is Scope.IN_SCOPE)

    @property
    def declined(self) -> tuple[QuestionTriage, ...]:
        return tuple(q for q in self.questions if q.scope is not Scope.IN_SCOPE)


@dataclass(frozen=True)
class Span:
    start: int
    end: int


@dataclass(frozen=True)
class Passage:
    """One retrieved chunk of a vetted document."""

    id: str
    document_id: str
    text: str
    title: str
    url: str
    org: str
    tier: str
    reviewed_on: dt.date | None
    score: float
    doc_type: str = "article"
    sentence_spans: tuple[Span, ...] = ()
    sentence_vectors: Vector | None = field(default=None, compare=False, repr=False)

    def sentences(self) -> list[tuple[Span, str]]:
        return [(s, self.text[s.start : s.end]) for s in self.sentence_spans]


@dataclass(frozen=True)
class DraftClaim:
    """A claim as the model stated it: its text, the passage numbers it cites, and its quote."""

    text: str
    source_numbers: tuple[int, ...]
    quote: str | None = None


class DraftFormat(StrEnum):
    JSON = "json"
    INLINE = "inline"


@dataclass(frozen=True)
class Draft:
    answer: str
    claims: tuple[DraftClaim, ...]
    format: DraftFormat
    raw: str
    unanswered: tuple[str, ...] = ()
    upstream_seconds: float = 0.0


class StatementKind(StrEnum):
    CLAIM = "claim"
    ACKNOWLEDGEMENT = "acknowledgement"
    QUESTION = "question"
    DISCLAIMER = "disclaimer"


@dataclass(frozen=True)
class Statement:
    """A piece of the answer. Claims must be supported; the other kinds are conversational."""

    text: str
    span: Span
    kind: StatementKind
    source_numbers: tuple[int, ...] = ()
    quote: str | None = None
    sentence_index: int = 0

    @property
    def is_claim(self) -> bool:
        return self.kind is StatementKind.CLAIM


class VerdictLabel(StrEnum):
    SUPPORTED = "supported"
    UNSUPPORTED = "unsupported"
    CONTRADICTED = "contradicted"


@dataclass(frozen=True)
class Evidence:
    """Where in which source the support (or the contradiction) was found."""

    source_number: int
    passage_id: str
    text: str
    span: Span


@dataclass(frozen=True)
class ClaimToCheck:
    """A claim with the sources it must be checked against (the cited ones, or all when none cited)."""

    text: str
    quote: str | None
    sources: tuple[tuple[int, Passage], ...]
    quote_bound: bool = True
    """Chat path: supported locally only when the claim restates its anchored quote. False for
    check-only answers (``/v1/verify``), which carry no quotes and are judged by the calibrated score."""


@dataclass(frozen=True)
class Verdict:
    label: VerdictLabel
    score: float
    method: str
    check: str
    reason: str = ""
    evidence: Evidence | None = None
    failure: str | None = None
    """Set when a model stage failed on this claim (``timeout``, ``error``, ``invalid_output``): the
    verdict is then a closed failure, never an ordinary ``unsupported`` (counted in metrics)."""

    @property
    def supported(self) -> bool:
        return self.label is VerdictLabel.SUPPORTED


class ClaimOutcome(StrEnum):
    VERIFIED = "verified"
    REWRITTEN = "rewritten"
    REMOVED = "removed"


class RefusalReason(StrEnum):
    EMERGENCY = "emergency"
    OUT_OF_SCOPE = "out_of_scope"
    NON_CLINICAL = "non_clinical"
    NO_RELEVANT_CONTEXT = "no_relevant_context"
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

    def with_answer(self, answer: str) -> Outcome:
        return replace(self, answer=answer)

    def with_declined(self, notes: str) -> Outcome:
        """Append the notes for declined questions after the answer (claim spans stay valid)."""
        if not notes:
            return self
        return replace(self, answer=f"{self.answer} {notes}" if self.answer else notes)


@dataclass(frozen=True)
class Badge:
    source_number: int
    passage_id: str
    tier: str
    tier_label: str
    trust_score: float
    title: str
    org: str
    url: str
    reviewed_on: dt.date | None
    evidence_quote: str | None


@dataclass(frozen=True)
class SourceTier:
    """A source's tier and trust score, resolved once at badge time (``gateway.tiers.resolve_tier``)."""

    tier: str
    tier_label: str
    trust_score: float


@dataclass(frozen=True)
class ClaimReport:
    text: str
    span: Span | None
    source_numbers: tuple[int, ...]
    verdict: VerdictLabel
    score: float
    method: str
    check: str
    outcome: ClaimOutcome
    reason: str
    original_text: str
    badges: tuple[Badge, ...]
    evidence: Evidence | None
    original_verdict: VerdictLabel | None = None
    """The first verdict on the model's own text; differs from ``verdict`` only for rewritten claims."""


@dataclass(frozen=True)
class TrustSummary:
    claims: int
    supported: int
    rewritten: int
    removed: int
    conversational: int
    refused: bool
    reason: RefusalReason | None
    detail: str
    trust_score: float | None
    statement_support: float | None
    response_supported: bool


@dataclass(frozen=True)
class TrustReport:
    claims: tuple[ClaimReport, ...]
    summary: TrustSummary
    sources: tuple[Passage, ...]
    source_tiers: tuple[SourceTier, ...] = ()
    """One per source, in order, resolved when the claims were badged; empty for a report built
    without badging (``pipeline.badge.unbadged``): readers then use ``tiers.source_tier``."""
