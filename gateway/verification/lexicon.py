"""The verifier's word lists, loaded from ``data/lexicon.yaml`` (reviewable data, not code).

Validated on load: every key present and no other, each entry a non-empty string without surrounding
spaces, groups non-empty, antonym entries pairs of non-empty lists. A bad file raises
ConfigurationError naming the file and the key (start-up stops: the checks cannot run without it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gateway.errors import ConfigurationError

DEFAULT_PATH = Path(__file__).with_name("data") / "lexicon.yaml"
WORD_LISTS = ("stopwords", "not_negative", "not_conditions", "class_terms")
GROUP_LISTS = ("synonyms", "populations", "medicines", "conditions", "body_parts")
KEYS = (*WORD_LISTS, *GROUP_LISTS, "antonyms")


@dataclass(frozen=True)
class Lexicon:
    words: dict[str, tuple[str, ...]]
    """Plain word lists by key (``WORD_LISTS``)."""
    groups: dict[str, tuple[tuple[str, ...], ...]]
    """Groups of surface forms by key (``GROUP_LISTS``); the first form of a group names it."""
    antonyms: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]

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


def load_lexicon(path: Path = DEFAULT_PATH) -> Lexicon:
    source = str(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise ConfigurationError(source, "(file)", f"cannot read the lexicon: {err}") from err
    if not isinstance(data, dict):
        raise ConfigurationError(source, "(file)", "must be a mapping")
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ConfigurationError(source, unknown[0], "unknown key")
    missing = [k for k in KEYS if k not in data]
    if missing:
        raise ConfigurationError(source, missing[0], "missing")
    words = {key: _strings(data[key], source, key) for key in WORD_LISTS}
    groups: dict[str, tuple[tuple[str, ...], ...]] = {}
    for key in GROUP_LISTS:
        value = data[key]
        if not isinstance(value, list) or not value:
            raise ConfigurationError(source, key, "must be a non-empty list of groups")
        groups[key] = tuple(_strings(group, source, f"{key}[{i}]") for i, group in enumerate(value))
    pairs = data["antonyms"]
    if not isinstance(pairs, list) or not pairs:
        raise ConfigurationError(source, "antonyms", "must be a non-empty list of [words, opposites] pairs")
    antonyms = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, list) or len(pair) != 2:
            raise ConfigurationError(source, f"antonyms[{i}]", "must be a pair [words, opposites]")
        antonyms.append(
            (_strings(pair[0], source, f"antonyms[{i}][0]"), _strings(pair[1], source, f"antonyms[{i}][1]"))
        )
    return Lexicon(words, groups, tuple(antonyms))
