"""``policies/vocabulary.yaml``: brand -> generic and lay -> clinical terms, and how the query planner
finds its keys in a message (whole words, singular or plural; query.py inserts the terms). The
question kinds' ``search_words`` (``policies/extractive.yaml``) are found the same way."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field, model_validator, with_config

from gateway.validation import FILE_CONFIG, field_error, read_yaml, refuse, validate

WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]")
"""A word of the message as spelling correction and the vocabulary read it."""
_WORD = WORD


@dataclass(frozen=True)
class Synonyms:
    """``policies/vocabulary.yaml``: brand -> generic and lay -> clinical terms, keys lower-case, and
    the question kinds' wordings (``lexical_only``: their terms go to BM25, never into the dense text)."""

    terms: dict[str, tuple[str, ...]]
    lexical_only: frozenset[str] = frozenset()

    @cached_property
    def by_form(self) -> dict[tuple[str, ...], str]:
        """Each key by its words' ``_key_form`` ("bladder infections" -> ("bladder", "infection")):
        a key is found in the singular or the plural; of two keys with one form, the longer written
        (then the first in order) is kept."""
        found: dict[tuple[str, ...], str] = {}
        for key in sorted(self.terms, key=len, reverse=True):
            found.setdefault(_key_forms(key), key)
        return found

    @cached_property
    def longest(self) -> int:
        return max((len(k) for k in self.by_form), default=0)

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, key) of each key found in ``text``, longest first, not overlapping."""
        words = list(_KEY_WORD.finditer(text))
        stems = [_key_form(w.group(0)) for w in words]
        found: list[tuple[int, int, str]] = []
        i = 0
        while i < len(words):
            for n in range(min(self.longest, len(words) - i), 0, -1):
                key = self.by_form.get(tuple(stems[i : i + n]))
                if key is not None:
                    found.append((words[i].start(), words[i + n - 1].end(), key))
                    i += n
                    break
            else:
                i += 1
        return found

    @cached_property
    def words(self) -> frozenset[str]:
        """Every single word of a key: known words that spelling correction leaves alone."""
        return frozenset(w for key in self.terms for w in _WORD.findall(key))


_VOCABULARY_GROUPS = ("brands", "lay_terms")


_KEY_WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")
"""A word of a vocabulary key or of the text it is looked for in (hyphenated words are one word)."""


def _key_form(word: str) -> str:
    """A word as vocabulary keys are compared: lower-case, a plural read as its singular
    ("infections" = "infection", "allergies" = "allergy"). Only the plural: a Snowball stem also
    merges "cramping" into the key "cramps" (muscle cramps), and on the ``own`` set that cost more
    than it found."""
    word = word.lower()
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _key_forms(key: str) -> tuple[str, ...]:
    return tuple(_key_form(w) for w in _KEY_WORD.findall(key))


key_forms = _key_forms
"""A phrase's words as vocabulary keys and mined aliases (aliases.py) are compared."""


def _text(value: str) -> str:
    if not value.strip():
        raise ValueError("must be non-empty text")
    return value


_Text = Annotated[str, AfterValidator(_text)]
_Group = dict[_Text, Annotated[tuple[_Text, ...], Field(min_length=1)]] | None
"""A vocabulary group: word -> its terms (a non-empty list); empty or absent: none."""
Group = _Group


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class _VocabularyFile:
    """``policies/vocabulary.yaml`` as written."""

    brands: _Group = None
    lay_terms: _Group = None

    @model_validator(mode="after")
    def _each_word_once(self) -> _VocabularyFile:
        seen: set[str] = set()
        for group in _VOCABULARY_GROUPS:
            for key in getattr(self, group) or {}:
                normal = " ".join(key.lower().split())
                if normal in seen:
                    raise field_error("Synonyms", f"{group}.{key}", "this word is already listed")
                seen.add(normal)
        return self


def load_vocabulary(
    path: Path, search_words: Sequence[tuple[str, Sequence[str]]] = (), source: str = "extractive.yaml"
) -> Synonyms:
    """Load and check the vocabulary file, with the question kinds' ``search_words`` of ``source``
    (BM25 only: what a question asks, worded as the sources title their sections, is a ranking hint
    among one topic's sections, not a topic for MiniLM). Any problem names the file and the key; a
    phrase is listed once across both files."""
    raw = read_yaml(path)
    if isinstance(raw, dict) and "question_types" in raw:  # an override written before the fold
        refuse(
            str(path),
            "question_types",
            "moved: list each phrase under its kind's search_words in extractive.yaml question_kinds",
        )
    data = validate(_VocabularyFile, raw, str(path))
    terms: dict[str, tuple[str, ...]] = {}
    for group in _VOCABULARY_GROUPS:
        for key, values in (getattr(data, group) or {}).items():
            terms[" ".join(key.lower().split())] = tuple(" ".join(v.split()) for v in values)
    lexical_only: set[str] = set()
    for phrase, words in search_words:
        normal = " ".join(phrase.lower().split())
        if normal in terms:
            refuse(source, f"question_kinds.search_words.{phrase}", "this word is already listed")
        terms[normal] = tuple(" ".join(w.split()) for w in words)
        lexical_only.add(normal)
    return Synonyms(terms, frozenset(lexical_only))
