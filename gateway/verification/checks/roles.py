"""The role-order check: who does what to whom must not be swapped.

"Obesity causes diabetes" and "diabetes causes obesity" share every word, so similarity, coverage
and binding all pass the one against the other. A directed relation (``cues.yaml``:
``role_relations``, one entry per family: cause, prevent, precede, transmit, activate, bind, increase,
reduce, treat, affect, damage, produce) has an agent and a patient, read by ``role_reader`` as the
active sentence would state them: "B is caused by A", "B results from A", "the B that A causes",
"A, which causes B", "how A affects B" and "A, an X, causes B" are all A cause B; "treatment of A with
B" and "people with A have a child with B" are frames whose two objects are the sides. A comparison
"A is more ... than B" (or "compared with B", "versus
B": ``comparison_anchors``) ranks A above B
(``comparative_more``), "A is less ... than B" below (``comparative_less``); any other comparative
("A is rarer than B") ranks by its own word. "X is more common in A than in B" (the preposition
repeated after "than") ranks A above B.

A claim's relation is swapped when the evidence states a relation of the same family (or the same
ranking) whose agent holds words of the claim's patient and whose patient words of the claim's agent,
more of them than stay in place (or its agent and its setting, "In patients with A, B causes C",
exchanged so); words both sides share ("pro-vaccine clusters" / "anti-vaccine clusters") do not count.
``reversed_comparison`` tells the binding that "B is less common than A" restates "A is more common
than B" (the opposite comparative is then not an opposite), ``restated_inverse_cues`` that "B
results from A" restates "A leads to B". A swap is a CLASH of kind ``role``: the dev sets measured it about
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
from gateway.verification.checks.results import CheckName, CheckOutcome, CheckResult, clash, pass_result
from gateway.verification.checks.role_reader import (
    PAREN,
    SIDE_WORDS,
    Relation,
    RoleGrammar,
    read_relations,
    role_grammar,
)
from gateway.verification.checks.words import WORD, cues, is_content, stem, stopwords

__all__ = [
    "Relation",
    "check_role_order",
    "check_roles",
    "relations",
    "restated_inverse_cues",
    "reversed_comparison",
    "role_patterns",
]


class RelatedText(Protocol):
    """What the role-order check reads of a text (``analysis.AnalysedText`` provides it)."""

    @property
    def relations(self) -> tuple[Relation, ...]: ...


@dataclass(frozen=True)
class RolePatterns:
    than: re.Pattern[str]
    comparative: re.Pattern[str]
    more: re.Pattern[str]
    less: re.Pattern[str]
    clause_break: re.Pattern[str]


@cache
def role_patterns() -> RolePatterns:
    words = cues()
    role_grammar()  # the verbs' reader: read and validated with the comparatives
    return RolePatterns(
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
    found: list[Relation] = list(read_relations(clean))
    for than in patterns.than.finditer(clean):
        left, right = _clause(clean, than.start(), than.end(), patterns)
        comparatives = list(patterns.comparative.finditer(left))
        listed = [
            c for c in comparatives if patterns.more.match(c.group(0)) or patterns.less.match(c.group(0))
        ]
        if not comparatives:
            continue
        word = (listed or comparatives)[-1]  # "a higher risk of cancer than": "higher", not "cancer"
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


def _exchanged(
    mine: tuple[frozenset[str], frozenset[str]], theirs: tuple[frozenset[str], frozenset[str]]
) -> bool:
    """Words of the claim's first role are in the evidence's second and words of its second in the
    evidence's first, and more of them than stay in place (words both sides share, such as the verb of
    "children recover faster than adults" or "other proteins" of two lists, are the frame)."""
    (x, y), (x2, y2) = mine, theirs
    to_y, to_x = (x & y2) - x2, (y & x2) - y2
    return bool(to_y) and bool(to_x) and len(to_y) + len(to_x) > len(x & x2) + len(y & y2)


def _swapped(mine: Relation, theirs: Relation) -> bool:
    """The claim's agent and patient, or its agent and setting, exchanged against the evidence's."""
    if mine.family != theirs.family:
        return False
    return _exchanged((mine.agent, mine.patient), (theirs.agent, theirs.patient)) or _exchanged(
        (mine.agent, mine.setting), (theirs.agent, theirs.setting)
    )


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


def _lower(relation: Relation) -> bool:
    return role_patterns().less.match(relation.cue.split()[0]) is not None


def reversed_comparison(claim: RelatedText, evidence: RelatedText, words: tuple[str, str]) -> bool:
    """Is the opposition of ``words`` (the claim's comparative, the evidence's) a comparison read the
    other way round ("B is less common than A" for "A is more common than B")? Every ranking of the
    claim must then be the evidence's, its sides in their places, with the opposite comparative."""
    patterns = role_patterns()
    if not all(patterns.more.match(w) or patterns.less.match(w) for w in words):
        return False
    rankings = [r for r in claim.relations if r.cue.endswith("... than")]
    theirs = [r for r in evidence.relations if r.cue.endswith("... than")]
    return bool(rankings) and all(
        any(_aligned(mine, other) and _lower(mine) != _lower(other) for other in theirs)
        and not any(_swapped(mine, other) for other in theirs)
        for mine in rankings
    )


