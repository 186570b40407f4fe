"""A message cut into the clauses triage reads, each a sentence or part of one.

Sentences come from the product's one splitter (``gateway.text.sentence_spans``) in its typed mode,
with the options triage needs: every stop ends a sentence, even one directly followed by a letter
("it hurts.Then") or by no word ("... :("), a listed abbreviation does not hold one together ("said
no. It started"), and no overlong run is cut.
Each sentence is then cut at its clause breaks: ";", " - ", "but", "however", "although", "though",
", then" / ", now", and a comma before a question ("..., can I take ..."), so that a negation,
a history word or a supposing clause governs only its own clause.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from gateway.text import sentence_spans

_CLAUSE_END = re.compile(
    r";+\s*|\s+-\s+|,?\s+(?:but|however|although|though)\s+"
    r"|,\s*(?:and then|and now|then|now)\b|\s+and now\b"
    r"|,\s*(?=(?:can|could|should|is|are|what|how|when|will|would|do|does)\s+(?:i|it|he|she|they|we|you|that|this)\b)",
    re.IGNORECASE,
)
_STOP = re.compile(r"([.!?;]+)[\"')\]\u201d\u2019]*$")
"""A sentence's closing stop (its closing quotes and brackets are dropped with it)."""
_PARAGRAPH = re.compile(r"\n\s*\n")


class Clause(NamedTuple):
    text: str
    end: str
    """What ended it (".", "?", "!", ";", "-", ", but", ", then", ...; "." when nothing did)."""
    paragraph: int
    """The paragraph it is in (0 first): blank lines part them."""


def clauses(text: str) -> list[Clause]:
    """The clauses of ``text``, in order; empty ones left out."""
    found: list[Clause] = []
    last, paragraph = 0, 0
    for span in sentence_spans(text, typed=True, every_stop=True, abbreviations=False, max_words=None):
        paragraph += bool(_PARAGRAPH.search(text, last, span.start))
        last = span.end
        sentence = text[span.start : span.end]
        stop = _STOP.search(sentence)
        body, end = (sentence[: stop.start()], stop.group(1)) if stop else (sentence, "")
        start = 0
        for match in [*_CLAUSE_END.finditer(body), None]:
            cut = match.start() if match is not None else len(body)
            part = body[start:cut].strip()
            if part:
                ended = match.group(0).strip() if match is not None else end
                found.append(Clause(part, ended or ".", paragraph))
            if match is not None:
                start = match.end()
    return found


class _Ended(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def end(self) -> str: ...


def joined_by_dash(parts: Sequence[_Ended], index: int) -> str:
    """Clause ``index`` with its neighbours joined to it by a dash ("right arm numb - is it the
    scarring"): the splitter cuts at " - ", but what excepts a sign (``TermGroup.unless``) may lie beside."""
    first = last = index
    while first > 0 and parts[first - 1].end == "-":
        first -= 1
    while last < len(parts) - 1 and parts[last].end == "-":
        last += 1
    return " - ".join(p.text for p in parts[first : last + 1])


_PUNCTUATION_BREAK = r"[,;:()]|\s-\s"
"""Marks that part a clause into the phrases a date can belong to (its words: ``DateParts``)."""


@dataclass(frozen=True)
class DateParts:
    """What parts a clause into the phrases a date can belong to ("had my knee done years ago | and | was
    in hospital last week"), built from ``evidence.yaml`` ``term_dates`` (``TermDatesPolicy``)."""

    breaks: re.Pattern[str]
    """Punctuation, a break word, or an "and" only before a new subject, verb or time (``and_before``),
    not between nouns ("surgery on my hip and knee 5 years ago")."""
    filler: re.Pattern[str]
    """Filler words at a part's start, not counted in its length."""
    date_words: int
    """A neighbouring part this many words long at most (filler first not counted) is the term's date
    told beside it: "had an operation, years ago", "..., which was many years ago", "in 2015, I had my
    hip done"."""

    @classmethod
    def of(
        cls, break_words: Sequence[str], and_before: Sequence[str], filler: Sequence[str], date_words: int
    ) -> DateParts:
        breaks = [_PUNCTUATION_BREAK]
        if break_words:
            breaks.append(r"\b(?:" + "|".join(map(re.escape, break_words)) + r")\b")
        if and_before:
            breaks.append(r"\band\b(?=\s+(?:" + "|".join(map(re.escape, and_before)) + r")\b)")
        filled = r"^\s*(?:(?:" + "|".join(map(re.escape, filler)) + r")\s+)*" if filler else r"^\s*"
        return cls(re.compile("|".join(breaks), re.IGNORECASE), re.compile(filled, re.IGNORECASE), date_words)


_WORD = re.compile(r"[A-Za-z0-9]+")


def attached(text: str, start: int, end: int, matches: Callable[[str], bool], parts: DateParts) -> bool:
    """Whether ``matches`` (a group's ``unless``, ``TermGroup.unless_scope: term``) holds for the term at
    ``text[start:end]`` alone: in its own part of the clause (between ``parts.breaks``), or in a short
    part right before or after it that is only the date; not in a part about something else ("had my knee
    done years ago and was in hospital last week": the date is the knee's, not the stay's)."""
    breaks = [
        (m.start(), m.end()) for m in parts.breaks.finditer(text) if m.end() <= start or m.start() >= end
    ]
    before = [b for b in breaks if b[1] <= start]
    after = [b for b in breaks if b[0] >= end]
    own = (before[-1][1] if before else 0, after[0][0] if after else len(text))
    if matches(text[own[0] : own[1]]):
        return True
    previous = text[before[-2][1] if len(before) > 1 else 0 : before[-1][0]] if before else ""
    following = text[after[0][1] : after[1][0] if len(after) > 1 else len(text)] if after else ""
    return any(
        len(_WORD.findall(parts.filler.sub("", part))) <= parts.date_words and matches(part)
        for part in (previous, following)
    )
