"""Audit (#31 item 2, negation respected): two-part patterns that still fire when their second part is denied.

For every red-flag rule pattern of ``policies/contexts/*.yaml`` and every sign pattern of
``policies/triage/evidence.yaml`` that spans two parts (``.*`` or ``[^.?!]{0,N}`` between them), an example of
each part is generated from the pattern itself, and the second part is denied ("A and no B", "A, without B",
...). A rule is checked through the rule layers alone (``flagged_rule``), a sign through the evidence reader
(``sign_groups``). The undenied form ("A and B") must still fire, as must the signs patients write with a
negation word in them ("can't breathe", "won't stop bleeding").

The last section counts, per ``evidence.yaml`` sign pattern, the denied forms whose own match the reader
still counts as a sign (a hit of its group, not negated, that the pattern matches: a word of the group
found beside it does not count), with the patterns' red-flag parts (``(?P<flag>...)``,
``gateway/triage/flag_parts.py``) unread (as before #31 item 2) and read. Run::

    PYTHONPATH=. .venv/bin/python bench/negation_audit.py
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from re import _parser as sre  # type: ignore[attr-defined]
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.policies import Policy, load_policy
from gateway.triage.policy import TriagePolicy
from tests.support.triage import flagged_rule, reader_of, sign_groups

POLICIES = Path(__file__).resolve().parents[1] / "policies"
FLAG_PART = re.compile(r"\(\?P<flag\w*>")
GAP = re.compile(r"\.\*\??|\[\^[^\]]*\]\{0,\d+\}\??")
DENIALS = (
    "{a} and no {b}",
    "{a}, without {b}",
    "{a} but denies {b}",
    "{a}, never had {b}",
    "{a} but I don't have {b}",
)
SIGNS = (  # a negation word inside the sign: never a denial
    ("I can't breathe", "breathing"),
    ("my baby is not breathing", None),
    ("the cut on my leg won't stop bleeding", "heavy_bleeding"),
    ("my dad collapsed and is not responding", None),
    # pseudo-negations: other forms of a negative, a degree never reached (#31 item 2, pseudoneg)
    ("I haven't been able to catch my breath since this morning", "breathing"),
    ("no one can wake him up", None),
    ("nothing stops the bleeding from the cut on my leg", "heavy_bleeding"),
    ("she won't stop fitting", None),
    ("his leg has never been this swollen and he's breathless", None),
)


def _gen(tokens: Any, choice: int) -> list[str]:
    """Example strings for parsed ``tokens``: the first branch met is expanded (up to 8 ways)."""
    outs = [""]
    for op, av in tokens:
        name = str(op)
        if name == "LITERAL":
            parts = [chr(av)]
        elif name == "SUBPATTERN":
            parts = _gen(av[-1], choice)
        elif name == "BRANCH":
            parts = [_gen(alt, choice)[0] for alt in av[1]][:8] if choice else [_gen(av[1][0], 0)[0]]
            choice = 0
        elif name == "IN":
            first = av[0]
            parts = [
                chr(first[1])
                if str(first[0]) == "LITERAL"
                else chr(first[1][0])
                if str(first[0]) == "RANGE"
                else "x"
            ]
            if str(first[0]) == "NEGATE":
                parts = [" "]
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, _high, sub = av
            parts = ["".join(_gen(sub, 0)[0] for _ in range(low))]
        elif name == "ANY":
            parts = ["x"]
        else:  # AT, ASSERT, ASSERT_NOT, GROUPREF...
            parts = [""]
        outs = [o + p for o in outs for p in parts] if len(parts) > 1 else [o + parts[0] for o in outs]
    return outs


def examples(pattern: str, many: bool) -> list[str]:
    pattern = FLAG_PART.sub("(", pattern)
    try:
        return [re.sub(r"\s+", " ", e).strip() for e in _gen(sre.parse(pattern), 1 if many else 0)]
    except (re.error, TypeError, IndexError):
        return []


def split(pattern: str) -> tuple[str, str] | None:
    """The pattern's parts before and after its last top-level gap, if any."""
    depth, cuts = 0, []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and (m := GAP.match(pattern, i)):
            cuts.append((m.start(), m.end()))
            i = m.end()
            continue
        i += 1
    if not cuts:
        return None
    start, end = cuts[-1]
    return pattern[:start], pattern[end:]


def denied_variants(pattern: str, joiner: str) -> Iterator[tuple[str, str]]:
    """For a two-part pattern: (the plain example of its two parts, one denied form of it), for each
    example of the second part and each form of ``DENIALS``, after the plain example itself ("")."""
    parts = split(pattern)
    if parts is None:
        return
    a = examples(parts[0], False)
    for b in examples(parts[1], True):
        if not a or not b:
            continue
        plain = f"{a[0]}{joiner}{b}"
        yield plain, ""
        for form in DENIALS:
            yield plain, form.format(a=a[0], b=b)


