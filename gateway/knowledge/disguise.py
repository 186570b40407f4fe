"""Read through disguised text before looking for planted instructions (issue #32, item 3).

An instruction planted for a model is often written so that a pattern does not see it while a model
still reads it: look-alike letters from another script ("іgnore" with a Cyrillic і), invisible
characters inside words (zero-width spaces, soft hyphens), compatibility forms (full-width or
mathematical letters), spaced or dotted letters ("i g n o r e", "d.i.s.r.e.g.a.r.d") and leetspeak
("1gn0r3"). ``fold`` undoes these, so the rules and the exemplar bank see the plain words:

1. Unicode NFKC (compatibility forms become their plain letters);
2. format characters (category Cf: zero-width, soft hyphen, bidi controls) and variation selectors
   are removed;
3. a letter of another script that looks like a Latin letter becomes that letter (the Unicode
   confusables table, through ``confusable_homoglyphs``; ``homoglyphs`` in the policy takes
   precedence where the table's first choice is not the letter a reader sees);
4. a run of single letters split by one space, dot or dash becomes one word (at least
   ``min_spaced_letters`` letters, so "e.g." and "a.m." stay as they are);
5. wide gaps between words (several spaces, as letter-spacing leaves them) become one space;
6. in a word that mixes letters and ``leet`` characters, each such character becomes its letter, when
   one stands between two letters, there are two groups of them, or a letter begins the word and two
   or more follow ("y0ur", "1gn0re", "d035"; not "500mg", "B12").

The folded text is only looked at, never stored or shown: the passage keeps the text as written.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated

from confusable_homoglyphs import confusables
from pydantic import Field, with_config

from gateway.validation import FILE_CONFIG


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class FoldingPolicy:
    """``instructions.yaml: folding``: the data that undoes disguises."""

    leet: dict[str, str] = field(default_factory=dict)
    """Digit or symbol -> the letter it stands for inside a word ("0": "o")."""
    homoglyphs: dict[str, str] = field(default_factory=dict)
    """Look-alike character -> Latin letter, taking precedence over the confusables table."""
    min_spaced_letters: Annotated[int, Field(ge=2, le=50)] = 4
    """Fewest single letters in a spaced or dotted run that is joined into a word."""

    def __post_init__(self) -> None:
        for table in ("leet", "homoglyphs"):
            for key, value in getattr(self, table).items():
                if len(key) != 1 or not value.isascii() or not value.isalpha():
                    raise ValueError(f"folding.{table}: {key!r} -> {value!r} is not one character -> letters")


_SEPARATORS = " .\\-_*·•"


@lru_cache(maxsize=4096)
def _latin_lookalike(char: str) -> str | None:
    """The ASCII letter a non-Latin letter is confused with (None: it is not a look-alike)."""
    found = confusables.is_confusable(char, preferred_aliases=["latin"], greedy=True)
    if not found:
        return None
    for candidate in found[0]["homoglyphs"]:
        letter = str(candidate["c"])
        if len(letter) == 1 and letter.isascii() and letter.isalpha():
            return letter
    return None


def _is_latin(char: str) -> bool:
    return char.isascii() or unicodedata.name(char, "").startswith("LATIN")


def _unhide(text: str, policy: FoldingPolicy) -> str:
    kept: list[str] = []
    for char in text:
        if unicodedata.category(char) == "Cf" or 0xFE00 <= ord(char) <= 0xFE0F:
            continue
        if char in policy.homoglyphs:
            kept.append(policy.homoglyphs[char])
        elif char.isalpha() and not _is_latin(char):
            kept.append(_latin_lookalike(char) or char)
        else:
            kept.append(char)
    return "".join(kept)


@lru_cache(maxsize=16)
def _spaced_run(minimum: int) -> re.Pattern[str]:
    """``minimum`` or more single letters, each followed by the same one separator."""
    return re.compile(rf"(?<!\w)([^\W\d_])([ .\-_*·•])(?:[^\W\d_]\2){{{minimum - 2},}}[^\W\d_](?!\w)")


def _join_spaced(text: str, minimum: int) -> str:
    text = re.sub(r"(?<=[^\W\d_]) {2,}(?=[^\W\d_] [^\W\d_])", " \x00 ", text)  # a wide gap: a word break
    joined = _spaced_run(minimum).sub(lambda m: re.sub(rf"[{re.escape(_SEPARATORS)}]", "", m.group(0)), text)
    return joined.replace(" \x00 ", " ").replace("\x00", " ")


def _fold_leet(text: str, table: dict[str, str]) -> str:
    """Each word made only of letters and leet characters, with two letters or more, read as letters."""
    if not table:
        return text

    def word(match: re.Match[str]) -> str:
        token = match.group(0)
        core = token.rstrip("!|")  # "now!": a word and its punctuation
        if sum(c.isascii() and c.isalpha() for c in core) < 2 and not (core[:1].isalpha() and len(core) > 2):
            return token
        if not all(c.isalpha() or c in table for c in core):
            return token
        leet = f"[{re.escape(''.join(table))}]+"
        inside = re.search(f"[A-Za-z]{leet}[A-Za-z]", core)
        groups = len(re.findall(leet, core))
        tail = core[0].isalpha() and sum(c in table for c in core) >= 2  # "d035", "th15", "adv153"
        if not inside and groups < 2 and not tail:  # "500mg", "B12", "2x": a number and unit, no disguise
            return token
        return "".join(table.get(c, c) for c in core) + token[len(core) :]

    return re.sub(r"[\w@$!|]+", word, text)


def disguised(text: str, folded: str) -> bool:
    """Whether folding changed more than the spacing (a changed sentence is encoded again)."""
    return text.split() != folded.split()


def fold(text: str, policy: FoldingPolicy) -> str:
    """The text with its disguises undone (for detection only)."""
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii():
        text = _unhide(text, policy)
    text = _join_spaced(text, policy.min_spaced_letters)
    text = re.sub(r"[^\S\n]{2,}", " ", text)  # wide gaps between words read as one space
    return _fold_leet(text, policy.leet)
