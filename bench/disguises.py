"""Disguised copies of labelled sentences, for measuring how the instruction detector reads through
disguise (issue #32, item 3): look-alike letters of other scripts, invisible characters inside words,
full-width letters, spaced and dotted letters, leetspeak, and a mix of two. Each transformation is
deterministic (seeded by the sentence), so a split's disguised set is the same on every run.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable

LOOKALIKES = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "y": "у", "i": "і", "s": "ѕ"}
"""Latin letter -> a Cyrillic letter drawn the same."""
LEET = {"o": "0", "e": "3", "a": "4", "i": "1", "s": "5", "t": "7"}
INVISIBLE = ("\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\ufeff")


def _rng(text: str, name: str) -> random.Random:
    return random.Random(int(hashlib.sha256(f"{name}:{text}".encode()).hexdigest(), 16))


def _words(text: str, change: Callable[[str], str], rng: random.Random, share: float) -> str:
    """Each word of four letters or more changed with probability ``share`` (at least one changed)."""
    spans = [m.span() for m in re.finditer(r"[A-Za-z]{4,}", text)]
    if not spans:
        return text
    chosen = {i for i in range(len(spans)) if rng.random() < share} or {rng.randrange(len(spans))}
    out, last = [], 0
    for i, (start, end) in enumerate(spans):
        out.append(text[last:start])
        out.append(change(text[start:end]) if i in chosen else text[start:end])
        last = end
    return "".join(out) + text[last:]


def homoglyph(text: str) -> str:
    rng = _rng(text, "homoglyph")
    return _words(
        text, lambda w: "".join(LOOKALIKES.get(c, c) if rng.random() < 0.5 else c for c in w), rng, 0.6
    )


def invisible(text: str) -> str:
    rng = _rng(text, "invisible")
    return _words(text, lambda w: w[: len(w) // 2] + rng.choice(INVISIBLE) + w[len(w) // 2 :], rng, 0.6)


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in text)


def spaced(text: str) -> str:
    """The first three long words letter-spaced, words kept apart by three spaces."""
    words = text.split(" ")
    long_words = [i for i, w in enumerate(words) if re.fullmatch(r"[A-Za-z]{4,}[,.:;]?", w)][:3]
    for i in long_words:
        words[i] = " ".join(words[i])
    return "   ".join(words) if long_words else text


def dotted(text: str) -> str:
    rng = _rng(text, "dotted")
    return _words(text, lambda w: ".".join(w), rng, 0.3)


def leetspeak(text: str) -> str:
    rng = _rng(text, "leet")
    return _words(text, lambda w: w[0] + "".join(LEET.get(c, c) for c in w[1:]), rng, 0.6)


def mixed(text: str) -> str:
    return invisible(homoglyph(leetspeak(text)))


DISGUISES: dict[str, Callable[[str], str]] = {
    "homoglyph": homoglyph,
    "invisible": invisible,
    "fullwidth": fullwidth,
    "spaced": spaced,
    "dotted": dotted,
    "leetspeak": leetspeak,
    "mixed": mixed,
}