def restated_inverse_cues(claim: RelatedText, evidence: RelatedText) -> frozenset[str]:
    """The words of the claim's inverse cues ("results from") whose relation the evidence states the
    same way round with a cue of the same family ("leads to"): the binding does not ask the quote for
    them. A claim relation swapped against any of the evidence's explains nothing."""
    theirs = evidence.relations
    words: set[str] = set()
    for mine in claim.relations:
        if not mine.inverse or any(_swapped(mine, other) for other in theirs):
            continue
        if any(_aligned(mine, other) and not other.inverse for other in theirs):
            words.update(WORD.findall(mine.cue))
    return frozenset(words)


def _confirmed_cues(claim: RelatedText, evidence: RelatedText) -> list[str]:
    """The cues of the claim's relations that the evidence states the same way round (aligned, swapped
    with none): the word-order gate does not ask for their sides' order."""
    theirs = evidence.relations
    return [
        mine.cue
        for mine in claim.relations
        if any(_aligned(mine, other) for other in theirs)
        and not any(_swapped(mine, other) for other in theirs)
    ]


ORDER_SIDE_WORDS = 2
"""Shared content words read on each side of a verb by the word-order gate (the nearest ones)."""


def _verb_pairs(clean: str, shared: frozenset[str], confirmed: list[str]) -> list[tuple[str, str, str]]:
    """(verb, a shared content stem before it, one after it) for each verb of each comma segment of
    ``clean`` and the ``ORDER_SIDE_WORDS`` nearest shared stems on each side in it (a phrase set off by
    commas, "In children, A is common", may move freely; a word twice in the segment has no one place;
    the left side reaches back past an appositive when the segment has none): a verb is a relation
    cue, a listed verb word (``verb_words``), or a word read as a verb by its ending right after a word
    that is not a
    function word (``verb_endings``); a comparison's anchor ("than") is read as one too."""
    grammar = role_grammar()
    found: list[tuple[str, str, str]] = []
    pivots = [p for _, p, _ in grammar.cues] + [role_patterns().than]
    known = [word for cue in confirmed for word in WORD.findall(cue)]
    for clause in grammar.hard_break.split(PAREN.sub("", clean)):
        cue_spans = [m.span() for p in pivots for m in p.finditer(clause)]
        words = list(WORD.finditer(clause))
        segment = [len(grammar.comma.findall(clause[: w.start()])) for w in words]
        verbs, exempt = [], []
        for i, word in enumerate(words):
            text = word.group(0)
            in_cue = any(s <= word.start() < e for s, e in cue_spans)
            guessed = i > 0 and words[i - 1].group(0) not in stopwords() and grammar.verb_ending.match(text)
            verbs.append(in_cue or text in grammar.verb_words or bool(guessed))
            exempt.append(text in known)
        for i in reversed(range(len(words) - 1)):  # "is" of "is caused by", "may be" of "may be caused"
            exempt[i] = exempt[i] or (_aux(words[i].group(0), grammar) and exempt[i + 1])
        stems = [stem(w.group(0)) for w in words]
        entities = [
            (i, s)
            for i, (w, s) in enumerate(zip(words, stems, strict=True))
            if not verbs[i] and is_content(w.group(0)) and s in shared and stems.count(s) == 1
        ]
        for v, is_verb in enumerate(verbs):
            if not is_verb or exempt[v]:
                continue
            own = [s for i, s in entities if i < v and segment[i] == segment[v]]
            left = (own or [s for i, s in entities if i < v])[-ORDER_SIDE_WORDS:]
            right = [s for i, s in entities if i > v and segment[i] == segment[v]][:ORDER_SIDE_WORDS]
            found += [(words[v].group(0), a, b) for a in left for b in right if a != b]
    return found


