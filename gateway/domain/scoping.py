"""Triage's values: the scope a question is in and the evidence that placed it there."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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
    unbound: bool = False
    """The exemplar or classifier layer (``layer``) raised red flag ``rule`` without its own signs and
    the unbound rule dropped the raise (``evidence.yaml`` ``unbound``): answered with its safety note,
    which names ``signs``; logged (``triage_unbound_dropped``) and kept in the audit record."""
    signs: tuple[str, ...] = ()
    """A dropped raise: what the message tells of now (its symptoms and signs, in its own words)."""


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
    def dropped(self) -> tuple[QuestionTriage, ...]:
        """Questions whose red flag, raised without its own signs, was dropped to its safety note."""
        return tuple(q for q in self.questions if q.unbound)

    @property
    def declined(self) -> tuple[QuestionTriage, ...]:
        return tuple(q for q in self.questions if q.scope is not Scope.IN_SCOPE)
