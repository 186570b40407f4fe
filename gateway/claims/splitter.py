"""The split stage: one streamed sentence of the draft into statements placed in the whole answer.

``SentenceSplitter`` is built once at start-up with the reply's bounds (``max_repeated_sentences``,
``max_draft_statements``) and the planted-instruction patterns; each request keeps its own
``DraftBounds`` (the sentences seen so far and the statements counted). The pipeline runs it one
sentence at a time as the draft streams in (``gateway.pipeline.run``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from gateway.claims.bounds import check_repeat_counts, check_statements, instruction_sentence, sentence_keys
from gateway.claims.split import split
from gateway.domain import Draft, DraftFormat, Span, SplitReply, Statement
from gateway.drafting.contract import DraftSentence


@dataclass
class DraftBounds:
    """One draft's state for its bounds: how often each sentence came, and the statements so far."""

    repeats: Counter[str] = field(default_factory=Counter)
    statements: int = 0


class Splitter(Protocol):
    """The split stage as the pipeline runs it."""

    async def run(
        self, sentence: DraftSentence, offset: int, first_index: int, bounds: DraftBounds
    ) -> SplitReply: ...


def split_sentence(sentence: DraftSentence, offset: int, first_index: int) -> tuple[Statement, ...]:
    """The statements of one streamed sentence, placed in the whole answer: spans shifted by ``offset``
    (where its text starts in the answer), sentence indices counted on from ``first_index``."""
    claim = sentence.claim
    cited = sentence.cited
    draft = Draft(cited, (claim,) if claim else (), DraftFormat.JSON_LINES, cited)
    return tuple(
        replace(
            statement,
            span=Span(statement.span.start + offset, statement.span.end + offset),
            sentence_index=statement.sentence_index + first_index,
        )
        for statement in split(draft)
    )


class SentenceSplitter:
    """Splits one streamed sentence, refusing (DraftLimitExceeded) a reply that repeats a sentence more
    than ``max_repeats`` times or has more than ``max_statements`` statements; flags a statement shown
    unverified that matches a ``planted`` instruction pattern."""

    def __init__(self, max_repeats: int, max_statements: int, planted: Sequence[str]) -> None:
        self.max_repeats = max_repeats
        self.max_statements = max_statements
        self.planted = planted

    async def run(
        self, sentence: DraftSentence, offset: int, first_index: int, bounds: DraftBounds
    ) -> SplitReply:
        bounds.repeats.update(sentence_keys(sentence.cited))
        check_repeat_counts(bounds.repeats, self.max_repeats)
        statements = split_sentence(sentence, offset, first_index)
        check_statements(bounds.statements + len(statements), self.max_statements)
        bounds.statements += len(statements)
        return SplitReply(statements, instruction_sentence(statements, self.planted))
