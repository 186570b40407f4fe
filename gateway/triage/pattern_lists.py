"""Named lists of patterns that more than one policy file reads: ``policies/triage/pattern_lists.yaml``.

A YAML anchor does not cross files, so a list that an operating context's triage rule
(``contexts/<name>.yaml``) and an ``evidence.yaml`` term group both read is written once, by name (the
wish to be dead: ``death_wish``). A rule or a group names lists under ``pattern_lists``; the loader reads
their patterns after the rule's or group's own ``patterns``, in the order named, before the file is
validated, so the models see plain ``patterns``. A name not in the file is refused, naming the file and
the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import with_config

from gateway.validation import FILE_CONFIG, compile_all, field_error, load_file, refuse

FILE_NAME = "pattern_lists.yaml"
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
RULE_GROUPS = ("emergency", "non_clinical", "out_of_scope")
"""The lists of triage rules of an operating context that may name pattern lists."""


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class PatternLists:
    lists: dict[str, tuple[str, ...]]
    """Each list's name (lower_snake_case) and its case-insensitive regular expressions."""

    def __post_init__(self) -> None:
        for name, patterns in self.lists.items():
            if not _NAME.match(name):
                raise field_error(self, f"lists.{name}", "names are lower_snake_case")
            if not patterns:
                raise field_error(self, f"lists.{name}", "a list needs at least one pattern")
            compile_all(self, patterns, f"lists.{name}")


def load_pattern_lists(directory: Path) -> PatternLists:
    """The lists of ``directory``'s ``pattern_lists.yaml`` (none when there is no such file)."""
    path = directory / FILE_NAME
    return load_file(path, PatternLists) if path.is_file() else PatternLists({})


def with_lists(entry: Any, lists: PatternLists, source: str, key: str) -> Any:
    """``entry`` (a rule or term group as read from YAML) with the patterns of the lists it names under
    ``pattern_lists`` read after its own ``patterns``; any other value as it is (validation names it)."""
    if not isinstance(entry, Mapping) or "pattern_lists" not in entry:
        return entry
    names = entry["pattern_lists"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        refuse(source, f"{key}.pattern_lists", "a list of pattern-list names")
    patterns = list(entry.get("patterns") or ())
    for i, name in enumerate(names):
        if name not in lists.lists:
            known = ", ".join(sorted(lists.lists)) or "none"
            refuse(source, f"{key}.pattern_lists[{i}]", f"unknown pattern list {name!r} (known: {known})")
        patterns.extend(lists.lists[name])
    expanded = {k: v for k, v in entry.items() if k != "pattern_lists"}
    expanded["patterns"] = patterns
    return expanded


def context_with_lists(data: Any, lists: PatternLists, source: str) -> Any:
    """An operating context as read from YAML, each triage rule's ``pattern_lists`` read in."""
    if not isinstance(data, Mapping):
        return data
    expanded = dict(data)
    for group in RULE_GROUPS:
        rules = data.get(group)
        if isinstance(rules, list):
            expanded[group] = [with_lists(r, lists, source, f"{group}[{i}]") for i, r in enumerate(rules)]
    return expanded


def evidence_with_lists(data: Any, lists: PatternLists, source: str) -> Any:
    """``evidence.yaml`` as read, each term group's ``pattern_lists`` read in."""
    if not isinstance(data, Mapping) or not isinstance(data.get("terms"), Mapping):
        return data
    terms = {name: with_lists(group, lists, source, f"terms.{name}") for name, group in data["terms"].items()}
    return {**data, "terms": terms}
