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
from typing import TYPE_CHECKING, Protocol

from gateway.domain import ConflictKind
from gateway.verification.checks.results import CheckName, CheckOutcome, CheckResult, clash, pass_result
from gateway.verification.checks.role_reader import (
    SIDE_WORDS,
    Relation,
    RoleGrammar,
    read_relations,
)
from gateway.verification.checks.words import WORD, WordData
from gateway.verification.lexicon import Cues

if TYPE_CHECKING:
    from gateway.verification.checks.reading import Reading

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
    @property
    def role_lists(self) -> RolePatterns: ...


@dataclass(frozen=True)
class RolePatterns:
    than: re.Pattern[str]
    comparative: re.Pattern[str]
    more: re.Pattern[str]
    less: re.Pattern[str]
    clause_break: re.Pattern[str]


def role_patterns(words: Cues) -> RolePatterns:
    """The comparison cues (``CheckData.roles``)."""
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


def _stems(text: str, words: WordData) -> list[str]:
    return [words.stem(w) for w in WORD.findall(text) if words.is_content(w)]


def _relation(family: str, cue: str, left: str, right: str, words: WordData) -> Relation | None:
    agent = _stems(left, words)[-SIDE_WORDS:]
    patient = _stems(right, words)[:SIDE_WORDS]
    shared = set(agent) & set(patient)
    a, p = frozenset(agent) - shared, frozenset(patient) - shared
    if not a or not p:
        return None
    return Relation(family, a, p, cue)


def relations(clean: str, patterns: RolePatterns, grammar: RoleGrammar) -> tuple[Relation, ...]:
    """The directed relations of a normalised text (see the module docstring)."""
    found: list[Relation] = list(read_relations(clean, grammar))
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
        relation = _relation(ranking, f"{word.group(0)} ... than", agent, patient, grammar.words)
        if relation is not None:
            found.append(relation)
    return tuple(found)


_PARALLEL = re.compile(r"\b(in|among|for|with|at|during|after|before)\s+([^,;]+)$")
"""A comparison of two groups or settings, the comparative's subject aside: "X is more common in A than
in B" ranks A above B (the preposition repeated after "than")."""


def _exchanged(
    mine: tuple[frozenset[str], frozenset[str]],
    theirs: tuple[frozenset[str], frozenset[str]],
    one_sided: bool = False,
) -> bool:
    """Words of the claim's first role are in the evidence's second and words of its second in the
    evidence's first, and more of them than stay in place (words both sides share, such as the verb of
    "children recover faster than adults" or "other proteins" of two lists, are the frame).
    ``one_sided``: agent and patient, where a side left empty by a word on both sides ("lupus is
    caused by lupus nephritis": only "nephritis" is a side's own) moves one way only."""
    (x, y), (x2, y2) = mine, theirs
    to_y, to_x = (x & y2) - x2, (y & x2) - y2
    moved = (bool(to_y) and bool(to_x)) or (one_sided and not (x and y and x2 and y2) and bool(to_y | to_x))
    return moved and len(to_y) + len(to_x) > len(x & x2) + len(y & y2)


def _swapped(mine: Relation, theirs: Relation) -> bool:
    """The claim's agent and patient, or its setting and either, exchanged against the evidence's."""
    if mine.family != theirs.family:
        return False
    if _exchanged((mine.agent, mine.patient), (theirs.agent, theirs.patient), one_sided=True):
        return True
    return any(
        _exchanged((mine_a, mine_b), (theirs_a, theirs_b))
        for (mine_a, mine_b), (theirs_a, theirs_b) in (
            ((mine.agent, mine.setting), (theirs.agent, theirs.setting)),
            ((mine.patient, mine.setting), (theirs.patient, theirs.setting)),
        )
    )


def _aligned(mine: Relation, theirs: Relation) -> bool:
    """Same family, each side sharing a word with the evidence's (a side both leave empty, see
    ``role_reader._relation``, agrees), at least one of them."""
    agent, patient = mine.agent & theirs.agent, mine.patient & theirs.patient
    agent_ok = bool(agent) or not (mine.agent or theirs.agent)
    patient_ok = bool(patient) or not (mine.patient or theirs.patient)
    return mine.family == theirs.family and agent_ok and patient_ok and bool(agent or patient)


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


def _lower(relation: Relation, patterns: RolePatterns) -> bool:
    return patterns.less.match(relation.cue.split()[0]) is not None


