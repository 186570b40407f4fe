"""Who does what to whom: the agent and patient of each relation cue of a text, read by rules.

No parser is installed, so the reader works over word order and the cues of ``data/cues.yaml``
(``role_relations``) and ``data/roles.yaml``. For each relation cue it finds the cue's clause and reads:

- active: the agent is the subject before the cue, the patient the words after it ("A causes B");
- passive and inverse cues: the agent follows "by" or the cue ("B is caused by A", "B results from
  A"), the subject is the patient;
- relative clauses: "the B that A causes" (a subject between the pronoun and the cue, nothing after
  the cue) is A cause B; "A, which causes B" (nothing between) takes the antecedent A; a clause after
  "how" / "whether" has its own subject ("how A affects B");
- appositives and parentheses: "(CIDP)" is dropped; "A, an inherited condition, is caused by B" takes
  the subject before the appositive;
- a sentence-opening setting ("In patients with A, B can cause C") is the relation's third role.

Each side keeps the content stems nearest the cue (``SIDE_WORDS``). The check (``checks.roles``)
compares the sides of the claim's relations with the evidence's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Annotated

from pydantic import Field, with_config

from gateway.validation import FILE_CONFIG, load_file, refuse
from gateway.verification.checks.words import WORD, WordData
from gateway.verification.lexicon import Regex, Word, alternation

ROLES_PATH = Path(__file__).parent.parent / "data" / "roles.yaml"
SIDE_WORDS = 4
"""Content words read on each side of a relation's cue (the nearest ones, inside its clause)."""

Words = Annotated[tuple[Word, ...], Field(min_length=1)]


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class _Inverse:
    family_of: Word
    cue: Regex


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class _RolesFile:
    """``roles.yaml`` as written."""

    inverse_relations: Annotated[tuple[_Inverse, ...], Field(min_length=1)]
    passive_agents: Words
    relative_pronouns: Words
    clause_openers: Words
    appositive_openers: Words
    antecedent_links: Words
    setting_openers: Words
    coordinators: Words
    noun_markers: Words
    complement_heads: Words
    phrase_ends: Words
    frames: Words
    verb_words: Words
    verbs: Words
    not_verb_after: Words
    not_verb_before: Words
    side_continuers: Words
    person_pronouns: Annotated[tuple[Words, ...], Field(min_length=1)]


@dataclass(frozen=True)
class Relation:
    """One directed relation of a text: its family, and the content stems of each side."""

    family: str
    agent: frozenset[str]
    patient: frozenset[str]
    cue: str
    """The cue as written ("causes", "more ... than"), for the reason."""
    setting: frozenset[str] = frozenset()
    """The relation's setting ("in patients with loiasis"), when the sentence opens with one."""
    inverse: bool = False
    """Read from an inverse cue ("results from"): its agent after it."""


@dataclass(frozen=True)
class RoleGrammar:
    """The compiled reader data: (family name, cue pattern, inverse) per cue, and the word patterns."""

    cues: tuple[tuple[str, re.Pattern[str], bool], ...]
    """Inverse cues first (``read_relations`` reads them before the others), each group in data order."""
    by: re.Pattern[str]
    relative: re.Pattern[str]
    opener: re.Pattern[str]
    appositive: re.Pattern[str]
    link: re.Pattern[str]
    setting: re.Pattern[str]
    coordinated: re.Pattern[str]
    noun: re.Pattern[str]
    complement: re.Pattern[str]
    phrase_end: re.Pattern[str]
    coordinator: re.Pattern[str]
    frames: tuple[tuple[str, re.Pattern[str]], ...]
    """(name, pattern) per frame; the name is the frame's two words ("of with")."""
    anchor: re.Pattern[str]
    hard_break: re.Pattern[str]
    comma: re.Pattern[str]
    verb_words: frozenset[str]
    """Copulas, auxiliaries and modals: verbs for the word-order gate (``checks.reading``)."""
    verbs: frozenset[str]
    """Listed verbs (matched by stem), unless right after a word of ``not_verb_after``."""
    not_verb_after: frozenset[str]
    not_verb_before: frozenset[str]
    side_continuers: frozenset[str]
    """Words after which a relation cue continues a side instead of ending it (``_before_next_cue``)."""
    pronouns: Mapping[str, str]
    """A personal pronoun's forms -> its group's first form ("him" -> "he"): a side of the word-order
    gate, though no content word ("an animal bites you" against "you bite an animal")."""
    words: WordData
    """The checks' words: a side's content words and their stems."""
    any_cue: re.Pattern[str]
    """Matches where any pattern of ``cues`` matches (their alternation): a text it finds nothing in
    has no cue, and the cues are not looked for one by one (most sentences have none)."""


