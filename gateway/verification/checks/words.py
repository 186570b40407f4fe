"""Tokens, stems, stopwords and synonyms: the content words the checks and the coverage compare."""

from __future__ import annotations

import itertools
import re
from functools import lru_cache

from gateway.text import normalise, strip_markers
from gateway.verification.lexicon import load_lexicon

WORD = re.compile(r"[a-z0-9]+(?:['’-][a-z0-9]+)*")
STEM_PREFIX = 5
"""Stems are truncated to this many characters: cheap, and merges reduce/reduced/reduction."""
_MIN_ROOT = 3
"""A suffix is stripped only when at least this many characters remain."""

LEXICON = load_lexicon()
"""Word lists (``data/lexicon.yaml``), loaded and validated once at import."""
STOPWORDS = frozenset(LEXICON.words["stopwords"])
_SUFFIXES = LEXICON.words["stem_suffixes"]


CACHE_SIZE = 4096
"""Texts whose analysis is memoised: a passage is checked against every claim and candidate."""
cached = lru_cache(maxsize=CACHE_SIZE)


@cached
def tokens(text: str) -> tuple[str, ...]:
    return tuple(WORD.findall(normalise(strip_markers(text))))


SYNONYMS = LEXICON.table("synonyms")
"""Lay and clinical words for the same thing, counted as one word by coverage ("kids" = "paediatric")."""


@lru_cache(maxsize=CACHE_SIZE * 4)
def stem(word: str) -> str:
    """A crude, deterministic stem: strip one common suffix and a final 'e', then truncate."""
    word = SYNONYMS.get(word, word)
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_ROOT:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > _MIN_ROOT + 1:
        word = word[:-1]
    return word[:STEM_PREFIX]


@cached
def content_stems(text: str) -> frozenset[str]:
    """Stems of the words that carry meaning (no stopwords, no bare numbers)."""
    return frozenset(stem(t) for t in tokens(text) if t not in STOPWORDS and not t.isdigit() and len(t) > 1)


@cached
def all_stems(text: str) -> frozenset[str]:
    """Stems of every word, stopwords included (polarity words like "more" and "less" are stopwords)."""
    return frozenset(stem(t) for t in tokens(text))


@cached
def content_words(text: str) -> tuple[str, ...]:
    """The words that carry meaning, in order (no stopwords, no bare numbers)."""
    return tuple(t for t in tokens(text) if t not in STOPWORDS and not t.isdigit() and len(t) > 1)


@cached
def content_bigrams(text: str) -> frozenset[tuple[str, str]]:
    """Stem pairs of consecutive content words: who does what to whom, roughly."""
    stems = [stem(w) for w in content_words(text)]
    return frozenset(itertools.pairwise(stems))


def bigram_coverage(claim: str, evidence: str) -> float:
    """Share of the claim's content-word bigrams that also occur in the evidence (1.0 with none)."""
    wanted = content_bigrams(claim)
    if not wanted:
        return 1.0
    return len(wanted & content_bigrams(evidence)) / len(wanted)


@cached
def words(text: str) -> frozenset[str]:
    """Every word form of the text, unstemmed (for word lists that stems would blur)."""
    return frozenset(tokens(text))


def coverage(claim: str, evidence: str) -> float:
    """Share of the claim's content stems that occur in the evidence (1.0 for a claim with none)."""
    wanted = content_stems(claim)
    if not wanted:
        return 1.0
    have = content_stems(evidence)
    return len(wanted & have) / len(wanted)
