"""The verifier's word data, loaded from ``data/`` (reviewable data, not code).

``lexicon.yaml`` holds the word lists, ``quantities.yaml`` the number words and units, ``cues.yaml``
the cue patterns (negation, effect, quantifier strength, number bounds). Each file is validated on load
by a pydantic model (``_LexiconFile``, ``_QuantitiesFile``, ``_CuesFile``) through
``gateway.validation``: every key present and no other, each entry a non-empty string without
surrounding spaces, lists and groups non-empty, antonym and spelling entries pairs, numbers positive
(value tables: not negative), cue patterns valid regular expressions. A bad file raises the
ConfigurationError naming the file and the key (start-up stops: the checks cannot run without it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field, Strict, with_config

from gateway.validation import FILE_CONFIG, load_file

DEFAULT_PATH = Path(__file__).with_name("data") / "lexicon.yaml"
QUANTITIES_PATH = DEFAULT_PATH.with_name("quantities.yaml")
CUES_PATH = DEFAULT_PATH.with_name("cues.yaml")
WORD_LISTS = (
    "stopwords",
    "not_negative",
    "not_conditions",
    "class_terms",
    "drug_suffixes",
    "condition_suffixes",
    "dangling_endings",
)
GROUP_LISTS = ("synonyms", "subjects", "populations", "medicines", "conditions", "body_parts")
VALUE_TABLES = ("number_words", "scales", "fractions", "count_words")
CUE_LISTS = (
    "negation_cues",
    "clause_break_words",
    "negation_weakeners",
    "negation_head_skip",
    "conditionals",
    "no_effect",
    "effect",
    "quantifier_universal",
    "quantifier_most",
    "quantifier_many",
    "quantifier_some",
    "number_approximate",
    "number_at_least",
    "number_at_most",
    "role_relations",
    "comparative_more",
    "comparative_less",
    "comparison_anchors",
)


def _trimmed(value: str) -> str:
    if not value or value != value.strip():
        raise ValueError("must be a non-empty string without outer spaces")
    return value


def _regex(value: str) -> str:
    try:
        re.compile(value)
    except re.error as err:
        raise ValueError(f"not a valid regular expression: {err}") from None
    return value


def _character_class(value: str) -> str:
    _regex(f"[{value}]")
    return value


Word = Annotated[str, AfterValidator(_trimmed)]
Words = Annotated[tuple[Word, ...], Field(min_length=1)]
Groups = Annotated[tuple[Words, ...], Field(min_length=1)]
Regex = Annotated[Word, AfterValidator(_regex)]
Patterns = Annotated[tuple[Regex, ...], Field(min_length=1)]
NonNegative = Annotated[float, Strict(), Field(ge=0)]
Positive = Annotated[float, Strict(), Field(gt=0)]
ValueTable = Annotated[dict[Word, NonNegative], Field(min_length=1)]


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class _LexiconFile:
    """``lexicon.yaml`` as written."""

    stopwords: Words
    not_negative: Words
    not_conditions: Words
    class_terms: Words
    drug_suffixes: Words
    condition_suffixes: Words
    dangling_endings: Words
    synonyms: Groups
    subjects: Groups
    populations: Groups
    medicines: Groups
    conditions: Groups
    body_parts: Groups
    antonyms: Annotated[tuple[tuple[Words, Words], ...], Field(min_length=1)]
    spellings: Annotated[tuple[tuple[Word, Word], ...], Field(min_length=1)]


@dataclass(frozen=True)
class Lexicon:
    words: dict[str, tuple[str, ...]]
    """Plain word lists by key (``WORD_LISTS``)."""
    groups: dict[str, tuple[tuple[str, ...], ...]]
    """Groups of surface forms by key (``GROUP_LISTS``); the first form of a group names it."""
    antonyms: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
    spellings: tuple[tuple[str, str], ...]
    """(British, American) spelling pairs, applied in order."""

    def table(self, key: str) -> dict[str, str]:
        """Surface form -> the first form of its group."""
        return {form: group[0] for group in self.groups[key] for form in group}


def load_lexicon(path: Path = DEFAULT_PATH) -> Lexicon:
    data = load_file(path, _LexiconFile)
    return Lexicon(
        words={key: getattr(data, key) for key in WORD_LISTS},
        groups={key: getattr(data, key) for key in GROUP_LISTS},
        antonyms=data.antonyms,
        spellings=data.spellings,
    )


@dataclass(frozen=True)
class QuantityWords:
    """Number words and units (``data/quantities.yaml``), as the number check reads them."""

    values: dict[str, dict[str, float]]
    """Word -> value by key (``VALUE_TABLES``)."""
    periods: dict[str, float]
    """Period word -> rate per day ("weekly" -> 1/7)."""
    units: dict[str, tuple[str, float]]
    """Unit name -> (dimension, factor to the dimension's base unit)."""
    numeric_words: tuple[str, ...]


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class _Unit:
    dimension: Word
    factor: Positive
    """Factor to the dimension's base unit."""
    names: Words


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class _QuantitiesFile:
    """``quantities.yaml`` as written."""

    number_words: ValueTable
    scales: ValueTable
    fractions: ValueTable
    count_words: ValueTable
    periods: Annotated[dict[Word, tuple[Positive, Positive]], Field(min_length=1)]
    """Period word -> [times, days]."""
    units: Annotated[tuple[_Unit, ...], Field(min_length=1)]
    numeric_words: Words


def load_quantity_words(path: Path = QUANTITIES_PATH) -> QuantityWords:
    data = load_file(path, _QuantitiesFile)
    return QuantityWords(
        values={key: dict(getattr(data, key)) for key in VALUE_TABLES},
        periods={word: times / days for word, (times, days) in data.periods.items()},
        units={name: (unit.dimension, unit.factor) for unit in data.units for name in unit.names},
        numeric_words=data.numeric_words,
    )


@dataclass(frozen=True)
class Cues:
    """Cue patterns of the checks (``data/cues.yaml``): regular-expression fragments per key."""

    lists: dict[str, tuple[str, ...]]
    clause_break_punctuation: str
    """The body of a character class: the characters that end a clause."""

    def alternation(self, key: str) -> str:
        """The key's entries as one non-capturing alternation, in file order."""
        return alternation(self.lists[key])

    def pattern(self, template: str) -> re.Pattern[str]:
        """``template`` compiled, each ``<<key>>`` in it replaced by the key's ``alternation``: the one
        way a check builds a pattern from its cue lists."""
        return re.compile(_CUE_KEY.sub(lambda key: self.alternation(key.group(1)), template))


_CUE_KEY = re.compile(r"<<(\w+)>>")


def alternation(entries: Iterable[str], *, literal: bool = False) -> str:
    """``entries`` as one non-capturing alternation, in order: regular-expression fragments as they are
    (``Cues.alternation``), or, ``literal``, words matched as written (each escaped)."""
    return "(?:" + "|".join(map(re.escape, entries) if literal else entries) + ")"


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class _CuesFile:
    """``cues.yaml`` as written."""

    negation_cues: Patterns
    clause_break_words: Patterns
    negation_weakeners: Patterns
    negation_head_skip: Patterns
    conditionals: Patterns
    no_effect: Patterns
    effect: Patterns
    quantifier_universal: Patterns
    quantifier_most: Patterns
    quantifier_many: Patterns
    quantifier_some: Patterns
    number_approximate: Patterns
    number_at_least: Patterns
    number_at_most: Patterns
    role_relations: Patterns
    comparative_more: Patterns
    comparative_less: Patterns
    comparison_anchors: Patterns
    clause_break_punctuation: Annotated[str, Field(min_length=1), AfterValidator(_character_class)]


def load_cues(path: Path = CUES_PATH) -> Cues:
    data = load_file(path, _CuesFile)
    return Cues({key: getattr(data, key) for key in CUE_LISTS}, data.clause_break_punctuation)