def _aux(word: str, grammar: RoleGrammar) -> bool:
    return word in grammar.verb_words


def _fixed(clause: str, grammar: RoleGrammar) -> str:
    """The clause without a comma segment opening or closing it that opens with a setting word
    (``setting_openers``: "With treatment, A ...", "..., in adults"): such a phrase may move freely."""
    parts = grammar.comma.split(clause)
    while len(parts) > 1 and grammar.setting.match(parts[0]):
        parts = parts[1:]
    while len(parts) > 1 and grammar.setting.match(parts[-1]):
        parts = parts[:-1]
    return ",".join(parts)


def _order(clean: str, first: str, second: str) -> bool:
    """Does the text state ``first`` before ``second``: in some clause holding both, and in none the
    other way round (in no clause together: the first occurrences' order)? A clause holding either word
    on both sides of the other shows no order and is skipped. Words of a movable phrase (``_fixed``) are
    in no order: a pair with one of them keeps its order."""
    grammar = role_grammar()
    seen_before = seen_after = False
    fixed = [_fixed(clause, grammar) for clause in grammar.hard_break.split(clean)]
    together = False
    for clause in fixed:
        stems = [stem(w) for w in WORD.findall(clause) if is_content(w)]
        if first in stems and second in stems:
            together = True
            forward = second in stems[stems.index(first) + 1 :]
            backward = first in stems[stems.index(second) + 1 :]
            if forward and backward:
                # a word repeated on both sides ("... to take. Adults can take ...", a heading run into
                # its text): this clause shows no order
                continue
            seen_before |= forward
            seen_after |= backward
    if seen_before or seen_after:
        return seen_before and not seen_after
    if together:  # only clauses that show no order: nothing contradicts the claim's
        return True
    stems = [stem(w) for clause in fixed for w in WORD.findall(clause) if is_content(w)]
    if first not in stems or second not in stems:
        return True
    return stems.index(first) < stems.index(second)


class OrderedText(RelatedText, Protocol):
    """What the word-order gate reads of a text (``analysis.AnalysedText`` provides it)."""

    @property
    def clean(self) -> str: ...

    @property
    def content_word_stems(self) -> tuple[str, ...]: ...


def check_role_order(claim: OrderedText, evidence: OrderedText) -> CheckResult:
    """MISSING (order of roles not confirmed) unless the role reader confirms every relation of the
    claim (read in both texts, sides in place, none swapped) or the claim keeps the evidence's word
    order around each verb: the nearest content words on either side (``ORDER_SIDE_WORDS``), both in
    the evidence, come there in the claim's order (``_order``). "A is a risk factor for B" (no cue the
    reader knows) then never keeps "B is a risk factor for A". Used where a claim is kept as written
    (binding, restatement), never to contradict: a reordered claim is not verified, and rewritten."""
    confirmed = _confirmed_cues(claim, evidence)
    if claim.relations and len(confirmed) == len(claim.relations):
        return pass_result(CheckName.ROLE)
    shared = frozenset(claim.content_word_stems) & frozenset(evidence.content_word_stems)
    for verb, before, after in _verb_pairs(claim.clean, shared, confirmed):
        if not _order(evidence.clean, before, after):
            detail = (
                f"the order of roles around '{verb}' is not confirmed: the source names "
                f"'{after}' before '{before}'"
            )
            return CheckResult(CheckName.ROLE, CheckOutcome.MISSING, detail)
    return pass_result(CheckName.ROLE)
