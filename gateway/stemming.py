"""The product's one stemmer: Snowball English (snowballstemmer), memoised.

BM25 (``knowledge/lexical.py``), query planning and the verifier's word checks compare words by this
stem, so "reduces", "reduced" and "reducing" are one word everywhere ("reduc").
"""

from __future__ import annotations

from functools import lru_cache

import snowballstemmer

STEMMER_NAME = "snowball-english"
"""Names the stemmer in caches built from its stems (a changed stemmer must not load an old index)."""
STEM_CACHE_WORDS = 65536
"""Distinct words whose stems are memoised (a word's stem never changes)."""

_STEMMER = snowballstemmer.stemmer("english")


@lru_cache(maxsize=STEM_CACHE_WORDS)
def stem(word: str) -> str:
    """The Snowball English stem of one lower-case word."""
    return str(_STEMMER.stemWord(word))
