"""Tokens, stems, stopwords and synonyms: the content words the checks and the coverage compare."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Protocol

from gateway.stemming import stem as snowball_stem
from gateway.text import normalise, strip_markers
from gateway.verification.lexicon import Cues, Lexicon, load_cues, load_lexicon


class StemmedText(Protocol):
    """What coverage reads of a text (``analysis.AnalysedText`` provides it)."""

    @property
    def content_stems(self) -> frozenset[str]: ...
    @property
    def content_bigrams(self) -> frozenset[tuple[str, str]]: ...


WORD = re.compile(r"[a-z0-9]+(?:['’-][a-z0-9]+)*")


@dataclass(frozen=True)
class WordData:
    """The verifier's word data, read and validated once (``word_data``)."""

    lexicon: Lexicon
    """Word lists (``data/lexicon.yaml``)."""
    cues: Cues
    """Cue patterns (``data/cues.yaml``): negation, effect, quantifier strength, number bounds, roles."""
    stopwords: frozenset[str]
    synonyms: dict[str, str]
    """Lay and clinical words for the same thing, counted as one word ("kids" = "paediatric")."""


@cache
def word_data() -> WordData:
    """The word data, loaded on first use: the verifier loads it when it is built, so a bad file stops
    start-up naming the file and entry, and importing the checks reads no file."""
    lists = load_lexicon()
    return WordData(lists, load_cues(), frozenset(lists.words["stopwords"]), lists.table("synonyms"))


def cues() -> Cues:
    return word_data().cues


STEM_CACHE_WORDS = 16384
"""Distinct words whose stems are memoised (a word's stem never changes)."""


def lexicon() -> Lexicon:
    """Word lists (``data/lexicon.yaml``)."""
    return word_data().lexicon


def stopwords() -> frozenset[str]:
    return word_data().stopwords


def synonyms() -> dict[str, str]:
    """Lay and clinical words for the same thing, counted as one word by coverage ("kids" = "paediatric")."""
    return word_data().synonyms


def tokens(text: str) -> tuple[str, ...]:
    return tuple(WORD.findall(normalise(strip_markers(text))))


@lru_cache(maxsize=STEM_CACHE_WORDS)
def stem(word: str) -> str:
    """One word's matching key, the one stemmer of the checks and the binding: its synonym group's
    head (``synonyms``), then the Snowball English stem ("reduces", "reduced" -> "reduc")."""
    return snowball_stem(word_data().synonyms.get(word, word))


def is_content(token: str) -> bool:
    """Does the token carry meaning (not a stopword, not a bare number, not a single character)?"""
    return token not in word_data().stopwords and not token.isdigit() and len(token) > 1


def content_words(text: str) -> tuple[str, ...]:
    """The words that carry meaning, in order (no stopwords, no bare numbers)."""
    return tuple(t for t in tokens(text) if is_content(t))


def bigram_coverage(claim: StemmedText, evidence: StemmedText) -> float:
    """Share of the claim's content-word bigrams that also occur in the evidence (1.0 with none)."""
    wanted = claim.content_bigrams
    if not wanted:
        return 1.0
    return len(wanted & evidence.content_bigrams) / len(wanted)


def coverage(claim: StemmedText, evidence: StemmedText) -> float:
    """Share of the claim's content stems that occur in the evidence (1.0 for a claim with none)."""
    wanted = claim.content_stems
    if not wanted:
        return 1.0
    return len(wanted & evidence.content_stems) / len(wanted)
