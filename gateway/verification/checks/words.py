"""Tokens, stems, stopwords and synonyms: the content words the checks and the coverage compare."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from gateway.stemming import stem as snowball_stem
from gateway.text import normalise, strip_markers
from gateway.verification.lexicon import CUES_PATH, Cues, Lexicon, load_cues, load_lexicon
from gateway.verification.lexicon import DEFAULT_PATH as LEXICON_PATH


class StemmedText(Protocol):
    """What coverage reads of a text (``analysis.AnalysedText`` provides it)."""

    @property
    def content_stems(self) -> frozenset[str]: ...
    @property
    def content_bigrams(self) -> frozenset[tuple[str, str]]: ...


WORD = re.compile(r"[a-z0-9]+(?:['’-][a-z0-9]+)*")


@dataclass(frozen=True)
class WordData:
    """The checks' words: lists, cues, stopwords and synonyms (``load``; ``CheckData.words``)."""

    lexicon: Lexicon
    """Word lists (``data/lexicon.yaml``)."""
    cues: Cues
    """Cue patterns (``data/cues.yaml``): negation, effect, quantifier strength, number bounds, roles."""
    stopwords: frozenset[str]
    synonyms: dict[str, str]
    """Lay and clinical words for the same thing, counted as one word ("kids" = "paediatric")."""

    @classmethod
    def load(cls, lexicon: Path = LEXICON_PATH, cues: Path = CUES_PATH) -> WordData:
        """Read and validate ``data/lexicon.yaml`` and ``data/cues.yaml`` (``CheckData.load``)."""
        lists = load_lexicon(lexicon)
        return cls(lists, load_cues(cues), frozenset(lists.words["stopwords"]), lists.table("synonyms"))

    def stem(self, word: str) -> str:
        """One word's matching key, the one stemmer of the checks and the binding: its synonym group's
        head (``synonyms``), then the Snowball English stem ("reduces", "reduced" -> "reduc"; memoised
        by ``gateway.stemming``)."""
        return snowball_stem(self.synonyms.get(word, word))

    def is_content(self, token: str) -> bool:
        """Does the token carry meaning (not a stopword, not a bare number, not a single character)?"""
        return token not in self.stopwords and not token.isdigit() and len(token) > 1

    def content_words(self, text: str) -> tuple[str, ...]:
        """The words that carry meaning, in order (no stopwords, no bare numbers)."""
        return tuple(t for t in tokens(text) if self.is_content(t))


def tokens(text: str) -> tuple[str, ...]:
    return tuple(WORD.findall(normalise(strip_markers(text))))


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
