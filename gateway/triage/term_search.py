"""How the evidence reader finds a term group's matches in a sentence that its words do not find: by a
pattern of the group's (``TermGroup.patterns``), or, for a group that reads a blood pressure
(``TermGroup.reads``), by the one reader of pressures (``pressure.py``) against the group's limits.

The reader keeps one list of them in the order of the groups, so that hits come in the same order
whichever way a group is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gateway.triage.flag_parts import flag_starts
from gateway.triage.prefilter import Needs, may_match, needs
from gateway.triage.pressure import read_pressures
from gateway.triage.vitals_policy import PressureSign

Span = tuple[int, int, tuple[int, ...]]
"""Where a group's match starts and ends, and where its red-flag parts start (``flag_parts``; none for a
pattern that names none)."""

Prefilter = Callable[[Needs, str], bool]
"""Whether a pattern needing the first argument can match a folded text (``prefilter.may_match``; a
test hands the reader its own, to see which sentences a pattern ran on)."""


@dataclass(frozen=True)
class PatternSearch:
    """A pattern of ``group``; a sentence without the literals its matches need (``prefilter``) is not
    searched."""

    group: str
    pattern: re.Pattern[str]
    needed: Needs
    prefilter: Prefilter = may_match

    @classmethod
    def of(cls, group: str, pattern: re.Pattern[str], prefilter: Prefilter = may_match) -> PatternSearch:
        return cls(group, pattern, needs(pattern.pattern, pattern.flags), prefilter)

    def spans(self, text: str, folded: str) -> list[Span]:
        """Where the pattern matches ``text`` (``folded``: ``prefilter.fold(text)``), with its red-flag
        parts (``flag_parts.flag_starts``)."""
        if not self.prefilter(self.needed, folded):
            return []
        return [(m.start(), m.end(), tuple(flag_starts(m))) for m in self.pattern.finditer(text)]


@dataclass(frozen=True)
class PressureSearch:
    """A group read as a blood pressure: the readings at or above its limits (``vitals.yaml``
    ``pressure_signs``; without limits, none)."""

    group: str
    sign: PressureSign | None

    def spans(self, text: str, folded: str) -> list[Span]:
        """Where ``text`` states a reading that meets the limits (``folded`` is not needed)."""
        sign = self.sign
        if sign is None:
            return []
        return [(r.start, r.end, ()) for r in read_pressures(text) if sign.met(r.systolic, r.diastolic)]


TermSearch = PatternSearch | PressureSearch
