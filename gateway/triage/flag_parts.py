"""The red flag's own parts of a pattern: the named groups ``flag`` and ``flag_<part>`` (#31 item 2).

A red-flag rule of ``policies/contexts/*.yaml`` and a sign pattern of ``policies/triage/evidence.yaml``
name the part of their match that a patient can deny ("30 weeks pregnant, no (?P<flag>bleeding)", "my
leg has never been (?P<flag>more swollen) than the other"); the rule layer and the evidence reader
both read a negation before the match and before every such part that took part in it. No other group
of such a pattern is named: a name that is not ``flag`` or ``flag_<part>`` is a configuration error at
load (``check_flag_groups``), never a part silently left unread.
"""

from __future__ import annotations

import re

from gateway.validation import field_error

_NAME = re.compile(r"flag(_[a-z0-9]+)*")
"""``flag``, or ``flag_<part>`` with a part of lower-case letters and digits (``flag_pregnancy``)."""


def check_flag_groups(obj: object, patterns: tuple[str, ...], key: str) -> None:
    """Every named group of ``patterns`` is a red-flag part (``flag`` or ``flag_<part>``); the
    patterns compile (``validation.compile_all`` reports one that does not)."""
    for pattern in patterns:
        try:
            names = re.compile(pattern).groupindex
        except re.error:
            continue
        for name in names:
            if not _NAME.fullmatch(name):
                raise field_error(
                    obj,
                    key,
                    f"named group {name!r} in {pattern!r}: only a red-flag part is named, as 'flag' or"
                    " 'flag_<part>' (lower-case letters and digits)",
                )


def flag_starts(match: re.Match[str]) -> list[int]:
    """Where the red flag's own parts start: every named group ``flag`` or ``flag_<part>`` that took
    part in the match ("30 weeks pregnant, no bleeding" checks the words before "bleeding"; "bleeding,
    I'm not pregnant" the words before "pregnant"), none when the pattern names none."""
    return [
        match.start(name) for name in match.re.groupindex if _NAME.fullmatch(name) and match.start(name) >= 0
    ]