def _words(entries: tuple[str, ...]) -> str:
    return alternation(entries, literal=True)


def load_role_grammar(text_words: WordData, path: Path = ROLES_PATH) -> RoleGrammar:
    """Read and compile ``roles.yaml`` with the ``role_relations`` families of ``cues.yaml`` (of
    ``text_words``; ``CheckData.load`` reads it at start-up)."""
    data = load_file(path, _RolesFile)
    words = text_words.cues
    families = [
        (f"relation {i}", re.compile(rf"\b(?:{entry})\b"))
        for i, entry in enumerate(words.lists["role_relations"])
    ]
    found: list[tuple[str, re.Pattern[str], bool]] = [(name, pattern, False) for name, pattern in families]
    for inverse in data.inverse_relations:
        owners = [name for name, pattern in families if pattern.fullmatch(inverse.family_of)]
        if len(owners) != 1:
            reason = (
                f"{inverse.family_of!r} is in {len(owners)} role_relations families of cues.yaml, not one"
            )
            refuse(str(path), "inverse_relations", reason)
        found.append((owners[0], re.compile(rf"\b(?:{inverse.cue})\b"), True))
    breaks = words.clause_break_punctuation.replace(",", "")
    return RoleGrammar(
        tuple(sorted(found, key=lambda cue: not cue[2])),
        re.compile(rf"^\s*{_words(data.passive_agents)}\b"),
        re.compile(rf"\b{_words(data.relative_pronouns)}\b"),
        re.compile(rf"\b{_words(data.clause_openers)}\b"),
        re.compile(rf"^\s*{_words(data.appositive_openers)}\b"),
        re.compile(rf"\b{_words(data.antecedent_links)}\b"),
        re.compile(rf"^\s*{_words(data.setting_openers)}\b"),
        re.compile(rf"^\s*{_words(data.coordinators)}\s+[a-z]+\b"),
        re.compile(rf"\b{_words(data.noun_markers)}\s*$"),
        re.compile(rf"\b{_words(data.complement_heads)}\s*$"),
        re.compile(rf"\b{_words(data.phrase_ends)}\b"),
        re.compile(rf"^\s*{_words(data.coordinators)}\b"),
        tuple((frame, _frame(frame)) for frame in data.frames),
        words.pattern(r"\b<<comparison_anchors>>\b"),
        words.pattern(rf"[{breaks}]|\b<<clause_break_words>>\b"),
        re.compile(r","),
        frozenset(data.verb_words),
        frozenset(data.verbs),
        frozenset(data.not_verb_after),
        frozenset(data.not_verb_before),
        frozenset(data.side_continuers),
        MappingProxyType({form: group[0] for group in data.person_pronouns for form in group}),
        text_words,
        re.compile("|".join(f"(?:{pattern.pattern})" for _, pattern, _ in found)),
    )


def _frame(frame: str) -> re.Pattern[str]:
    first, second = frame.split()
    return re.compile(
        rf"\b{re.escape(first)}\s+((?:(?!\b{re.escape(second)}\b)[^,])+?)\s+{re.escape(second)}\s+([^,]+)"
    )


PAREN = re.compile(r"\s*\([^()]*\)")
_DOTTED = re.compile(r"\b(?:[a-z]\.){2,}")
"""An abbreviation with dots ("p.a.d."): one word, and its dots end no clause."""


def _stems(text: str, grammar: RoleGrammar) -> list[str]:
    words = grammar.words
    return [words.stem(w) for w in WORD.findall(text) if words.is_content(w)]


def _has_content(text: str, grammar: RoleGrammar) -> bool:
    return bool(_stems(text, grammar))


def _segments(text: str, grammar: RoleGrammar) -> list[str]:
    """The comma segments of ``text`` after its last hard clause break, in order; a list ("A, B and
    C") is one segment."""
    breaks = list(grammar.hard_break.finditer(text))
    tail = text[breaks[-1].end() :] if breaks else text
    parts = grammar.comma.split(tail)
    if len(parts) > 1 and grammar.coordinator.match(parts[-1]):
        first = len(parts) - 1
        while (
            first > 0
            and not grammar.setting.match(parts[first - 1])
            and not grammar.appositive.match(parts[first])
        ):
            first -= 1
        parts[first:] = [", ".join(parts[first:])]
    return parts


