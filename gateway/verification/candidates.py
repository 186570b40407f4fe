"""A cited passage's evidence candidates for the local checker: its sentences, every window of
consecutive sentences, and their vectors (normalised sums of sentence vectors)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np

from gateway.domain import ClaimToCheck, Passage, Span, Vector, unit_rows
from gateway.text import sentence_spans
from gateway.verification.checks.analysis import AnalysedText, Analyses


@dataclass(frozen=True)
class Candidate:
    """A sentence or window of consecutive sentences of one cited passage."""

    source_number: int
    passage: Passage
    span: Span
    evidence: AnalysedText
    """The candidate's text, analysed for the checks."""
    context: AnalysedText
    """The whole passage, analysed: entities are looked for in all of it."""

    @property
    def text(self) -> str:
        return self.evidence.text


def candidate(number: int, passage: Passage, span: Span, text: str, analyses: Analyses) -> Candidate:
    """The candidate with its text and its passage analysed once per request (``analyses``)."""
    return Candidate(number, passage, span, analyses(text), analyses(passage.text))


def passage_sentences(passage: Passage) -> list[tuple[Span, str]]:
    """The passage's sentences: its ingest-time spans, or split now when it has none."""
    if passage.sentence_spans:
        return passage.sentences()
    return [(s, passage.text[s.start : s.end]) for s in sentence_spans(passage.text)]


def has_sentences(claim: ClaimToCheck) -> bool:
    """Does a cited passage have a sentence to compare the claim with (else no similarity is needed)?"""
    return any(passage_sentences(passage) for _, passage in claim.sources)


def has_vectors(passage: Passage) -> bool:
    vectors = passage.sentence_vectors
    return (
        vectors is not None
        and passage.sentence_spans != ()
        and vectors.shape[0] == len(passage.sentence_spans)
    )


def windows(count: int, longest: int) -> list[tuple[int, int]]:
    """(first, last-exclusive) sentence indices of every window of 1..``longest`` sentences."""
    return [(i, i + n) for n in range(1, longest + 1) for i in range(count - n + 1)]


def window_vectors(sentence_vectors: Vector, spans: Sequence[tuple[int, int]]) -> Vector:
    """Normalised sum of each window's sentence vectors (cumulative sums: no per-window Python loop)."""
    first = np.fromiter((a for a, _ in spans), dtype=np.intp, count=len(spans))
    last = np.fromiter((b for _, b in spans), dtype=np.intp, count=len(spans))
    return _summed(sentence_vectors, first, last)


def _summed(sentence_vectors: Vector, first: np.ndarray, last: np.ndarray) -> Vector:
    vectors = np.asarray(sentence_vectors, dtype=np.float32)
    cumulative = np.zeros((vectors.shape[0] + 1, vectors.shape[1]), dtype=np.float32)
    np.cumsum(vectors, axis=0, out=cumulative[1:])
    return unit_rows(cumulative[last] - cumulative[first])


Layout = tuple[tuple[tuple[int, int], ...], np.ndarray, np.ndarray, np.ndarray]


@lru_cache(maxsize=128)
def window_layout(count: int, longest: int) -> Layout:
    """``windows(count, longest)`` with its first and last-exclusive indices and which are single
    sentences, as read-only arrays: the same for every passage of ``count`` sentences."""
    bounds = tuple(windows(count, longest))
    first = np.array([a for a, _ in bounds], dtype=np.intp)
    last = np.array([b for _, b in bounds], dtype=np.intp)
    singles = np.array([b - a == 1 for a, b in bounds], dtype=bool)
    for array in (first, last, singles):
        array.flags.writeable = False
    return bounds, first, last, singles


@dataclass(frozen=True)
class PassageIndex:
    """One passage's evidence candidates: windows of sentences and their vectors."""

    spans: tuple[Span, ...]
    texts: tuple[str, ...]
    singles: np.ndarray
    vectors: Vector


def index_passage(passage: Passage, sentence_vectors: Vector, longest: int) -> PassageIndex:
    sentences = passage_sentences(passage)
    bounds, first, last, singles = window_layout(len(sentences), longest)
    spans = tuple(Span(sentences[a][0].start, sentences[b - 1][0].end) for a, b in bounds)
    texts = tuple(passage.text[s.start : s.end] for s in spans)
    return PassageIndex(spans, texts, singles, _summed(sentence_vectors, first, last))


class TextEncoder(Protocol):
    """What the verifier needs of ``gateway.models.embedding.Embedder``: unit vectors per text."""

    def encode(self, texts: Sequence[str]) -> Vector: ...


def encode_distinct(encoder: TextEncoder, texts: Sequence[str]) -> Vector:
    """One vector per text, in order, each distinct text encoded once. Without repeats the encoder
    gets exactly ``texts`` (the same call, the same vectors); with them, the distinct texts in order
    of first appearance."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    distinct = list(dict.fromkeys(texts))
    encoded = encoder.encode(distinct)
    if len(distinct) == len(texts):
        return encoded
    row = {text: i for i, text in enumerate(distinct)}
    return encoded[[row[text] for text in texts]]
