"""Sentence boundaries and text normalisation shared by ingestion, splitting and verification."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from pydantic import ConfigDict, field_validator
from pydantic.dataclasses import dataclass as pydantic_dataclass

from gateway.domain import Passage, Span
from gateway.validation import load_file

_ABBREVIATIONS = {
    "e.g",
    "i.e",
    "etc",
    "vs",
    "dr",
    "mr",
    "mrs",
    "ms",
    "prof",
    "approx",
    "fig",
    "no",
    "st",
    "jr",
    "sr",
    "inc",
    "ltd",
    "co",
    "u.s",
    "u.k",
    "a.m",
    "p.m",
    "min",
    "max",
    "mg",
    "ml",
    "wk",
    "wks",
    "hr",
    "hrs",
}
_RANGE_DASH = "[-–—]"
_MARKER_ITEM = rf"\d+(?:\s*{_RANGE_DASH}\s*\d+)?"
_MARKER_BODY = rf"{_MARKER_ITEM}(?:\s*,\s*{_MARKER_ITEM})*"
_BOUNDARY = re.compile(
    rf"([.!?]+)([\"')\]]*)(\s+(?:\[{_MARKER_BODY}\]\s*)?)(?=(?:[-*•]\s+)?[\"'(\[]?[A-Z0-9])"
    r"|\n\s*\n|\n(?=\s*[-*•]\s)"
)
_TYPED_BOUNDARY = re.compile(
    rf"([.!?]+)([\"')\]]*)(\s+(?:\[{_MARKER_BODY}\]\s*)?)(?=(?:[-*•]\s+)?[\"'(\[]?[A-Za-z0-9])|\n"
)
_EVERY_STOP_BOUNDARY = re.compile(
    rf"([.!?]+)([\"')\]\u201d\u2019]*)(\s+(?:\[{_MARKER_BODY}\]\s*)?(?=\S)|(?=[A-Za-z]))|\n"
)
_MARKER_TAIL = re.compile(rf"\s*(\[{_MARKER_BODY}\])+")
_BULLET = re.compile(r"\s*[-*•]\s+|\s+")
_WORD = re.compile(r"\S+")
MAX_SENTENCE_WORDS = 60
"""Longer runs (unpunctuated lists, tables flattened to text) are cut into pieces of at most this
many words: a verifier's evidence span stays precise, and MiniLM (which reads 256 tokens at most)
sees all of it."""
_MIN_PIECE_WORDS = 15
_PIECE_BREAKS = ("\n", "; ", ": ", ", ", " - ")


def sentence_spans(
    text: str,
    *,
    typed: bool = False,
    every_stop: bool = False,
    abbreviations: bool = True,
    max_words: int | None = MAX_SENTENCE_WORDS,
) -> list[Span]:
    """Character spans of the sentences in ``text``, trimmed of surrounding whitespace.

    Splits at terminal punctuation followed by a capital or digit (or by an inline bullet, as in
    "... phases. - The treatment"), at blank lines and before bullet items (the marker is left out of
    the span), and cuts runs longer than ``MAX_SENTENCE_WORDS``; does not split after common
    abbreviations or inside decimals ("0.5 mg"). Citation markers that follow a full stop
    ("... daily. [2] Next") stay with the sentence they close.

    ``typed``: text a patient typed (a chat message, a search query), where a sentence may start in
    lower case ("hi. i have a cough. what can i take") and each line is its own thought: it also
    splits before a lower-case word and at every line break. The abbreviations and decimals are
    the same: one splitter for the knowledge base, the drafts, the repeat bound, query planning and
    triage.

    Triage reads a message clause by clause and must not lose a boundary a patient meant (typed
    text only): ``every_stop``, a stop ends a sentence whatever follows it, a letter directly
    ("it hurts.Then", "cant breathe.im scared"; a decimal still does not), curly quotes ("better.”
    I've") or no word ("... :(", ". . ."); ``abbreviations`` false, a stop after a listed
    abbreviation or an initial ends one too ("said no. It started ..."), and ``max_words`` None, an
    overlong run is never cut (the cut would part a negation from what it negates).
    """
    spans: list[Span] = []
    start = 0
    boundary = (_EVERY_STOP_BOUNDARY if every_stop else _TYPED_BOUNDARY) if typed else _BOUNDARY
    for match in boundary.finditer(text):
        if match.group(1):
            before = text[start : match.start()].rsplit(None, 1)
            word = before[-1] if before else ""
            if abbreviations and (word.lower().rstrip(".") in _ABBREVIATIONS or re.fullmatch(r"[A-Z]", word)):
                continue
            end = match.end(2)
            marker = _MARKER_TAIL.match(text, end)
            if marker:
                end = marker.end()
        else:
            end = match.start()
        _append(spans, text, start, end, max_words)
        start = end
    _append(spans, text, start, len(text), max_words)
    return spans


def _append(
    spans: list[Span], text: str, start: int, end: int, max_words: int | None = MAX_SENTENCE_WORDS
) -> None:
    """Append the trimmed span, cut into pieces of at most ``max_words`` words (None: never cut)."""
    while end > start and text[end - 1].isspace():
        end -= 1
    while True:
        lead = _BULLET.match(text, start, end)
        if lead:
            start = lead.end()
        if end <= start:
            return
        if max_words is None:
            spans.append(Span(start, end))
            return
        words = [m.start() for m in islice(_WORD.finditer(text, start, end), max_words + 1)]
        if len(words) <= max_words:
            spans.append(Span(start, end))
            return
        cut = _piece_end(text, words[min(_MIN_PIECE_WORDS, max_words)], words[max_words])
        piece_end = cut
        while text[piece_end - 1].isspace():
            piece_end -= 1
        spans.append(Span(start, piece_end))
        start = cut


def _piece_end(text: str, floor: int, limit: int) -> int:
    """Cut an overlong run after its strongest clause break in ``[floor, limit)``, else at ``limit``."""
    for mark in _PIECE_BREAKS:
        found = text.rfind(mark, floor, limit)
        if found > 0:
            return found + len(mark)
    return limit


def split_sentences(text: str, *, typed: bool = False) -> list[str]:
    return [text[s.start : s.end] for s in sentence_spans(text, typed=typed)]


_SPACES = re.compile(r"\s+")
QUOTE_FOLDS = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "\u00a0": " "})


# --- citation markers: the one grammar ---------------------------------------------------------

MARKER = re.compile(rf"\[({_MARKER_BODY})\]")
"""A citation marker: passage numbers in square brackets, single (``[1]``), listed with commas
(``[2, 3]``), ranged with ``-``, ``–`` or ``—`` (``[1–3]``) or mixed (``[1, 3–5]``). The one grammar:
the splitter, the repeat bound, the contract reader, cleanup and the streamed release all read markers
through it."""
MARKER_SPACED = re.compile(r"\s*" + MARKER.pattern)
_MARKER_PART = re.compile(rf"(\d+)(?:\s*{_RANGE_DASH}\s*(\d+))?")
MAX_MARKER_RANGE = 50
"""A range wider than this (``[1–5000]``) is read as its two ends only: no marker expands into
thousands of citations (numbers naming no passage are dropped where the passages are known)."""


@dataclass(frozen=True)
class Marker:
    """One citation marker in a text: its span (with the blanks before it) and its passage numbers."""

    start: int
    end: int
    numbers: tuple[int, ...]


def marker_body_numbers(body: str) -> tuple[int, ...]:
    """The passage numbers of a marker's inside (``"1, 3–5"`` -> 1, 3, 4, 5), in order, once each."""
    numbers: list[int] = []
    for part in _MARKER_PART.finditer(body):
        first = int(part.group(1))
        last = int(part.group(2)) if part.group(2) else first
        low, high = min(first, last), max(first, last)
        span = range(low, high + 1) if high - low <= MAX_MARKER_RANGE else (low, high)
        for number in span:
            if number not in numbers:
                numbers.append(number)
    return tuple(numbers)


def find_markers(text: str) -> list[Marker]:
    """The citation markers of ``text`` in order; each span takes the blanks before the marker."""
    return [
        Marker(match.start(), match.end(), marker_body_numbers(match.group(1)))
        for match in MARKER_SPACED.finditer(text)
    ]


def marker_numbers(text: str) -> tuple[int, ...]:
    """The passage numbers cited by the markers of ``text``, in order of appearance, once each."""
    numbers: list[int] = []
    for marker in find_markers(text):
        numbers.extend(n for n in marker.numbers if n not in numbers)
    return tuple(numbers)


def collapse_spaces(text: str) -> str:
    """Every run of whitespace as one space, none at either end (``\\s+`` -> " ", then ``strip``).

    A printable text's only whitespace is the ASCII space (``str.isprintable``: every other space is
    a Unicode separator or control character), so without two spaces in a row it has no run to
    collapse, and the regular expression is skipped (most texts: checked once per text and analysis)."""
    if "  " not in text and text.isprintable():
        return text.strip()
    return _SPACES.sub(" ", text).strip()


def strip_markers(text: str) -> str:
    """Remove inline citation markers such as ``[1]``, ``[2, 3]`` or ``[1–3]``; collapse whitespace."""
    if "[" in text:  # every marker opens with one: most texts have none
        text = MARKER_SPACED.sub("", text)
    return collapse_spaces(text)


def normalise(text: str) -> str:
    """Lower-case, unify quotes and dashes, collapse whitespace: for matching, never for display.
    (An ASCII text is its own NFKC form and has none of the quotes and dashes unified.)"""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(QUOTE_FOLDS)
    return collapse_spaces(text).lower()


def passage_from_text(
    text: str,
    passage_id: str = "p1",
    *,
    document_id: str | None = None,
    title: str = "",
    url: str = "",
    org: str = "",
    tier: str = "unknown",
    score: float = 1.0,
    splitter: Callable[[str], Sequence[Span]] | None = None,
) -> Passage:
    """A passage for text that did not come from the store (given sources, dev rows, tests).

    ``splitter``: how its sentences are found (default ``sentence_spans``; a bench compares others)."""
    return Passage(
        id=passage_id,
        document_id=document_id if document_id is not None else passage_id,
        text=text,
        title=title,
        url=url,
        org=org,
        tier=tier,
        reviewed_on=None,
        score=score,
        sentence_spans=tuple((splitter or sentence_spans)(text)),
    )


# --- question words ------------------------------------------------------------------------------

QUESTION_WORDS_PATH = Path(__file__).with_name("data") / "question_words.yaml"
_LOWER_WORD = re.compile(r"[a-z]+")


@pydantic_dataclass(config=ConfigDict(extra="forbid"))
class QuestionWords:
    """The question-word list (``data/question_words.yaml``): lower-case words, at least one."""

    words: tuple[str, ...]

    @field_validator("words")
    @classmethod
    def _lower_words(cls, words: tuple[str, ...]) -> tuple[str, ...]:
        if not words:
            raise ValueError("must list at least one word")
        for word in words:
            if not _LOWER_WORD.fullmatch(word):
                raise ValueError(f"{word!r} is not a lower-case word")
        return words


def load_question_words(path: Path | None = None) -> frozenset[str]:
    """Words that make a line or query that starts with them ask something (``QUESTION_WORDS_PATH``
    unless ``path``): read when a component that uses them is built at start-up (the extractive
    responder, a knowledge store without a query planner) and held by it; a bad file stops the build
    with a ConfigurationError naming it."""
    return frozenset(load_file(path or QUESTION_WORDS_PATH, QuestionWords).words)