def _subject(before: list[str], grammar: RoleGrammar) -> tuple[str, str]:
    """(subject, setting) from the comma segments before the cue, the cue's own segment last."""
    own, earlier = before[-1], before[:-1]
    setting = earlier[0] if earlier and grammar.setting.match(earlier[0]) else ""
    if _has_content(own, grammar):
        return own, setting
    # nothing before the cue in its segment: the subject is an earlier segment, an appositive skipped
    while earlier:
        last = earlier.pop()
        if grammar.appositive.match(last) and earlier and earlier[-1] is not setting:
            continue
        return ("", setting) if last is setting else (last, setting)
    return "", setting


def _antecedent(segment: str, grammar: RoleGrammar) -> str:
    """The noun phrase a ", which" refers to: after the last linking word of its segment."""
    links = list(grammar.link.finditer(segment))
    return segment[links[-1].end() :] if links else segment


def _object(after_text: str, grammar: RoleGrammar) -> str:
    """The side read after a cue: to its clause's end (a list whole), before a following verb."""
    found = grammar.hard_break.search(after_text)
    right = after_text[: found.start()] if found else after_text
    parts = grammar.comma.split(right)
    listed = any(grammar.coordinator.match(part) for part in parts[1:])
    right = right if listed else parts[0]
    end = grammar.phrase_end.search(right)
    return right[: end.start()] if end else right


def _has_cue(text: str, grammar: RoleGrammar) -> bool:
    return any(pattern.search(text) for _, pattern, _ in grammar.cues)


def _before_next_cue(side: str, grammar: RoleGrammar) -> str:
    """A side read after its cue ends before the next relation cue that is a verb of its own ("causes A
    also causes B", "causes A that leads to B": A; "the B that A causes also causes C": nothing), so
    that the two relations' sides do not overlap. A cue opening the side ("causes damage to B"), after
    a noun marker ("the damage"), after a coordinator ("inflammation and damage to
    B") or after an infinitive marker ("action to control B", ``side_continuers``) is part of the side."""
    for start in sorted(m.start() for _, pattern, _ in grammar.cues for m in pattern.finditer(side)):
        words = side[:start].split()
        if words and words[-1] not in grammar.side_continuers and not grammar.noun.search(side[:start]):
            return side[:start]  # "also causes B": the side is empty (a relative "the B that A causes")
    return side


def _relation(
    family: str,
    cue: str,
    agent: list[str],
    patient: list[str],
    setting: str,
    grammar: RoleGrammar,
    inverse: bool = False,
) -> Relation | None:
    """The relation over each side's distinctive words (a word on both sides, "lupus" of "lupus is
    caused by lupus nephritis", has no side); one side may then be empty, not both."""
    shared = set(agent) & set(patient)
    left, right = frozenset(agent) - shared, frozenset(patient) - shared
    if not agent or not patient or not (left or right):
        return None
    return Relation(family, left, right, cue, frozenset(_stems(setting, grammar)) - left - right, inverse)


def _sides(
    own: str, before: list[str], right: str, passive: bool, grammar: RoleGrammar
) -> tuple[str, str, str, bool]:
    """(subject, object, setting, object relative) of a cue whose clause has ``own`` before it."""
    opener = list(grammar.opener.finditer(own))
    pronoun = list(grammar.relative.finditer(own))
    if pronoun and (
        not opener
        or pronoun[-1].start() > opener[-1].start()
        or _has_cue(own[pronoun[-1].end() : opener[-1].start()], grammar)  # "genes that control how"
    ):
        between, head = own[pronoun[-1].end() :], own[: pronoun[-1].start()]
        verb_between = _has_cue(between, grammar)
        if verb_between and not grammar.coordinator.search(between.split()[-1] if between.split() else ""):
            # the pronoun is an earlier verb's: an active cue after a relative clause with its own
            # relation has the clause's head as subject ("the virus that causes A also causes B")
            head_first = not passive and _has_content(head, grammar)
            subject, setting = _subject([*before[:-1], head] if head_first else before, grammar)
            return subject, right, setting, False
        if (
            not passive
            and _has_content(between, grammar)
            and not verb_between
            and not _has_content(right, grammar)
        ):
            return between, head, "", True  # "the B that A causes": A causes B
        if _has_content(between, grammar) and not verb_between and grammar.complement.search(head):
            return between, right, "", False  # "evidence that A reduces B"
        # "A that causes B", "A, which causes B", "A that affects C and causes B", "A that is B causes C"
        subject, setting = _subject([*before[:-1], head], grammar)
        if not _has_content(head, grammar):
            subject = _antecedent(subject, grammar)
        return subject, right, setting, False
    if opener:
        return own[opener[-1].end() :], right, "", False  # "how A affects B"
    subject, setting = _subject(before, grammar)
    return subject, right, setting, False


