"""Blood pressures as patients and clinicians write them, read as numbers (#31 item 3): the one reader
of blood-pressure wording, for NEWS2's limits (``vitals.py``) and for pressure signs (``bp_crisis``).

Wordings: a labelled reading ("BP 82/50", "blood pressure 150 over 95", "my machine says 210 over 125",
"cuff reading 190/120"), a reading in mmHg ("190/120 mmHg"), "210 over 125", a bare "190/125", the lay
"top number 218 bottom 128", and a top or bottom number told alone ("top number 190", "systolic 85",
"bottom number 125", "diastolic 130"). The reader finds a reading's shape and names its numbers; the
limits they are compared with are data (``policies/triage/vitals.yaml``), compared in code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SYSTOLIC_READ = (40, 299)
"""Top numbers (mmHg) read as a blood pressure; outside them a number is none ("bp on 12/8")."""
DIASTOLIC_READ = (20, 199)
"""Bottom numbers (mmHg) read as a blood pressure."""

_GAP = r"[^\d.!?\n]{0,25}?"
_NAMED = r"(?:number|one|reading|figure)"
_TOP = r"\b(?:top|upper) " + _NAMED + r"\b[^\d.!?\n]{0,15}"
_BOTTOM = r"\b(?:bottom|lower)(?: " + _NAMED + r")?\b[^\d.!?\n]{0,15}"
_THREE = r"(?:1\d\d|2\d\d)"
"""A top number told without a blood-pressure word or unit has three digits: "12/10" is a date."""
_LOW = r"(?:[4-9]\d|1\d\d)"
_SHAPES = (
    # a blood-pressure word: any two- or three-digit numbers, a third after them too ("BP 220/110/95": a
    # date's day is under the top numbers read, "bp on 12/10/2024" is none)
    r"\b(?:bp|b/p|blood pressure|pressure)\b" + _GAP + r"(?P<s>\d{2,3})\s*(?:/|over)\s*(?P<d>\d{2,3})\b",
    r"\b(?P<s>\d{2,3})\s*/\s*(?P<d>\d{2,3})\s*mm ?hg",
    # a device or "it": a three-digit top number ("it was 22/10" is a date, "it's 60/40" odds)
    r"\b(?:readings?|machine|monitor|cuff|it)\b"
    + _GAP
    + rf"(?P<s>{_THREE})\s*(?:/|over)\s*(?P<d>{_LOW})\b(?![/\d])",
    _TOP + r"(?P<s>\d{2,3})\b[^\d.!?\n]{0,20}?" + _BOTTOM + r"(?P<d>\d{2,3})\b",
    _TOP + r"(?P<s>\d{2,3})\b",
    r"\bsystolic\b[^\d.!?\n]{0,15}(?P<s>\d{2,3})\b",
    r"\b(?:bottom|lower) " + _NAMED + r"\b[^\d.!?\n]{0,15}(?P<d>\d{2,3})\b",
    r"\bdiastolic\b[^\d.!?\n]{0,15}(?P<d>\d{2,3})\b",
    rf"\b(?P<s>{_THREE}) over (?P<d>{_LOW})\b",
    rf"(?<![\d/.:])\b(?P<s>{_THREE})\s*/\s*(?P<d>{_LOW})\b(?![/\d.:])",
)
_READING = re.compile(
    "|".join(
        f"(?P<shape{i}>{shape.replace('(?P<s>', f'(?P<s{i}>').replace('(?P<d>', f'(?P<d{i}>')})"
        for i, shape in enumerate(_SHAPES)
    ),
    re.IGNORECASE,
)
"""One alternation: at one place, the first shape that reads wins (a pair before a top number alone).
Each shape stands in a group of its own name (``shape<i>``), its numbers named ``s<i>`` and ``d<i>``."""
_NUMBERS = tuple(tuple(name for name in ("s", "d") if f"(?P<{name}>" in shape) for shape in _SHAPES)
"""The numbers each shape names: top (``s``), bottom (``d``) or both."""


@dataclass(frozen=True)
class Pressure:
    """One reading: its numbers (mmHg; a number it does not give is None) and where the text wrote it."""

    systolic: int | None
    diastolic: int | None
    start: int
    end: int
    written: str


def _number(match: re.Match[str], name: str, read: tuple[int, int]) -> int | None:
    value = match.groupdict().get(name)
    return int(value) if value is not None and read[0] <= int(value) <= read[1] else None


def read_pressures(text: str) -> list[Pressure]:
    """Every blood pressure the text states, in order. A number outside ``SYSTOLIC_READ`` /
    ``DIASTOLIC_READ`` makes no reading, nor does a top number not above its bottom one ("60/80")."""
    found = []
    for match in _READING.finditer(text):
        shape = next(i for i in range(len(_SHAPES)) if match.group(f"shape{i}") is not None)
        given = [f"{name}{shape}" for name in _NUMBERS[shape]]
        systolic = _number(match, f"s{shape}", SYSTOLIC_READ)
        diastolic = _number(match, f"d{shape}", DIASTOLIC_READ)
        if len([n for n in (systolic, diastolic) if n is not None]) < len(given):
            continue
        if systolic is not None and diastolic is not None and systolic <= diastolic:
            continue
        found.append(Pressure(systolic, diastolic, match.start(), match.end(), match.group(0).strip()))
    return found
