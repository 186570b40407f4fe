"""Bounds on the model's reply, checked before the CPU-heavy stages (splitting, verifying) run, and
the check that no conversational sentence of it reads like an instruction to a model or system.

The reply's length is bounded where it is read (``ModelUpstream.draft``, setting
``upstream_max_reply_chars``). Here: a reply that repeats one sentence more than
``max_repeated_sentences`` times, or that splits into more than ``max_draft_statements`` statements,
is refused as ``malformed_output`` (a degenerate loop of the model, or
a way to multiply one verified sentence into a flood). Sentences are cut by the one splitter
(``gateway.text.sentence_spans``) in its eager ``typed`` mode: a loop written in lower case or one
line per sentence is still caught.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from gateway.domain import Statement
from gateway.errors import DraftLimitExceeded
from gateway.knowledge.instructions import is_planted
from gateway.text import split_sentences, strip_markers
from gateway.vocabulary import DraftLimit

MIN_SENTENCE_CHARS = 12
"""Shorter pieces ("Yes.", "1.") may legitimately recur and are not counted."""


def check_repeats(answer: str, max_repeats: int) -> None:
    """Raise DraftLimitExceeded when one sentence (ignoring case, spacing and [n] markers) occurs
    more than ``max_repeats`` times in ``answer``."""
    counts: Counter[str] = Counter(sentence_keys(answer))
    check_repeat_counts(counts, max_repeats)


def sentence_keys(text: str) -> list[str]:
    """The sentences of ``text`` as compared for repeats (case, spacing and markers ignored)."""
    keys = []
    for piece in split_sentences(text, typed=True):
        key = strip_markers(piece).lower()
        if len(key) >= MIN_SENTENCE_CHARS:
            keys.append(key)
    return keys


def check_repeat_counts(counts: Counter[str], max_repeats: int) -> None:
    """``check_repeats`` over counts kept while a draft streams in."""
    if not counts:
        return
    _, times = counts.most_common(1)[0]
    if times > max_repeats:
        raise DraftLimitExceeded(
            f"the reply repeats one sentence {times} times (at most {max_repeats} are accepted)",
            limit=DraftLimit.REPEATED_SENTENCES,
        )


def check_statements(count: int, max_statements: int) -> None:
    """Raise DraftLimitExceeded when the reply splits into more statements than are verified per
    request: it bounds the verification, cleanup and audit work one reply can cause."""
    if count > max_statements:
        raise DraftLimitExceeded(
            f"the reply has {count} statements; at most {max_statements} are checked per answer",
            limit=DraftLimit.STATEMENTS,
        )


def instruction_sentence(statements: Sequence[Statement], patterns: Sequence[str]) -> bool:
    """True when a non-claim statement (shown without verification: acknowledgements, questions,
    disclaimers) matches a planted-instruction pattern of the policy. Claims are checked by cleanup."""
    return any(not s.is_claim and is_planted(s.text, tuple(patterns)) for s in statements)
