"""A text's relation reading: its directed relations and its clauses' word order, read once per text.

The role checks (``checks.roles``) ask two things of a text: which relations it states, agent and
patient (``Relation``: the role reader over ``data/roles.yaml`` and the comparisons), and, where the
reader knows no cue of a claim, in which order a clause names two words and which of its words are
verbs. Both come from one ``Reading``, built once per text by its analysis (``AnalysedText.reading``)
and shared by every claim and evidence window that text meets: the word-order gate compares two
readings and never splits or stems a text again.

A word is a verb when it is a copula, auxiliary or modal (``verb_words``), or part of a relation cue
or a comparison anchor ("than"), or a form of a listed verb (``verbs``: "binds", "binding"; irregular
forms are listed themselves), unless it follows a noun marker or a preposition (``not_verb_after``:
"the damage", "of control") or precedes "of" (``not_verb_before``: "release of GH"). The lists are
grammar data in ``roles.yaml`` (no tagger is installed; they replace a guess by word endings that
read "cells" as a verb); a word outside them is read as a noun, so an unlisted verb is no pivot of
the gate (its relation, if any, is the reader's). A personal pronoun (``person_pronouns``: "you",
"him" read as "he") is a side like a content word: "an animal bites you" is not "you bite an animal".
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from gateway.verification.checks.role_reader import PAREN, Relation, RoleGrammar
from gateway.verification.checks.words import WORD


@dataclass(frozen=True)
class Clause:
    """One clause (between hard breaks, parentheses dropped): its words in order, with their stems,
    whether each is a content word and a verb, and the comma segment each lies in."""

    words: tuple[str, ...]
    stems: tuple[str, ...]
    content: tuple[bool, ...]
    verbs: tuple[bool, ...]
    segments: tuple[int, ...]


@dataclass(frozen=True)
class _Order:
    """The content stems of a clause without its movable phrases: first and last place of each."""

    first: dict[str, int]
    last: dict[str, int]


@dataclass(frozen=True)
class Reading:
    """What the role checks read of one text (see the module docstring)."""

    relations: tuple[Relation, ...]
    clauses: tuple[Clause, ...]
    ordered: tuple[_Order, ...]
    """Per clause of the whole text (parentheses kept), its fixed part's stems (``_fixed``)."""
    first_seen: dict[str, int]
    """Each stem's first place over the whole text's fixed clauses (the order of two words in no
    clause together)."""
    pronouns: frozenset[str] = frozenset()
    """The text's personal pronouns, each as its group's first form (``roles.yaml`` ``person_pronouns``):
    sides of the word-order gate, compared like content stems."""

    def states_before(self, first: str, second: str) -> bool:
        """Does the text state ``first`` before ``second``: in some clause holding both, and in none the
        other way round (in no clause together: the first occurrences' order)? A clause holding either
        word on both sides of the other (a heading run into its text, a repeated verb) shows no order
        and is skipped. Words of a movable phrase are in no order: a pair with one of them keeps its
        order. A word the text lacks refutes nothing."""
        before = after = together = False
        for clause in self.ordered:
            if first not in clause.first or second not in clause.first:
                continue
            together = True
            forward = clause.last[second] > clause.first[first]
            backward = clause.last[first] > clause.first[second]
            if forward and backward:
                continue
            before |= forward
            after |= backward
        if before or after:
            return before and not after
        if together or first not in self.first_seen or second not in self.first_seen:
            return True
        return self.first_seen[first] < self.first_seen[second]


def forms(verb: str) -> frozenset[str]:
    """The regular forms of a listed verb: "bind" binds, binding, binded (harmless); "stop" stops,
    stopped, stopping; "cause" causes, caused, causing; "carry" carries, carried. Irregular forms
    ("bound", "made") are listed entries of their own."""
    found = {verb, verb + "s", verb + "es", verb + "ed", verb + "ing"}
    if verb.endswith("e"):
        found |= {verb + "d", verb[:-1] + "ing"}
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        found |= {verb[:-1] + "ies", verb[:-1] + "ied"}
    if len(verb) > 2 and verb[-1] not in "aeiouwxy" and verb[-2] in "aeiou" and verb[-3] not in "aeiou":
        found |= {verb + verb[-1] + "ed", verb + verb[-1] + "ing"}
    return frozenset(found)


