"""Retrieval's passages, the draft the model writes and the statements it splits into."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from enum import StrEnum

from gateway.domain.conversation import Vector


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
    """A Python float (not a numpy scalar: the audit record stores it as it is)."""
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
