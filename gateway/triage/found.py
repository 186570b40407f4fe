"""A text as triage's evidence reader found it: its sentences, when each speaks of, the terms in them
(``Hit``), and a red-flag category's signs (``Signs``). Values only: ``evidence.EvidenceReader`` reads."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gateway.domain import TriageEvidence
from gateway.triage.tense import SentenceTime, Time


@dataclass(frozen=True)
class Hit:
    group: str
    text: str  # the patient's own words that matched
    sentence: int
    negated: bool
    background: bool
    supposed: bool = False
    """Inside a clause that supposes, asks or worries ("what if", "I'm worried that"): no sign of a
    complaint now, but still health content."""
    asked: bool = False
    """Inside a question about a topic (``Sentence.asked``; ``supposed`` too): not a sign even of a
    red flag whose supposing clauses fire."""


@dataclass(frozen=True)
class Sentence:
    text: str
    when: SentenceTime  # when it speaks of (``gateway.triage.tense``): history, asked, supposing clauses
    end: str = "."
    """What ended it (".", "?", ", but", ...): kept when sentences are joined again, so that a rule
    matching within a sentence ("[^.?!]") does not match across two."""

    @property
    def background(self) -> bool:
        return self.when.history

    @property
    def asked(self) -> bool:
        """A question that reports nothing of now (``evidence.yaml`` ``asking``): the whole sentence is
        a supposing clause ("what would an overdose of sertraline look like?")."""
        return self.when.asked

    @property
    def time(self) -> Time:
        return self.when.time

    @property
    def literal(self) -> str:
        """The text with its supposing clauses blanked (what the rule layers read); "" when none."""
        literal = self.text
        for start, end in self.when.supposed:
            literal = literal[:start] + " " * (end - start) + literal[end:]
        return literal if self.when.supposed else ""

    @property
    def reported(self) -> str:
        return self.literal or self.text


@dataclass(frozen=True)
class Reading:
    """What one text holds: its sentences and every term found in them."""

    sentences: tuple[Sentence, ...]
    hits: tuple[Hit, ...]
    health: bool
    """The health gate: some term of a ``health_gate`` group, or a red flag's sign, is mentioned
    (negated or not)."""
    health_terms: bool = False
    """Some term of a ``health_gate`` group itself is mentioned: what opens the gate for a category
    bound by the gate alone (``semantic: gate``), whose words of mood are not health content alone and
    whose signs need not be present."""
    resolved: bool = False
    """The message says an episode is over ("I've been well for three years", ``evidence.yaml``
    ``resolved``): history no longer fires for a ``history_fires`` red flag."""

    @property
    def only_asks(self) -> bool:
        """Some term is in a question about a topic (``Sentence.asked``) and every term is asked or
        supposed, negated or history: the message asks and reports nothing of now."""
        return any(h.asked for h in self.hits) and not any(
            not (h.supposed or h.negated or h.background) for h in self.hits
        )

    def current(self, text_of_background: bool = False) -> str:
        """The text without its background sentences and supposing clauses (``text_of_background``: all)."""
        if text_of_background:
            return " ".join(s.text + s.end for s in self.sentences)
        return " ".join(s.reported + s.end for s in self.sentences if not s.background)


@dataclass(frozen=True)
class Signs:
    """A category whose signs were found: the hits that met it, and whether they escalate."""

    category: str
    hits: tuple[Hit, ...]
    escalated: bool

    def evidence(self) -> tuple[TriageEvidence, ...]:
        """The hits, each once, leaving out words inside a longer hit of the same sentence."""
        kept: dict[tuple[str, str], None] = {}
        for hit in self.hits:
            inside = any(
                other.sentence == hit.sentence
                and hit.text.lower() in other.text.lower()
                and other.text != hit.text
                for other in self.hits
            )
            if not inside:
                kept.setdefault((hit.group, hit.text.lower()), None)
        return tuple(TriageEvidence(group, text) for group, text in kept)


def distinct(evidence: Iterable[TriageEvidence]) -> tuple[TriageEvidence, ...]:
    """The evidence without an item whose words are inside a longer item ("chest pain" inside the rule's
    "chest pain and I can't breathe"): each thing the patient said is named once."""
    items = list(evidence)
    return tuple(
        item
        for item in items
        if not any(
            len(other.text) > len(item.text) and item.text.lower() in other.text.lower() for other in items
        )
    )
