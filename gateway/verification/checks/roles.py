"""The role-order check: who does what to whom must not be swapped.

"Obesity causes diabetes" and "diabetes causes obesity" share every word, so similarity, coverage
and binding all pass the one against the other. A directed relation (``cues.yaml``:
``role_relations``, one entry per family: cause, prevent, precede, transmit, activate, bind) has an
agent before its cue and a patient after it, within the cue's clause; "A is caused by B" (the cue
followed by "by") reverses them. A comparison "A is more ... than B" (or "compared with B", "versus
B": ``comparison_anchors``) ranks A above B
(``comparative_more``), "A is less ... than B" below (``comparative_less``); any other comparative
("A is rarer than B") ranks by its own word. "X is more common in A than in B" (the preposition
repeated after "than") ranks A above B.

A claim's relation is swapped when the evidence states a relation of the same family (or the same
ranking) whose agent holds the claim's patient and whose patient holds the claim's agent, with
nothing of the claim's patient in its own place; words both sides share ("pro-vaccine clusters" / "anti-
vaccine clusters") do not count. A swap is a CLASH of kind ``role``: the dev sets measured it about
87% precise (13 of 15 catches not supported), below the 90% a contradiction kind must reach, so by
default it leaves the claim ``not_verified`` (not in ``contradiction_kinds``).
Evidence that states the relation the claim's way, or no such relation, passes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from gateway.domain import ConflictKind
from gateway.verification.checks.results import CheckName, CheckResult, clash, pass_result
from gateway.verification.checks.words import WORD, cues, is_content, stem

SIDE_WORDS = 4
"""Content words read on each side of a relation's cue (the nearest ones, inside its clause)."""


class RelatedText(Protocol):
    """What the role-order check reads of a text (``analysis.AnalysedText`` provides it)."""

    @property
    def relations(self) -> tuple[Relation, ...]: ...


@dataclass(frozen=True)
class Relation:
    """One directed relation of a text: its family, and the content stems of each side."""

    family: str
    agent: frozenset[str]
    patient: frozenset[str]
    cue: str
    """The cue as written ("causes", "more ... than"), for the reason."""


@dataclass(frozen=True)
class RolePatterns:
    families: tuple[re.Pattern[str], ...]
    than: re.Pattern[str]
    comparative: re.Pattern[str]
    more: re.Pattern[str]
    less: re.Pattern[str]
    clause_break: re.Pattern[str]


@cache
def role_patterns() -> RolePatterns:
    words = cues()
    return RolePatterns(
        tuple(re.compile(rf"\b(?:{entry})\b") for entry in words.lists["role_relations"]),
        words.pattern(r"\b<<comparison_anchors>>\b"),
        words.pattern(r"\b(?:<<comparative_more>>|<<comparative_less>>|[a-z]{3,}er)\b"),
        words.pattern(r"^<<comparative_more>>$"),
        words.pattern(r"^<<comparative_less>>$"),
        words.pattern(rf"[{words.clause_break_punctuation}]|\b<<clause_break_words>>\b"),
    )


def _clause(clean: str, start: int, end: int, patterns: RolePatterns) -> tuple[str, str]:
    """The text of the clause before ``start`` and after ``end``."""
    before = clean[:start]
    breaks = list(patterns.clause_break.finditer(before))
    left = before[breaks[-1].end() :] if breaks else before
    after = clean[end:]
    found = patterns.clause_break.search(after)
    right = after[: found.start()] if found else after
    return left, right


def _stems(text: str) -> list[str]:
    return [stem(w) for w in WORD.findall(text) if is_content(w)]


def _relation(family: str, cue: str, left: str, right: str) -> Relation | None:
    agent = _stems(left)[-SIDE_WORDS:]
    patient = _stems(right)[:SIDE_WORDS]
    shared = set(agent) & set(patient)
    a, p = frozenset(agent) - shared, frozenset(patient) - shared
    if not a or not p:
        return None
    return Relation(family, a, p, cue)


def relations(clean: str) -> tuple[Relation, ...]:
    """The directed relations of a normalised text (see the module docstring)."""
    patterns = role_patterns()
    found: list[Relation] = []
    for index, cue in enumerate(patterns.families):
        for match in cue.finditer(clean):
            left, right = _clause(clean, match.start(), match.end(), patterns)
            passive = re.match(r"\s+by\b", right) is not None
            if passive:
                right = right.lstrip()[2:]
                left, right = right, left
            relation = _relation(f"relation {index}", match.group(0), left, right)
            if relation is not None:
                found.append(relation)
    for than in patterns.than.finditer(clean):
        left, right = _clause(clean, than.start(), than.end(), patterns)
        comparatives = list(patterns.comparative.finditer(left))
        if not comparatives:
            continue
        word = comparatives[-1]
        if patterns.more.match(word.group(0)):
            ranking, flip = "more", False
        elif patterns.less.match(word.group(0)):
            ranking, flip = "more", True
        else:
            ranking, flip = f"than {word.group(0)}", False
        agent, patient = left[: word.start()], right
        parallel = _PARALLEL.search(left, word.end())
        if parallel is not None and re.match(rf"\s*{parallel.group(1)}\b", right):
            agent = parallel.group(2)  # "more common in men than in women": men vs women
        if flip:
            agent, patient = patient, agent
        relation = _relation(ranking, f"{word.group(0)} ... than", agent, patient)
        if relation is not None:
            found.append(relation)
    return tuple(found)


_PARALLEL = re.compile(r"\b(in|among|for|with|at|during|after|before)\s+([^,;]+)$")
"""A comparison of two groups or settings, the comparative's subject aside: "X is more common in A than
in B" ranks A above B (the preposition repeated after "than")."""


def _swapped(mine: Relation, theirs: Relation) -> bool:
    """A word of the claim's agent is the evidence's patient, one of its patient the evidence's agent,
    and nothing of the claim's patient is the evidence's patient (shared words on the agent side, such
    as the verb of "children recover faster than adults", are the relation's frame)."""
    if mine.family != theirs.family:
        return False
    to_patient = (mine.agent & theirs.patient) - theirs.agent
    to_agent = (mine.patient & theirs.agent) - theirs.patient
    return bool(to_patient) and bool(to_agent) and not (mine.patient & theirs.patient)


def _aligned(mine: Relation, theirs: Relation) -> bool:
    same = mine.family == theirs.family
    return same and bool(mine.agent & theirs.agent) and bool(mine.patient & theirs.patient)


def check_roles(claim: RelatedText, evidence: RelatedText) -> CheckResult:
    """CLASH (kind ``role``) when the evidence states the claim's relation with its sides swapped and
    nowhere the claim's way; PASS otherwise."""
    theirs = evidence.relations
    for mine in claim.relations:
        if any(_aligned(mine, other) for other in theirs):
            continue
        swapped = next((other for other in theirs if _swapped(mine, other)), None)
        if swapped is not None:
            sides = f"'{' '.join(sorted(mine.agent))}' / '{' '.join(sorted(mine.patient))}'"
            return clash(
                CheckName.ROLE,
                ConflictKind.ROLE,
                f"the evidence states '{swapped.cue}' with the roles swapped ({sides})",
                mine.cue,
                swapped.cue,
            )
    return pass_result(CheckName.ROLE)
