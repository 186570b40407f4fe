"""The verifier's word data, loaded from ``data/`` (reviewable data, not code).

``lexicon.yaml`` holds the word lists, ``quantities.yaml`` the number words and units, ``cues.yaml``
the cue patterns (negation, effect, quantifier strength, number bounds). Validated on load: every
key present and no other, each entry a non-empty string without surrounding spaces, groups non-empty,
antonym and spelling entries pairs, numbers positive, cue patterns valid regular expressions. A bad
file raises ConfigurationError naming the file and the key (start-up stops: the checks cannot run
without it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gateway.errors import ConfigurationError

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
)
GROUP_LISTS = ("synonyms", "populations", "medicines", "conditions", "body_parts")
KEYS = (*WORD_LISTS, *GROUP_LISTS, "antonyms", "spellings")
VALUE_TABLES = ("number_words", "scales", "fractions", "count_words")
QUANTITY_KEYS = (*VALUE_TABLES, "periods", "units", "numeric_words")
CUE_LISTS = (
    "negation_cues",
    "clause_break_words",
    "negation_weakeners",
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
)
CUE_KEYS = (*CUE_LISTS, "clause_break_punctuation")


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


def _strings(value: Any, source: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigurationError(source, key, "must be a non-empty list of strings")
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item or item != item.strip():
            raise ConfigurationError(source, f"{key}[{i}]", "must be a non-empty string without outer spaces")
    return tuple(value)


def _mapping(path: Path, keys: tuple[str, ...], what: str) -> dict[str, Any]:
    """The file's top-level mapping, with exactly ``keys``."""
    source = str(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise ConfigurationError(source, "(file)", f"cannot read the {what}: {err}") from err
    if not isinstance(data, dict):
        raise ConfigurationError(source, "(file)", "must be a mapping")
    unknown = sorted(set(data) - set(keys))
    if unknown:
        raise ConfigurationError(source, unknown[0], "unknown key")
    missing = [k for k in keys if k not in data]
    if missing:
        raise ConfigurationError(source, missing[0], "missing")
    return data


def _pairs(value: Any, source: str, key: str) -> tuple[Any, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigurationError(source, key, "must be a non-empty list of pairs")
    for i, pair in enumerate(value):
        if not isinstance(pair, list) or len(pair) != 2:
            raise ConfigurationError(source, f"{key}[{i}]", "must be a pair")
    return tuple(value)


def load_lexicon(path: Path = DEFAULT_PATH) -> Lexicon:
    source = str(path)
    data = _mapping(path, KEYS, "lexicon")
    words = {key: _strings(data[key], source, key) for key in WORD_LISTS}
    groups: dict[str, tuple[tuple[str, ...], ...]] = {}
    for key in GROUP_LISTS:
        value = data[key]
        if not isinstance(value, list) or not value:
            raise ConfigurationError(source, key, "must be a non-empty list of groups")
        groups[key] = tuple(_strings(group, source, f"{key}[{i}]") for i, group in enumerate(value))
    antonyms = tuple(
        (_strings(a, source, f"antonyms[{i}][0]"), _strings(b, source, f"antonyms[{i}][1]"))
        for i, (a, b) in enumerate(_pairs(data["antonyms"], source, "antonyms"))
    )
    spellings = tuple(
        (british, american)
        for i, pair in enumerate(_pairs(data["spellings"], source, "spellings"))
        for british, american in (_strings(pair, source, f"spellings[{i}]"),)
    )
    return Lexicon(words, groups, antonyms, spellings)


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


def _number(value: Any, source: str, key: str, *, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or (positive and not value):
        raise ConfigurationError(source, key, "must be a positive number" if positive else "must be >= 0")
    return float(value)


def _table(value: Any, source: str, key: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not value:
        raise ConfigurationError(source, key, "must be a non-empty mapping")
    _strings(list(value), source, key)
    return value


def load_quantity_words(path: Path = QUANTITIES_PATH) -> QuantityWords:
    source = str(path)
    data = _mapping(path, QUANTITY_KEYS, "quantity words")
    values = {
        key: {
            word: _number(value, source, f"{key}.{word}", positive=False)
            for word, value in _table(data[key], source, key).items()
        }
        for key in VALUE_TABLES
    }
    periods: dict[str, float] = {}
    for word, rate in _table(data["periods"], source, "periods").items():
        if not isinstance(rate, list) or len(rate) != 2:
            raise ConfigurationError(source, f"periods.{word}", "must be [times, days]")
        times, days = (_number(n, source, f"periods.{word}") for n in rate)
        periods[word] = times / days
    units: dict[str, tuple[str, float]] = {}
    entries = data["units"]
    if not isinstance(entries, list) or not entries:
        raise ConfigurationError(source, "units", "must be a non-empty list")
    for i, entry in enumerate(entries):
        key = f"units[{i}]"
        if not isinstance(entry, dict) or set(entry) != {"dimension", "factor", "names"}:
            raise ConfigurationError(source, key, "must have exactly dimension, factor and names")
        (dimension,) = _strings([entry["dimension"]], source, f"{key}.dimension")
        factor = _number(entry["factor"], source, f"{key}.factor")
        for name in _strings(entry["names"], source, f"{key}.names"):
            units[name] = (dimension, factor)
    numeric = _strings(data["numeric_words"], source, "numeric_words")
    return QuantityWords(values, periods, units, numeric)


@dataclass(frozen=True)
class Cues:
    """Cue patterns of the checks (``data/cues.yaml``): regular-expression fragments per key."""

    lists: dict[str, tuple[str, ...]]
    clause_break_punctuation: str
    """The body of a character class: the characters that end a clause."""

    def alternation(self, key: str) -> str:
        """The key's entries as one non-capturing alternation, in file order."""
        return "(?:" + "|".join(self.lists[key]) + ")"


def _pattern(value: str, source: str, key: str) -> str:
    try:
        re.compile(value)
    except re.error as err:
        raise ConfigurationError(source, key, f"not a valid regular expression: {err}") from None
    return value


def load_cues(path: Path = CUES_PATH) -> Cues:
    source = str(path)
    data = _mapping(path, CUE_KEYS, "cue patterns")
    lists = {
        key: tuple(
            _pattern(entry, source, f"{key}[{i}]") for i, entry in enumerate(_strings(data[key], source, key))
        )
        for key in CUE_LISTS
    }
    punctuation = data["clause_break_punctuation"]
    if not isinstance(punctuation, str) or not punctuation:
        raise ConfigurationError(source, "clause_break_punctuation", "must be a non-empty string")
    _pattern(f"[{punctuation}]", source, "clause_break_punctuation")
    return Cues(lists, punctuation)
