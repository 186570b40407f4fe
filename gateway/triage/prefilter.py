"""Which term patterns can match a sentence at all: a literal each match must contain (#31 item 7).

The evidence reader runs every ``evidence.yaml`` pattern over every sentence; most find nothing. A
pattern's *needs* are read from its parsed form: sets of strings, every match holding one string of
each set (``\\b(pain\\w*|ache)\\b[^.]{0,30}\\bchest`` needs "pain" or "ache", and "chest"). A
sentence lacking every string of one set is not searched with that pattern, and nothing found
changes: the needs are a necessary condition only. A pattern with no literal every match needs
(``\\d+`` alone) runs on every sentence.

Exactness under ``re.IGNORECASE``: needs are lower-case ASCII; a sentence is folded so that each
character becomes the ASCII letter ``re`` matches it to, case-insensitively (``fold``).
"""

from __future__ import annotations

import re
import string
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

Needs = tuple[frozenset[str], ...]
"""Every match holds at least one string of each set (lower-case ASCII), the most telling set first;
``()``: nothing is known."""

NON_ASCII_FOLDS = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
"""The non-ASCII characters ``re.IGNORECASE`` matches to an ASCII letter (İ ı ſ K; checked over all of
Unicode by tests/unit/test_triage_prefilter.py)."""

_FOLD = str.maketrans(
    {**{c: c.lower() for c in string.ascii_uppercase}, **NON_ASCII_FOLDS},
)


def fold(text: str) -> str:
    """``text`` as the needs are compared with it: an ASCII letter lower-case, İ ı ſ K as the letter
    ``re`` matches them to (``str.lower`` would turn "İ" into two characters), anything else as is."""
    return text.lower() if text.isascii() else text.translate(_FOLD)


def needs(pattern: str, flags: int = re.IGNORECASE) -> Needs:
    """The sets of strings every match of ``pattern`` holds one of each (``()``: none known)."""
    return _sequence(sre_parse.parse(pattern, flags))


def may_match(needed: Needs, folded: str) -> bool:
    """Whether a pattern needing ``needed`` can match a text folded by ``fold``."""
    return all(any(map(folded.__contains__, strings)) for strings in needed)


def _sequence(items: Any) -> Needs:
    """Needs of a sequence of parsed items: each run of literals, and each sub-part's needs."""
    found: list[frozenset[str]] = []
    run = ""
    for op, av in items:
        if op is sre.LITERAL and av < 128:
            run += chr(av).lower()
            continue
        if run:
            found.append(frozenset({run}))
        run = ""
        found.extend(_item(op, av))
    if run:
        found.append(frozenset({run}))
    # the longest shortest string first: the set a sentence most often lacks, checked first
    return tuple(
        sorted(set(found), key=lambda strings: (-min(map(len, strings)), len(strings), sorted(strings)))
    )


def _item(op: Any, av: Any) -> Needs:
    """Needs of one parsed item that is not an ASCII literal (zero-width and optional items: none)."""
    if op is sre.SUBPATTERN:
        return _sequence(av[-1])
    if op is sre.BRANCH:
        branches = [_sequence(branch) for branch in av[1]]
        if not all(branches):
            return ()  # one branch needs nothing: the alternation needs nothing
        return (frozenset().union(*(b[0] for b in branches)),)  # each branch's first set, any one
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, _, body = av
        return _sequence(body) if low >= 1 else ()
    return ()
