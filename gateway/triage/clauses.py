"""A message cut into the clauses triage reads, each a sentence or part of one: cut at a stop
(".", "!", "?", not a decimal point), a line break, ";", " - ", "but", "however", "although", "though",
", then" / ", now", and a comma before a question ("..., can I take ..."), so that a negation, a history
word or a supposing clause governs only its own clause.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_SENTENCE_END = re.compile(
    r"(?:[!?;\n]|\.(?!\d))+\s*|\s+-\s+|,?\s+(?:but|however|although|though)\s+"
    r"|,\s*(?:and then|and now|then|now)\b|\s+and now\b"
    r"|,\s*(?=(?:can|could|should|is|are|what|how|when|will|would|do|does)\s+(?:i|it|he|she|they|we|you|that|this)\b)",
    re.IGNORECASE,
)
_PARAGRAPH = re.compile(r"\n\s*\n")


class Clause(NamedTuple):
    text: str
    end: str
    """What ended it (".", "?", "!", ";", "-", ", but", ", then", ...; "." when nothing did)."""
    paragraph: int
    """The paragraph it is in (0 first): blank lines part them."""


def clauses(text: str) -> list[Clause]:
    """The clauses of ``text``, in order; empty ones left out."""
    found: list[Clause] = []
    start, paragraph = 0, 0
    for match in [*_SENTENCE_END.finditer(text), None]:
        stop = match.start() if match is not None else len(text)
        part = text[start:stop].strip()
        if part:
            ended = match.group(0).strip() if match is not None else ""
            found.append(Clause(part, ended or ".", paragraph))
        if match is not None:
            start = match.end()
            paragraph += bool(_PARAGRAPH.search(match.group(0)))
    return found
