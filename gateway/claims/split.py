"""Stage 4: split a draft into statements and tell claims from conversation.

Each sentence of the answer becomes one or more statements with its character span in the answer.

- A sentence the model listed in ``claims`` (JSON contract) takes that claim's citations and quote;
  several listed claims on one sentence become several statements, each with the span of the
  clause it matches (or the sentence's span).
- Any other informative sentence is split into atomic claims, conservatively: only where it joins
  clauses that each carry their own fact: ``"; "``-joined clauses, ``"X, and Y"`` where Y has its own
  subject and verb, and parallel quantity phrases ("the rate is 28% for men and 1% for women" ->
  "the rate is 28% for men", "the rate is 1% for women"). Lists of objects ("X causes A, B and C")
  stay one claim. An atomic claim carries the span of its clause; its citations are the markers
  inside that clause, else the sentence's.
- Questions, acknowledgements and disclaimers are conversational: kept, never needing support,
  unless they cite a source (then they are claims). A sentence with a number is never conversational.

Markers are ``[n]`` by default; ``/v1/verify`` passes an ``IdMarkers`` reader whose markers are
source ids (``[nice-2023]``), mapped to 1-based source positions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from rapidfuzz import fuzz

from gateway.domain import Draft, DraftClaim, Span, Statement, StatementKind
from gateway.text import (
    MARKER,
    find_markers,
    marker_body_numbers,
    marker_numbers,
    sentence_spans,
    strip_markers,
)

CLAIM_MATCH_MIN = 70.0
"""Least token-set similarity (0..100) for a listed claim to belong to an answer sentence."""

ACKNOWLEDGEMENT_MAX_WORDS = 12
"""Longer sentences are never taken for a mere acknowledgement."""

CLAUSE_MIN_WORDS = 3
"""A clause split off a sentence must have at least this many words to stand as a claim."""


# --- markers -----------------------------------------------------------------------------------


class MarkerReader(Protocol):
    """Finds citation markers in text. ``find`` gives 1-based source numbers; spans are for masking."""

    def find(self, text: str) -> tuple[int, ...]: ...

    def spans(self, text: str) -> list[tuple[int, int]]: ...


class NumericMarkers:
    """``[1]``, ``[2, 3]``: passage numbers as the chat contract writes them."""

    def find(self, text: str) -> tuple[int, ...]:
        return marker_numbers(text)

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [(m.start, m.end) for m in find_markers(text)]


_BRACKETS = re.compile(r"\s*\[([^\[\]\n]{1,200})\]")


class IdMarkers:
    """Markers naming sources by id (``[who-1]``, ``[a, b]``); numbers are positions in ``ids``.

    A bracket group counts as a marker only when every comma-separated part is a known id, or when it
    is a numeric marker of the one grammar (``gateway.text.MARKER``: ``[7]``, ``[1–3]``), whose numbers
    are read as ids (a number naming no source: number 0, which cites nothing that exists).
    """

    UNKNOWN = 0
    """The number a numeric marker gets when no source has its id."""

    def __init__(self, ids: Sequence[str]) -> None:
        self._positions = {source_id: index for index, source_id in enumerate(ids, start=1)}

    def _parts(self, group: str) -> list[str] | None:
        parts = [p.strip() for p in group.split(",")]
        if all(p in self._positions for p in parts):
            return parts
        if MARKER.fullmatch(f"[{group}]"):
            return [str(number) for number in marker_body_numbers(group)]
        return None

    def find(self, text: str) -> tuple[int, ...]:
        found: list[int] = []
        for match in _BRACKETS.finditer(text):
            for part in self._parts(match.group(1)) or []:
                number = self._positions.get(part, self.UNKNOWN)
                if number not in found:
                    found.append(number)
        return tuple(found)

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in _BRACKETS.finditer(text) if self._parts(m.group(1)) is not None]


NUMERIC = NumericMarkers()

_SPACES = re.compile(r"\s+")


def _mask(text: str, markers: MarkerReader) -> str:
    """``text`` with its markers blanked out (same length, so offsets still hold)."""
    chars = list(text)
    for start, end in markers.spans(text):
        chars[start:end] = " " * (end - start)
    return "".join(chars)


_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")


def _plain(text: str, markers: MarkerReader) -> str:
    """``text`` without markers, whitespace collapsed: what a claim says."""
    kept, position = [], 0
    for start, end in markers.spans(text):
        kept.append(text[position:start])
        position = end
    kept.append(text[position:])
    return _SPACE_BEFORE_PUNCT.sub(r"\1", _SPACES.sub(" ", "".join(kept))).strip()


# --- classification ----------------------------------------------------------------------------

_ACKNOWLEDGEMENT = re.compile(
    r"^(hi|hello|thanks?|thank you|you'?re welcome|no problem|i'?m sorry|sorry|i understand|"
    r"i hear you|i can imagine|that sounds|that must be|it'?s understandable|good question|"
    r"great question|i hope|hope this helps|glad|i'?m glad|happy to help|i'?d be happy|of course|"
    r"sure|certainly|absolutely|okay|ok|take care|get well soon|let me know|feel free)\b",
    re.IGNORECASE,
)
_DISCLAIMER = re.compile(
    r"(not (a substitute|medical advice|able to diagnose)|general information|"
    r"(speak|talk|check) (to|with) (your|a) (doctor|gp|pharmacist|clinician|nurse|care team)|"
    r"(ask|contact|see|consult) (your|a) (doctor|gp|pharmacist|clinician|nurse|care team)|"
    r"seek (medical|professional) (advice|help)|i am not a doctor|i'?m not a doctor|"
    r"(the|my|these) (vetted )?sources? (do|does) not|(is|are) not covered by|"
    r"i could not find|i can'?t find|i do not have|i don'?t have)",
    re.IGNORECASE,
)
_DIGIT = re.compile(r"\d")

_AUX = (
    "is are was were be been am can cannot can't could may might must shall should will would won't "
    "do does did don't doesn't didn't has have had isn't aren't wasn't weren't"
)
_VERBS_TEXT = (
    _AUX + " need needs cause causes caused include includes included last lasts lasted affect affects "
    "affected reduce reduces reduced increase increases increased lower lowers lowered raise raises help "
    "helps helped work works worked occur occurs occurred develop develops developed start starts "
    "started get gets got take takes took treat treats treated prevent prevents prevented lead leads led "
    "appear appears appeared become becomes became remain remains remained contain contains require "
    "requires required recommend recommends recommended improve improves improved protect protects "
    "spread spreads go goes went come comes came feel feels felt make makes made keep keeps kept show "
    "shows showed suggest suggests suggested report reports reported recover recovers recovered "
    "clear clears cleared resolve resolves resolved interact interacts damage damages harm harms "
    "rise rises rose fall falls fell carry carries carried trigger triggers triggered"
)
VERBS = frozenset(_VERBS_TEXT.split())
"""Finite verbs the clause splitter recognises (a small closed list: unknown verbs never split)."""

_LEADING_ADVERBS = frozenset({"also", "then", "so", "therefore", "however", "usually", "often", "generally"})


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z][A-Za-z'’-]*|\d+(?:\.\d+)?%?", text.lower().replace("’", "'"))


def _has_verb(words: Sequence[str]) -> bool:
    return any(w in VERBS for w in words)


def _has_subject_and_verb(words: Sequence[str]) -> bool:
    """A verb that is not the first word (after a leading adverb): the clause has its own subject."""
    rest = list(words)
    while rest and rest[0] in _LEADING_ADVERBS:
        rest.pop(0)
    return any(w in VERBS for w in rest[1:]) and bool(rest) and rest[0] not in VERBS


def classify(sentence: str) -> StatementKind:
    """The kind of one answer sentence (markers are ignored)."""
    text = strip_markers(sentence).strip()
    if text.endswith("?"):
        return StatementKind.QUESTION
    if _DIGIT.search(text):
        return StatementKind.CLAIM
    match = _ACKNOWLEDGEMENT.match(text)
    if match and len(text.split()) <= ACKNOWLEDGEMENT_MAX_WORDS:
        rest = text[match.end() :].lstrip(" !.")
        if rest.startswith(","):
            tail = _words(rest)
            if len(tail) >= 5 and _has_subject_and_verb(tail):
                return StatementKind.CLAIM  # "Of course, ibuprofen can upset the stomach."
        return StatementKind.ACKNOWLEDGEMENT
    if _DISCLAIMER.search(text):
        return StatementKind.DISCLAIMER
    return StatementKind.CLAIM


# --- atomic clauses ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Clause:
    """An atomic claim inside a sentence: its text and its offsets in the sentence."""

    text: str
    start: int
    end: int


_CLAUSE_JOIN = re.compile(r";\s+|,\s+(?:and|but|while|whereas|so)\s+", re.IGNORECASE)
_QUANTITY = (
    r"(?:(?:about|around|approximately|roughly|nearly|almost|up to|at least|over|under|less than|"
    r"more than|fewer than)\s+)?"
    r"(?:\d+\s+in\s+\d+|\d+(?:\.\d+)?(?:\s*(?:to|-|–)\s*\d+(?:\.\d+)?)?"
    r"(?:\s*(?:%|percent\b|per cent\b|mg\b|g\b|kg\b|ml\b|mcg\b|micrograms?\b|milligrams?\b|grams?\b|"
    r"units?\b|days?\b|weeks?\b|months?\b|years?\b|hours?\b|times?\b))?)"
)
_QUANTITY_PHRASE = re.compile(
    rf"(?<![\w.]){_QUANTITY}\s+(?:for|in|among|of|at|with)\s+(?=[A-Za-z])", re.IGNORECASE
)
_ITEM_SEPARATOR = re.compile(
    r"^\s*(?:,\s*)?(?:(?:and|or|but|while|whereas|versus|vs\.?|compared with|against)\s+)?$", re.IGNORECASE
)
_GROUP_MAX_WORDS = 4
_TRAILING = " \t\n,;:.!"


def atomic_clauses(sentence: str, markers: MarkerReader = NUMERIC) -> list[Clause]:
    """Split one sentence into the clauses that each carry their own fact (often just one).

    A sentence that does not split comes back whole: its text without markers, offsets 0..len.
    """
    masked = _mask(sentence, markers)
    clauses: list[Clause] = []
    for start, end in _independent_clauses(masked):
        clauses.extend(
            _parallel_quantities(sentence, masked, start, end, markers)
            or [_clause(sentence, masked, start, end, markers)]
        )
    if len(clauses) <= 1:
        return [Clause(_plain(sentence, markers), 0, len(sentence))]
    return clauses


def _trim(sentence: str, masked: str, start: int, end: int, markers: MarkerReader) -> tuple[int, int]:
    """Drop surrounding blanks and joining punctuation; keep the markers that close the clause."""
    while start < end and masked[start].isspace():
        start += 1
    while end > start and masked[end - 1] in _TRAILING:
        end -= 1
    for marker_start, marker_end in markers.spans(sentence):
        if marker_start <= end < marker_end or (marker_start >= end and not masked[end:marker_start].strip()):
            end = max(end, marker_end)
    return start, end


def _clause(sentence: str, masked: str, start: int, end: int, markers: MarkerReader) -> Clause:
    start, end = _trim(sentence, masked, start, end, markers)
    return Clause(_plain(sentence[start:end], markers).rstrip(_TRAILING), start, end)


def _independent_clauses(masked: str) -> list[tuple[int, int]]:
    """Offsets of clauses joined by "; " or ", and" where each side stands alone."""
    pieces: list[tuple[int, int]] = []
    start = 0
    for match in _CLAUSE_JOIN.finditer(masked):
        left = _words(masked[start : match.start()])
        right_end = _next_join(masked, match.end())
        right = _words(masked[match.end() : right_end])
        semicolon = match.group(0).startswith(";")
        left_ok = len(left) >= CLAUSE_MIN_WORDS and _has_verb(left)
        if semicolon:
            right_ok = len(right) >= CLAUSE_MIN_WORDS and _has_verb(right)
        else:
            right_ok = len(right) >= CLAUSE_MIN_WORDS and _has_subject_and_verb(right)
        if left_ok and right_ok:
            pieces.append((start, match.start()))
            start = match.end()
    pieces.append((start, len(masked)))
    return pieces


def _next_join(masked: str, position: int) -> int:
    following = _CLAUSE_JOIN.search(masked, position)
    return following.start() if following else len(masked)


def _parallel_quantities(
    sentence: str, masked: str, start: int, end: int, markers: MarkerReader
) -> list[Clause]:
    """ "PREFIX Q1 for G1 and Q2 for G2 SUFFIX" -> one clause per (Q, G); [] when not that shape."""
    matches = list(_QUANTITY_PHRASE.finditer(masked, start, end))
    if len(matches) < 2:
        return []
    items: list[tuple[int, int]] = []  # (quantity start, group end)
    for index, match in enumerate(matches):
        limit = matches[index + 1].start() if index + 1 < len(matches) else end
        group_end = _group_end(masked, match.end(), limit, last=index + 1 == len(matches))
        if group_end is None:
            return []
        if index + 1 < len(matches) and not _ITEM_SEPARATOR.match(masked[group_end:limit]):
            return []
        items.append((match.start(), group_end))
    prefix = masked[start : items[0][0]]
    suffix = masked[items[-1][1] : end]
    if not _words(prefix) and not _words(suffix):
        return []
    prefix_text = _plain(sentence[start : items[0][0]], markers)
    suffix_text = _plain(sentence[items[-1][1] : end], markers).rstrip(_TRAILING)
    prefix_text = prefix_text.rstrip(_TRAILING)
    clauses = []
    for index, (q_start, g_end) in enumerate(items):
        core = _plain(sentence[q_start:g_end], markers)
        text = " ".join(part for part in (prefix_text, core, suffix_text) if part)
        span_start = start if index == 0 else q_start
        span_end = end if index + 1 == len(items) else g_end
        clauses.append(Clause(text, *_trim(sentence, masked, span_start, span_end, markers)))
    return clauses


def _group_end(masked: str, start: int, limit: int, last: bool) -> int | None:
    """End of the group noun phrase after "Q for": up to 4 words, stopping at a separator or a verb."""
    position = start
    count = 0
    for word in re.finditer(r"[A-Za-z][A-Za-z'’-]*|[,;.:!?]", masked[start:limit]):
        token = word.group(0).lower()
        if token in {",", ";", ".", ":", "!", "?"} or token in {"and", "or", "but", "while", "whereas"}:
            break
        if token in VERBS and count > 0:
            break
        count += 1
        position = start + word.end()
        if count > _GROUP_MAX_WORDS and not last:
            return None
    return position if count else None


# --- split -------------------------------------------------------------------------------------


def split(draft: Draft, markers: MarkerReader = NUMERIC) -> list[Statement]:
    """The draft's statements, in answer order, each with its span in ``draft.answer``."""
    spans = sentence_spans(draft.answer)
    sentences = [draft.answer[s.start : s.end] for s in spans]
    listed = _assign_claims(draft.claims, [_plain(s, markers) for s in sentences])
    statements: list[Statement] = []
    for index, (span, sentence) in enumerate(zip(spans, sentences, strict=True)):
        sentence_markers = markers.find(sentence)
        kind = classify(_plain(sentence, markers))
        if kind is not StatementKind.CLAIM and not sentence_markers and not listed.get(index):
            statements.append(Statement(sentence, span, kind, sentence_index=index))
            continue
        clauses = atomic_clauses(sentence, markers)
        if listed.get(index):
            placed = []
            for claim in listed[index]:
                sub = _best_clause(claim.text, clauses) if len(clauses) > 1 else None
                claim_span = Span(span.start + sub.start, span.start + sub.end) if sub else span
                numbers = claim.source_numbers or _clause_markers(sentence, sub, markers) or sentence_markers
                placed.append(
                    Statement(claim.text, claim_span, StatementKind.CLAIM, numbers, claim.quote, index)
                )
            statements.extend(sorted(placed, key=lambda st: st.span.start))
            continue
        for clause in clauses:
            numbers = _clause_markers(sentence, clause, markers) or sentence_markers
            clause_span = Span(span.start + clause.start, span.start + clause.end)
            statements.append(Statement(clause.text, clause_span, StatementKind.CLAIM, numbers, None, index))
    return statements


def _clause_markers(sentence: str, clause: Clause | None, markers: MarkerReader) -> tuple[int, ...]:
    if clause is None:
        return ()
    return markers.find(sentence[clause.start : clause.end])


def _best_clause(text: str, clauses: Sequence[Clause]) -> Clause | None:
    scores = [fuzz.token_set_ratio(text, c.text) for c in clauses]
    best = max(range(len(scores)), key=scores.__getitem__)
    return clauses[best] if scores[best] >= CLAIM_MATCH_MIN else None


def _assign_claims(claims: tuple[DraftClaim, ...], sentences: list[str]) -> dict[int, list[DraftClaim]]:
    """Map each listed claim to the answer sentence it states (best token-set match)."""
    assigned: dict[int, list[DraftClaim]] = {}
    for claim in claims:
        scores = [fuzz.token_set_ratio(claim.text, s) for s in sentences]
        if not scores:
            break
        best = max(range(len(scores)), key=scores.__getitem__)
        if scores[best] >= CLAIM_MATCH_MIN:
            assigned.setdefault(best, []).append(claim)
    return assigned


def sentence_text(draft: Draft, span: Span) -> str:
    return draft.answer[span.start : span.end]