def _read(
    text: str, match: re.Match[str], family: str, inverse: bool, grammar: RoleGrammar
) -> Relation | None:
    before_text, after_text = text[: match.start()], text[match.end() :]
    if grammar.noun.search(before_text):
        return None  # "an increase in", "the cause of": a noun, not a relation
    before = _segments(before_text, grammar)
    right, passive = after_text, inverse
    coordinated = grammar.coordinated.match(right)
    if coordinated is not None and not inverse:
        right = right[coordinated.end() :]  # "prevent or delay B", "prevented or delayed by A"
    by = grammar.by.match(right)
    if by is not None:
        right, passive = right[by.end() :], True
    right = _before_next_cue(_object(right, grammar), grammar)
    subject, after, setting, object_relative = _sides(before[-1], before, right, passive, grammar)
    near_before = _stems(subject, grammar)[-SIDE_WORDS:]
    if object_relative:
        return _relation(
            family,
            match.group(0),
            _stems(subject, grammar)[:SIDE_WORDS],
            _stems(after, grammar)[-SIDE_WORDS:],
            "",
            grammar,
        )
    near_after = _stems(after, grammar)[:SIDE_WORDS]
    if passive:
        return _relation(family, match.group(0), near_after, near_before, setting, grammar, inverse)
    return _relation(family, match.group(0), near_before, near_after, setting, grammar)


FramePrefilter = Callable[[str, str], bool]
"""(text, frame name) -> whether the frame may match in the text (``may_frame``)."""

FRAME_WORDS = (2, 3)
"""Content words of the first and the second object of a frame."""


def _frames(text: str, grammar: RoleGrammar, prefilter: FramePrefilter) -> list[Relation]:
    """The objects of each frame ("of A with B") within a clause, as agent and patient; only the frames
    ``prefilter`` lets through are searched."""
    found: list[Relation] = []
    frames = [(name, pattern) for name, pattern in grammar.frames if prefilter(text, name)]
    if not frames:
        return found
    for part in grammar.hard_break.split(text):
        for name, pattern in frames:
            for match in pattern.finditer(part):
                if grammar.anchor.search(match.group(0)):
                    continue  # "women with A have a higher risk than women with B": the comparison's
                first = _stems(match.group(1), grammar)[: FRAME_WORDS[0]]
                second = grammar.phrase_end.split(match.group(2))[0]
                relation = _relation(
                    f"frame {name}", name, first, _stems(second, grammar)[: FRAME_WORDS[1]], "", grammar
                )
                if relation is not None:
                    found.append(relation)
    return found


def may_frame(text: str, name: str) -> bool:
    """Whether the frame's second word follows its first one somewhere in ``text``: a frame pattern
    matches only where it does (in a part of ``text``, so in ``text``), so a text failing this
    cannot match it, and most texts are not searched with it at all."""
    first, second = name.split()
    start = text.find(first)
    return start >= 0 and text.find(second, start + len(first)) >= 0


def read_relations(
    clean: str, grammar: RoleGrammar, *, prefilter: FramePrefilter = may_frame
) -> tuple[Relation, ...]:
    """The directed relations of the verbs of a normalised text (see the module docstring).

    ``prefilter``: which frames are worth searching in a text (``may_frame``; a test hands one that
    searches every frame, to show the shortcut loses nothing)."""
    text = PAREN.sub("", clean) if "(" in clean else clean  # both patterns need their character
    if "." in text:
        text = _DOTTED.sub(lambda m: m.group(0).replace(".", "") + " ", text)
    if grammar.any_cue.search(text) is None:
        return tuple(_frames(text, grammar, prefilter))
    found: list[Relation] = []
    taken: list[tuple[int, int]] = []
    for family, pattern, inverse in grammar.cues:  # inverse cues first
        for match in pattern.finditer(text):
            if any(s < match.end() and match.start() < e for s, e in taken):
                continue  # an inverse cue ("treated with") already read these words
            taken.append(match.span())
            relation = _read(text, match, family, inverse, grammar)
            if relation is not None:
                found.append(relation)
    return (*found, *_frames(text, grammar, prefilter))