def audit_rules(policy: Policy) -> list[str]:
    found = []
    for rule in policy.context.emergency:
        for pattern in rule.patterns:
            generated = True
            for plain, text in denied_variants(pattern, " and "):
                if not text:
                    generated = flagged_rule(plain, policy) is not None
                    if not generated:
                        found.append(f"  (not generated as a match) {rule.id}: {plain!r}")
                elif generated and flagged_rule(text, policy) == rule.id and re.search(pattern, text, re.I):
                    found.append(f"  FIRES {rule.id}: {text!r}  [{pattern[:70]}]")
    return found


def audit_signs(policy: Policy) -> list[str]:
    found = []
    for group, terms in policy.triage.evidence.terms.items():
        if not terms.negatable:
            continue
        for pattern in terms.patterns:
            generated = True
            for plain, text in denied_variants(pattern, " "):
                if not text:
                    generated = group in sign_groups(plain, policy.triage)
                elif (
                    generated and group in sign_groups(text, policy.triage) and re.search(pattern, text, re.I)
                ):
                    found.append(f"  FIRES {group}: {text!r}  [{pattern[:70]}]")
    return found


def unread_flag_parts(policy: TriagePolicy) -> TriagePolicy:
    """``policy`` with its sign patterns' red-flag parts unnamed: read as before #31 item 2."""
    terms = {
        name: dataclasses.replace(group, patterns=tuple(FLAG_PART.sub("(", p) for p in group.patterns))
        for name, group in policy.evidence.terms.items()
    }
    return dataclasses.replace(policy, evidence=dataclasses.replace(policy.evidence, terms=terms))


def own_sign(pattern: str, group: str, text: str, policy: TriagePolicy) -> bool:
    """Whether the reader counts ``pattern``'s own match in ``text`` as a sign of ``group``: a match
    reaching the second part, at the end of ``text`` (a pattern of alternatives may match its first part
    alone, "very tender" of "very tender and no pulsing": that is no denied form)."""
    compiled = re.compile(pattern, re.IGNORECASE)
    hits = reader_of(policy).read(text).hits
    return any(
        h.group == group and not h.negated and text.endswith(h.text) and compiled.search(h.text) for h in hits
    )


def audit_sign_patterns(policy: TriagePolicy) -> tuple[list[str], list[int]]:
    """Per two-part sign pattern: denied forms counted as its sign with its red-flag parts unread and
    read, of the denied forms generated (lines for those that count any); and the totals."""
    unread = unread_flag_parts(policy)
    lines, totals = [], [0, 0, 0, 0]
    for group, terms in policy.evidence.terms.items():
        if not terms.negatable:
            continue
        for i, pattern in enumerate(terms.patterns):
            before = after = forms = 0
            generated = True
            for plain, text in denied_variants(pattern, " "):
                if not text:
                    generated = own_sign(pattern, group, plain, policy)
                    continue
                if generated and re.search(pattern, text, re.IGNORECASE):
                    forms += 1
                    before += own_sign(pattern, group, text, unread)
                    after += own_sign(pattern, group, text, policy)
            named = FLAG_PART.search(pattern) is not None
            totals = [totals[0] + before, totals[1] + after, totals[2] + forms, totals[3] + named]
            if before or after:
                mark = " (flag)" if named else ""
                lines.append(f"  {group}[{i}]{mark}: {before} -> {after} of {forms}  [{pattern[:70]}]")
    return lines, totals


def main() -> None:
    for name in ("general", "cataract-followup"):
        policy = load_policy(POLICIES, name)
        print(f"== {name}: rules")
        print("\n".join(audit_rules(policy)) or "  none")
        for text, rule in SIGNS:
            got = flagged_rule(text, policy)
            print(f"  sign {'ok ' if got is not None else 'LOST'} {text!r}: {got} (expected {rule or 'any'})")
    general = load_policy(POLICIES, "general")
    print("== evidence.yaml signs (general)")
    print("\n".join(audit_signs(general)) or "  none")
    print("== evidence.yaml sign patterns (general): denied forms counted as the pattern's own sign,")
    print("   red-flag parts unread -> read, of the denied forms generated")
    lines, (before, after, forms, named) = audit_sign_patterns(general.triage)
    print("\n".join(lines) or "  none")
    print(f"  total: {before} -> {after} of {forms} denied forms ({named} patterns name a red-flag part)")


if __name__ == "__main__":
    main()