def verb_forms(grammar: RoleGrammar) -> frozenset[str]:
    """Every inflected form of the grammar's verbs (``CheckData.verb_forms``)."""
    return frozenset(form for verb in grammar.verbs for form in forms(verb))


def _is_verb(words: list[str], i: int, in_cue: bool, grammar: RoleGrammar, verbs: frozenset[str]) -> bool:
    word = words[i]
    if word in grammar.verb_words:
        return True
    if not in_cue and word not in verbs:
        return False
    after_noun_marker = i > 0 and words[i - 1] in grammar.not_verb_after
    return not after_noun_marker and (i + 1 == len(words) or words[i + 1] not in grammar.not_verb_before)


def _clause(text: str, grammar: RoleGrammar, verbs: frozenset[str]) -> Clause:
    cues = [pattern for _, pattern, _ in grammar.cues] if grammar.any_cue.search(text) else []
    pivots = [*cues, grammar.anchor]
    found = list(WORD.finditer(text))
    words = [w.group(0) for w in found]
    starts = [w.start() for w in found]
    in_cue = [False] * len(found)
    for pattern in pivots:  # the words starting inside a cue's span
        for m in pattern.finditer(text):
            for i in range(bisect_left(starts, m.start()), bisect_left(starts, m.end())):
                in_cue[i] = True
    commas = [m.start() for m in grammar.comma.finditer(text)]  # a word's segment: the commas before it
    return Clause(
        tuple(words),
        tuple(grammar.pronouns.get(w) or grammar.words.stem(w) for w in words),
        tuple(w in grammar.pronouns or grammar.words.is_content(w) for w in words),
        tuple(_is_verb(words, i, in_cue[i], grammar, verbs) for i in range(len(words))),
        tuple(bisect_left(commas, start) for start in starts),
    )


def _fixed(clause: str, grammar: RoleGrammar) -> str:
    """The clause without a comma segment opening or closing it that opens with a setting word
    (``setting_openers``: "With treatment, A ...", "..., in adults"): such a phrase may move freely."""
    parts = grammar.comma.split(clause)
    while len(parts) > 1 and grammar.setting.match(parts[0]):
        parts = parts[1:]
    while len(parts) > 1 and grammar.setting.match(parts[-1]):
        parts = parts[:-1]
    return ",".join(parts)


def _order(stems: list[str]) -> _Order:
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, s in enumerate(stems):
        first.setdefault(s, i)
        last[s] = i
    return _Order(first, last)


def read(clean: str, relations: tuple[Relation, ...], grammar: RoleGrammar, verbs: frozenset[str]) -> Reading:
    """The reading of a normalised text whose relations are ``relations`` (``roles.relations``);
    ``verbs``: the grammar's verb forms (``verb_forms``)."""
    clauses = tuple(_clause(part, grammar, verbs) for part in grammar.hard_break.split(PAREN.sub("", clean)))
    fixed = [
        [
            grammar.pronouns.get(w) or grammar.words.stem(w)
            for w in WORD.findall(_fixed(part, grammar))
            if _side(w, grammar)
        ]
        for part in grammar.hard_break.split(clean)
    ]
    seen: dict[str, int] = {}
    for i, s in enumerate(s for stems in fixed for s in stems):
        seen.setdefault(s, i)
    pronouns = frozenset(grammar.pronouns[w] for w in WORD.findall(clean) if w in grammar.pronouns)
    return Reading(relations, clauses, tuple(_order(stems) for stems in fixed), seen, pronouns)


def _side(word: str, grammar: RoleGrammar) -> bool:
    """Can the word be a side of the word-order gate: a content word or a personal pronoun?"""
    return word in grammar.pronouns or grammar.words.is_content(word)
