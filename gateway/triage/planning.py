"""Which texts triage reads for one request: the message's questions, the whole message, recent turns.

The texts of one request are encoded off the event loop, each in its own call, by the pipeline's
component (``gateway.triage.triager``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from gateway.domain import ChatRequest, Role
from gateway.text import sentence_spans
from gateway.triage.contexts import OperatingContext, TriageRule
from gateway.triage.evidence import EvidenceReader
from gateway.triage.policy import NegationPolicy, TriagePolicy
from gateway.triage.rule_layer import red_flag


def _is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?")


def split_questions(
    message: str,
    context: OperatingContext,
    negation: NegationPolicy | None = None,
    correct: Callable[[str], str] | None = None,
    reader: EvidenceReader | None = None,
) -> list[str]:
    """Group sentences into questions: each group ends at a question mark and carries the statements
    before it (their context). A statement that raises a red flag on its own stands alone, so it
    cannot drag a routine question into the emergency and that question can be declined explicitly;
    a statement of safety from that red flag (``reader``'s ``states_safe``: "I'm not going to hurt
    myself") raises none and stays with its question. Statements after the last question join it."""
    return [written for written, _ in _question_groups(message, context, negation, correct, reader)]


def _question_groups(
    message: str,
    context: OperatingContext,
    negation: NegationPolicy | None,
    correct: Callable[[str], str] | None,
    reader: EvidenceReader | None,
) -> list[tuple[str, str]]:
    """``split_questions`` as (the patient's words, the spelling-corrected words) per question."""
    text = message.strip()
    groups: list[tuple[list[str], list[str]]] = []
    pending: tuple[list[str], list[str]] = ([], [])
    for span in sentence_spans(text):
        written = text[span.start : span.end]
        read = correct(written) if correct else written
        if not _is_question(written) and red_flag(read, context, negation, _safe_in(read, reader)):
            groups.extend([pending, ([written], [read])] if pending[0] else [([written], [read])])
            pending = ([], [])
            continue
        pending[0].append(written)
        pending[1].append(read)
        if _is_question(written):
            groups.append(pending)
            pending = ([], [])
    if pending[0]:
        if groups and _is_question(groups[-1][0][-1]):
            groups[-1][0].extend(pending[0])
            groups[-1][1].extend(pending[1])
        else:
            groups.append(pending)
    joined = [(" ".join(w), " ".join(r)) for w, r in groups]
    return joined or [(text, correct(text) if correct else text)]


@dataclass(frozen=True)
class TriagePlan:
    """The texts of one request, in the order they are encoded."""

    questions: tuple[str, ...]
    """The message's questions as triage reads them (spelling corrected: ``triage_spelling``)."""
    message: str
    history: tuple[str, ...]
    """Earlier user turns, most recent last (bounded by ``context_turns`` and ``context_max_chars``)."""
    written: tuple[str, ...] = ()
    """The same questions in the patient's own words (what the rest of the pipeline is given)."""
    max_words: int = 0
    """Each encoded text is cut to its first this-many words (0: whole): ``encode_max_words``."""

    @property
    def texts(self) -> list[str]:
        """What is encoded, in this order: the questions, the whole message when it has
        several, the earlier turns, the conversation. Only the encoding is cut (``max_words``); the
        rule layers read ``questions`` and ``message`` whole."""
        whole = [self.message] if len(self.questions) > 1 else []
        # the latest message first: the encoder truncates long texts from the end
        conversation = [" ".join([self.message, *reversed(self.history)])] if self.history else []
        return [
            first_words(t, self.max_words) for t in [*self.questions, *whole, *self.history, *conversation]
        ]


def first_words(text: str, limit: int) -> str:
    """``text`` cut after its first ``limit`` words (whitespace-separated; 0: whole, unchanged)."""
    if not limit:
        return text
    words = text.split(maxsplit=limit)
    return text if len(words) <= limit else " ".join(words[:limit])


def _safe_in(text: str, reader: EvidenceReader | None) -> Callable[[TriageRule], bool] | None:
    """Whether ``text`` states itself safe from a rule's red flag (read only when a rule fires)."""
    if reader is None:
        return None
    reading = cache(lambda: reader.read(text))  # read once, and only if a rule fires
    return lambda rule: reader.states_safe(reading(), rule.id)


def plan(
    request: ChatRequest,
    context: OperatingContext,
    policy: TriagePolicy,
    reader: EvidenceReader,
    correct: Callable[[str], str] | None = None,
) -> TriagePlan:
    """The texts triage reads; ``reader``: the rule layers' evidence reader (a statement of safety keeps
    its sentence with its question: ``split_questions``); ``correct`` (a ``TriageSpeller``) fixes
    misspellings in all of them."""
    settings = policy.settings
    fix = correct or (lambda text: text)
    users = [m.content for m in request.messages if m.role is Role.USER]
    message = (users[-1] if users else "").strip()
    earlier = users[:-1][-settings.context_turns :] if settings.context_turns else []
    history = tuple(fix(t.strip()[-settings.context_max_chars :]) for t in earlier if t.strip())
    groups = _question_groups(message, context, settings.negation, correct, reader)
    questions = tuple(read for _, read in groups)
    written = tuple(w for w, _ in groups)
    return TriagePlan(questions, fix(message), history, written, settings.encode_max_words)
