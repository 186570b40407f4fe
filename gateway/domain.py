"""The values a request passes through, stage by stage.

Every pipeline stage takes and returns these frozen dataclasses, so a request's path reads as data:
ChatRequest -> Triage -> Retrieval -> Draft -> SplitReply -> Verdict list -> Outcome -> TrustReport.
Nothing here knows about HTTP, Chroma or the model.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from gateway.tool_calls import ToolCall, ToolSpec
from gateway.vocabulary import VerdictCheck, VerifierFailure, VerifierMethod

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
    tool_calls: tuple[ToolCall, ...] = ()
    """An assistant message: the tool calls it made (the client sends them back with their results)."""
    tool_call_id: str | None = None
    """A ``tool`` message: the call whose result ``content`` is (conversation context, never a vetted
    source unless the policy names the tool as trusted: ``policies/tools.yaml``)."""


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[Message, ...]
    model: str
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool = False
    user: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    tools: tuple[ToolSpec, ...] = ()
    """The client's tools, forwarded to the model alongside the citation contract."""
    tool_choice: str | Mapping[str, object] | None = None
    """``none``, ``auto``, ``required`` or ``{"type": "function", "function": {"name": ...}}`` (checked)."""
    parallel_tool_calls: bool | None = None

    @property
    def offers_tools(self) -> bool:
        """The model may call one of the client's tools (tools offered, ``tool_choice`` not ``none``)."""
        return bool(self.tools) and self.tool_choice != "none"

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
    MODEL = "model"
    """The answering model's own urgency read (first line of the citation contract) raised it to an
    emergency: a second net behind the other layers; it can only raise urgency (``model_triage``)."""


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
class Retrieval:
    """The retrieve stage's output: the passages above the floor, the best score, the relevance gate."""

    passages: tuple[Passage, ...]
    best_relevance: float
    relevant: bool


@dataclass(frozen=True)
class DraftClaim:
    """A claim as the model stated it: its text, the passage numbers it cites, and its quote."""

    text: str
    source_numbers: tuple[int, ...]
    quote: str | None = None


class Urgency(StrEnum):
    """The answering model's read of how urgently the patient needs care (the contract's first line)."""

    EMERGENCY = "emergency"
    URGENT = "urgent"
    ROUTINE = "routine"


@dataclass(frozen=True)
class UrgencyRead:
    """The model's urgency read; ``level`` is None when the line was missing or malformed (``problem``)."""

    level: Urgency | None
    reason: str = ""
    problem: str | None = None
    """No usable read (``missing``; ``malformed: <bad value>``), or a note (``late: not the first line``)."""


class DraftFormat(StrEnum):
    JSON_LINES = "jsonl"
    """The streamed citation contract (``drafting.contract``): one JSON object per sentence."""
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
    urgency: UrgencyRead | None = None
    """The model's urgency read (``drafting.contract``); None when the upstream gives none."""


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


@dataclass(frozen=True)
class SplitReply:
    """The split stage's output: one streamed sentence's statements; ``instruction``: a statement shown
    unverified (not a claim) reads like an instruction to a model or system."""

    statements: tuple[Statement, ...]
    instruction: bool


class VerdictLabel(StrEnum):
    SUPPORTED = "supported"
    UNSUPPORTED = "unsupported"
    CONTRADICTED = "contradicted"


class VerificationStatus(StrEnum):
    """What verification established about a claim (``Verdict.status``): the three outcomes of the
    local checker, plus ``unsupported`` when something that can decide said no."""

    SUPPORTED = "supported"
    """The claim restates its source (or a configured entailment model or judge said so)."""
    CONTRADICTED = "contradicted"
    """The source states something incompatible, named by ``Verdict.conflict``."""
    UNSUPPORTED = "unsupported"
    """Decided not supported: an entailment model or the judge said so, or there is nothing to check
    against (no cited source with text). Never given by the local checker to a claim it has a source for."""
    NOT_VERIFIED = "not_verified"
    """The local checker cannot decide (a paraphrase, missing words), or a model stage failed on it."""


class ConflictKind(StrEnum):
    """What a contradiction changes (``Conflict.kind``)."""

    NUMBER = "number"
    """A different number, dose, unit or frequency of the same dimension."""
    NEGATION = "negation"
    """One side negates what the other states."""
    OPPOSITE = "opposite"
    """An opposite word (increases / reduces) or a difference where the other reports none."""
    QUANTIFIER = "quantifier"
    """The claim generalises ("always", "all") where the source hedges ("may", "some")."""
    ENTITY = "entity"
    """Another medicine or condition."""
    POPULATION = "population"
    """Another group of people (children / adults, pregnant women...)."""
    ROLE = "role"
    """Who does what to whom is swapped ("A causes B" where the source says "B causes A"); measured
    about 87% precise on the dev sets (below the 90% bar), so not in the default
    ``contradiction_kinds`` (not_verified)."""
    STATEMENT = "statement"
    """A judge found the source incompatible without naming one of the kinds above (its reason says how)."""


@dataclass(frozen=True)
class Conflict:
    """What a contradicted claim says and what its source says instead."""

    kind: ConflictKind
    detail: str
    """One sentence naming both sides (e.g. "claim says '500 mg', evidence says '50 mg'")."""
    claim: str = ""
    """The claim's part in conflict ("500 mg"), when one span names it."""
    source: str = ""
    """The source's part in conflict ("50 mg"), when one span names it."""


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
    method: VerifierMethod
    check: VerdictCheck
    reason: str = ""
    evidence: Evidence | None = None
    failure: VerifierFailure | None = None
    """Set when a model stage failed on this claim (``timeout``, ``error``, ``invalid_output``): the
    verdict is then a closed failure, never an ordinary ``unsupported`` (counted in metrics)."""
    conflict: Conflict | None = None
    """Contradicted claims: what the claim changes (a ``contradicted`` label always carries one)."""
    decided: bool = False
    """An ``unsupported`` label that something able to decide gave (an entailment model, the judge, or
    no source to check against); False: the local checker could not decide (``not_verified``)."""

    @property
    def supported(self) -> bool:
        return self.label is VerdictLabel.SUPPORTED

    @property
    def status(self) -> VerificationStatus:
        """supported / contradicted / unsupported (decided) / not_verified (see ``VerificationStatus``)."""
        if self.label is VerdictLabel.SUPPORTED:
            return VerificationStatus.SUPPORTED
        if self.label is VerdictLabel.CONTRADICTED:
            return VerificationStatus.CONTRADICTED
        if self.decided and self.failure is None:
            return VerificationStatus.UNSUPPORTED
        return VerificationStatus.NOT_VERIFIED


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
    """A source's tier and trust score, resolved once at badge time (``gateway.trust.tiers.resolve_tier``)."""

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
    method: VerifierMethod
    check: VerdictCheck
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
    ended_early: bool = False
    """The answer stopped after verified sentences were sent (``reason`` says why; docs/safety.md)."""


@dataclass(frozen=True)
class TrustReport:
    claims: tuple[ClaimReport, ...]
    summary: TrustSummary
    sources: tuple[Passage, ...]
    source_tiers: tuple[SourceTier, ...] = ()
    """One per source, in order, resolved when the claims were badged; empty for a report built
    without badging (``trust.badge.unbadged``): readers then use ``tiers.source_tier``."""
