"""Blood pressures as patients and clinicians write them ("BP 82/50", "190/120 mmHg", "210 over 125",
"top number 218 bottom 128", a bare "190/125"), read as numbers (#31 item 3).

The reader finds a reading's shape and names its numbers (``systolic``, ``diastolic``); the limits they
are compared with are data (``policies/triage/vitals.yaml``), compared in code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from gateway.triage.evidence_policy import PressureSign

_GAP = r"[^\d.!?\n]{0,25}?"
_READING = re.compile(
    r"\b(?:bp|blood pressure|pressure)\b" + _GAP + r"(?P<s1>\d{2,3})\s*(?:/|over)\s*(?P<d1>\d{2,3})"
    r"|\b(?P<s2>\d{2,3})\s*/\s*(?P<d2>\d{2,3})\s*(?:mm ?hg)"
    # lay wordings (#31 item 3): "top number 218 bottom 128", "210 over 125", a bare "190/125" (a
    # three-digit top number, nothing of a date or fraction beside it: "12/10" is a date)
    r"|\b(?:top|upper) (?:number|one|reading|figure)\b[^\d.!?\n]{0,15}(?P<s3>\d{2,3})\b[^\d.!?\n]{0,20}?"
    r"\b(?:bottom|lower)(?: (?:number|one|reading|figure))?\b[^\d.!?\n]{0,15}(?P<d3>\d{2,3})\b"
    r"|\b(?P<s4>1\d\d|2\d\d) over (?P<d4>[4-9]\d|1\d\d)\b"
    r"|(?<![\d/.:])\b(?P<s5>1\d\d|2\d\d)\s*/\s*(?P<d5>[4-9]\d|1\d\d)\b(?![/\d.:])",
    re.IGNORECASE,
)
_BRANCHES = 5


@dataclass(frozen=True)
class Pressure:
    """One reading: its numbers (mmHg) and where the text wrote it."""

    systolic: int
    diastolic: int
    start: int
    end: int
    written: str


def read_pressures(text: str) -> list[Pressure]:
    """Every blood pressure the text states, in order; a reading whose top number is not above its bottom
    one is none ("60/80")."""
    found = []
    for match in _READING.finditer(text):
        branch = next(i for i in range(1, _BRANCHES + 1) if match.group(f"s{i}") is not None)
        systolic, diastolic = int(match.group(f"s{branch}")), int(match.group(f"d{branch}"))
        if systolic > diastolic:
            found.append(Pressure(systolic, diastolic, match.start(), match.end(), match.group(0).strip()))
    return found


def pressure_signs(pattern: re.Pattern[str], text: str, sign: PressureSign) -> Iterator[re.Match[str]]:
    """The readings of ``pattern`` (named groups ``systolic`` / ``diastolic``) at or above ``sign``'s
    limits, as ``finditer`` would find them had the limits been written in the pattern: at one start, a
    reading under them gives way to the next the pattern allows there, one ending before it ("top number
    190 bottom 125 ... lower 95"); none there, the search goes on from the next character."""
    pos = 0
    while (match := pattern.search(text, pos)) is not None:
        found: re.Match[str] | None = match
        while found is not None and not sign.met(found.groupdict()):
            numbers = [found.start(g) for g, number in found.groupdict().items() if number is not None]
            found = pattern.match(text, match.start(), max(numbers)) if numbers else None
        if found is not None:
            yield found
        pos = found.end() if found is not None else match.start() + 1
