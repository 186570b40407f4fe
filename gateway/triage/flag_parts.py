"""The red flag's own parts of a pattern: the named groups ``flag`` and ``flag_<part>`` (#31 item 2).

A red-flag rule of ``policies/contexts/*.yaml`` names the part of its match that a patient can deny
("30 weeks pregnant, no (?P<flag>bleeding)"), and the rule layer reads a negation before the match and
before every such part that took part in it.
"""

from __future__ import annotations

import re


def flag_starts(match: re.Match[str]) -> list[int]:
    """Where the red flag's own parts start: every named group ``flag`` or ``flag_<part>`` that took
    part in the match ("30 weeks pregnant, no bleeding" checks the words before "bleeding"; "bleeding,
    I'm not pregnant" the words before "pregnant"), none when the pattern names none."""
    return [
        match.start(name)
        for name in match.re.groupindex
        if (name == "flag" or name.startswith("flag_")) and match.start(name) >= 0
    ]