def reversed_comparison(claim: RelatedText, evidence: RelatedText, words: tuple[str, str]) -> bool:
    """Is the opposition of ``words`` (the claim's comparative, the evidence's) a comparison read the
    other way round ("B is less common than A" for "A is more common than B")? Every ranking of the
    claim must then be the evidence's, its sides in their places, with the opposite comparative."""
    patterns = claim.role_lists
    if not all(patterns.more.match(w) or patterns.less.match(w) for w in words):
        return False
    rankings = [r for r in claim.relations if r.cue.endswith("... than")]
    theirs = [r for r in evidence.relations if r.cue.endswith("... than")]
    return bool(rankings) and all(
        any(_aligned(mine, other) and _lower(mine, patterns) != _lower(other, patterns) for other in theirs)
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
    """The cues of the claim's relations that the evidence states the same way round (aligned with no
    word crossed, swapped with none): the word-order gate does not ask for their sides' order."""
    theirs = evidence.relations
    return [
        mine.cue
        for mine in claim.relations
        if any(_aligned(mine, other) and not _crossed(mine, other) for other in theirs)
        and not any(_swapped(mine, other) for other in theirs)
    ]


def _crossed(mine: Relation, theirs: Relation) -> bool:
    """A word of the claim's agent only on the evidence's patient side, and one of its patient only on
    the evidence's agent side: "GH by the liver stimulates the pituitary" against "GH by the pituitary
    stimulates the liver" shares "GH" in place but exchanges the organs. Such a relation confirms
    nothing (its word order is then asked). One way only is a modifier that moved ("B is caused by A
    in adults" for "A causes B in adults")."""
    return bool((mine.agent & theirs.patient) - theirs.agent) and bool(
        (mine.patient & theirs.agent) - theirs.patient
    )


ORDER_SIDE_WORDS = 2
"""Shared content words read on each side of a verb by the word-order gate (the nearest ones)."""
AUXILIARY_REACH = 3
"""Words after an auxiliary in which its verb is looked for ("are sometimes caused", "may be caused")."""


def _verb_pairs(
    claim: OrderedText, shared: frozenset[str], confirmed: list[str], grammar: RoleGrammar
) -> list[tuple[str, str, str]]:
    """(verb, a shared content stem before it, one after it) for each verb of each comma segment of the
    claim (``Reading``: a relation cue, a copula or modal, a listed verb, a comparison's anchor) and the
    ``ORDER_SIDE_WORDS`` nearest shared stems on each side in it (a phrase set off by commas, "In
    children, A is common", may move freely; a word twice in the clause has no one place; the left side
    reaches back past an appositive when the segment has none). The verbs of confirmed cues, and an
    auxiliary before one ("is" of "is caused by"), are no pivots, and a side never reaches across one:
    a confirmed relation's sides are in place, and a verb inside a side ("by HRT that contains
    estrogen") is checked within it."""
    found: list[tuple[str, str, str]] = []
    cues = [r.cue for r in claim.relations]
    unconfirmed = [cue for cue in set(cues) if cues.count(cue) > confirmed.count(cue)]
    known = {w for cue in confirmed for w in WORD.findall(cue)} - {
        w for cue in unconfirmed for w in WORD.findall(cue)
    }  # a cue word of a relation not confirmed ("causes" twice, one way round each) stays a pivot
    for clause in claim.reading.clauses:
        exempt = [w in known for w in clause.words]
        for i in reversed(range(len(exempt) - 1)):  # "are sometimes" of "are sometimes caused by"
            near = range(i + 1, min(i + 1 + AUXILIARY_REACH, len(exempt)))
            following = next((j for j in near if clause.verbs[j]), None)
            auxiliary = clause.words[i] in grammar.verb_words
            exempt[i] = exempt[i] or (auxiliary and following is not None and exempt[following])
        cuts = [i for i, e in enumerate(exempt) if e]
        entities = [
            (i, s)
            for i, s in enumerate(clause.stems)
            if not clause.verbs[i] and clause.content[i] and s in shared and clause.stems.count(s) == 1
        ]
        for v, is_verb in enumerate(clause.verbs):
            if not is_verb or exempt[v]:
                continue
            segment = clause.segments[v]
            start = max((c for c in cuts if c < v), default=-1)
            end = min((c for c in cuts if c > v), default=len(exempt))
            side = [(i, s) for i, s in entities if start < i < end]
            own = [s for i, s in side if i < v and clause.segments[i] == segment]
            left = (own or [s for i, s in side if i < v])[-ORDER_SIDE_WORDS:]
            right = [s for i, s in side if i > v and clause.segments[i] == segment][:ORDER_SIDE_WORDS]
            found += [(clause.words[v], a, b) for a in left for b in right if a != b]
    return found


class OrderedText(RelatedText, Protocol):
    """What the word-order gate reads of a text (``analysis.AnalysedText`` provides it)."""

    @property
    def reading(self) -> Reading: ...

    @property
    def content_word_stems(self) -> tuple[str, ...]: ...

    @property
    def role_grammar(self) -> RoleGrammar: ...


def check_role_order(claim: OrderedText, evidence: OrderedText) -> CheckResult:
    """MISSING (order of roles not confirmed) unless the claim keeps the evidence's word order around
    each of its verbs whose relation the role reader does not confirm (a cue read in both texts, sides
    in place, none swapped, is no pivot): the nearest content words on either side
    (``ORDER_SIDE_WORDS``), both in the evidence, come there in the claim's order
    (``Reading.states_before``). A confirmed relation vouches for its own cue only: "GH by the liver
    stimulates the pituitary to produce B" against "GH by the pituitary stimulates the liver to produce
    B" confirms "produce" and still asks "stimulates" for its order. Both texts are read once
    (``AnalysedText.reading``). "A is a risk factor for B" (no cue the reader knows) then never keeps
    "B is a risk factor for A". Used where a claim is kept as written (binding, restatement), never to
    contradict: a reordered claim is not verified, and rewritten."""
    confirmed = _confirmed_cues(claim, evidence)
    shared = frozenset(claim.content_word_stems) & frozenset(evidence.content_word_stems)
    shared |= claim.reading.pronouns & evidence.reading.pronouns  # "you" of "an animal bites you"
    for verb, before, after in _verb_pairs(claim, shared, confirmed, claim.role_grammar):
        if not evidence.reading.states_before(before, after):
            detail = (
                f"the order of roles around '{verb}' is not confirmed: the source names "
                f"'{after}' before '{before}'"
            )
            return CheckResult(CheckName.ROLE, CheckOutcome.MISSING, detail)
    return pass_result(CheckName.ROLE)
