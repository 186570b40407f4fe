"""Named entities (medicines, conditions, body parts, populations, names) and the entity check."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from rapidfuzz import fuzz

from gateway.domain import ConflictKind
from gateway.stemming import stem
from gateway.text import strip_markers
from gateway.verification.checks.results import CheckName, CheckOutcome, CheckResult, clash, pass_result
from gateway.verification.checks.words import WORD
from gateway.verification.lexicon import Lexicon


class NamedText(Protocol):
    """What the entity check reads of a text (``analysis.AnalysedText`` provides it)."""

    @property
    def entities(self) -> tuple[Entity, ...]: ...
    @property
    def entity_text(self) -> str: ...
    @property
    def entity_words(self) -> tuple[str, ...]: ...
    @property
    def entity_stems(self) -> tuple[str, ...]: ...
    @property
    def entity_lists(self) -> EntityWords: ...
    @property
    def subjects(self) -> Mapping[str, str]:
        """``subjects`` of the text, read once per text."""
        ...


@dataclass(frozen=True)
class EntityWords:
    """The entity vocabulary (``data/lexicon.yaml``) and the patterns built from it (``entity_words``;
    ``CheckData.entities``)."""

    medicines: dict[str, str]
    """Surface form -> the first form of its group (the same for each table)."""
    vocabulary: dict[str, tuple[str, str]]
    """Every listed surface form -> (kind, canonical form)."""
    vocabulary_pattern: re.Pattern[str]
    drug_suffix: re.Pattern[str]
    condition_suffix: re.Pattern[str]
    """Condition names by their Greek/Latin suffix (pericarditis, fibrosis, leukaemia, neuropathy)."""
    not_conditions: frozenset[str]
    spellings: tuple[tuple[str, str], ...]
    class_terms: frozenset[str]
    """Medicine groups that name a class (or a very broad one): naming a member instead is no clash."""
    subjects: dict[str, str]
    """What findings are observed in (``subjects``): surface form -> its group's name; every listed
    population form -> the first group's (people)."""
    subjects_pattern: re.Pattern[str]
    stopwords: frozenset[str]
    """Function words, never a capitalised name (``lexicon.yaml`` ``stopwords``)."""


def _ending(words: tuple[str, ...]) -> re.Pattern[str]:
    """A word of at least three letters before one of ``words`` (suffixes)."""
    return re.compile(rf"\b[a-z]{{3,}}(?:{'|'.join(map(re.escape, words))})\b")


def entity_words(lists: Lexicon) -> EntityWords:
    """The entity vocabulary of ``lists`` and its patterns (``CheckData.load`` builds it at start-up)."""
    medicines = lists.table("medicines")
    vocabulary: dict[str, tuple[str, str]] = {
        form: (kind, canonical)
        for kind, table in (
            ("population", lists.table("populations")),
            ("medicine", medicines),
            ("condition", lists.table("conditions")),
            ("body part", lists.table("body_parts")),
        )
        for form, canonical in table.items()
    }
    pattern = _alternation(vocabulary)
    subjects = lists.table("subjects")
    people = lists.groups["subjects"][0][0]
    subjects.update({form: people for form in lists.table("populations") if form not in subjects})
    return EntityWords(
        medicines,
        vocabulary,
        pattern,
        _ending(lists.words["drug_suffixes"]),
        _ending(lists.words["condition_suffixes"]),
        frozenset(lists.words["not_conditions"]),
        lists.spellings,
        frozenset(lists.words["class_terms"]),
        subjects,
        _alternation(subjects),
        frozenset(lists.words["stopwords"]),
    )


def _alternation(forms: Iterable[str]) -> re.Pattern[str]:
    """Any of ``forms`` as a whole word or phrase, the longest that matches at a place.

    Written as a trie (``_trie``): the same matches as the alternation of the forms longest first, in
    a fifth of the time (the engine follows one branch per character instead of trying every form)."""
    return re.compile(r"(?<![\w-])(?:" + _trie(forms) + r")(?![\w-])")


_Trie = dict[str, "_Trie"]


def _trie(forms: Iterable[str]) -> str:
    """A pattern matching exactly ``forms`` (non-empty), sharing prefixes; a form that is the prefix
    of a longer one is an optional (greedy) tail, so the longest is tried first and backtracking
    gives up characters only as the boundary after it requires."""
    root: _Trie = {}
    for form in forms:
        node = root
        for char in form:
            node = node.setdefault(char, {})
        node[""] = {}

    def branch(node: _Trie) -> str:
        tails = [re.escape(char) + branch(child) for char, child in sorted(node.items()) if char]
        if not tails:
            return ""
        body = tails[0] if len(tails) == 1 else "(?:" + "|".join(tails) + ")"
        return f"(?:{body})?" if "" in node else body

    return branch(root)


_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b(?:[A-Z][a-z]+[A-Z0-9]\w*|[A-Z]{2,}[\w-]*|[A-Z][a-z]{2,}\w*)")
FUZZY_ENTITY = 85
"""rapidfuzz ratio (0-100) at which a capitalised name counts as present (Neanderthals ~ Neandertals)."""


@dataclass(frozen=True)
class Entity:
    text: str
    kind: str
    canonical: str


def us_spelling(text: str, words: EntityWords) -> str:
    """British medical spellings in American form, so "diarrhoea" finds "diarrhea"."""
    for british, american in words.spellings:
        text = text.replace(british, american)
    return text


def extract_entities(text: str, clean: str, words: EntityWords) -> tuple[Entity, ...]:
    """Vocabulary terms, drug-like names and capitalised names (not sentence-initial) in ``text``.

    ``clean`` is the text normalised in American spelling (``NamedText.entity_text``); ``words`` the
    entity vocabulary.
    """
    listed = words.vocabulary_pattern.finditer(clean)
    found = [Entity(m.group(0), *words.vocabulary[m.group(0)]) for m in listed]
    known = {e.text for e in found}
    found += [
        Entity(m.group(0), "medicine", m.group(0))
        for m in words.drug_suffix.finditer(clean)
        if m.group(0) not in known
    ]
    known |= {e.text for e in found}
    found += [
        Entity(m.group(0), "condition", m.group(0))
        for m in words.condition_suffix.finditer(clean)
        if m.group(0) not in known and m.group(0) not in words.not_conditions
    ]
    known |= {e.text for e in found}
    for match in _CAPITALISED.finditer(strip_markers(text)):
        word = match.group(0).lower()
        if word not in known and word not in words.stopwords and not _covered(word, known):
            found.append(Entity(word, "name", word))
            known.add(word)
    return tuple(found)


def _covered(word: str, known: Iterable[str]) -> bool:
    """Is the word part of a term already found ("covid" of "covid-19", "heart" of "heart failure")?"""
    return any(word in re.split(r"[\s-]+", k) for k in known)


_ADJECTIVES = (
    ("osis", "otic", "oses"),
    ("itis", "itic", "itides"),
    ("emia", "emic", "emias"),
    ("pathy", "pathic", "pathies"),
)
"""Condition endings: noun, adjective, Greek or Latin plural ("psychosis", "psychotic", "psychoses"),
forms the Snowball stem does not bring together."""


def _term_stems(term: str) -> tuple[tuple[str, ...], ...]:
    """The term's words as Snowball stems (``gateway.stemming``, as BM25 and the other checks compare
    words: "migraines" = "migraine", "babies" = "baby"), and for a condition noun the same with its
    adjective and plural ("psychosis" ~ "psychotic", "psychoses")."""
    words = WORD.findall(term)
    if not words:
        return ()
    head, last = tuple(stem(w) for w in words[:-1]), words[-1]
    found = [(*head, stem(last))]
    for noun, *others in _ADJECTIVES:
        if last.endswith(noun):
            found += [(*head, stem(last[: -len(noun)] + other)) for other in others]
            break
    return tuple(dict.fromkeys(found))


def _holds(stems: Sequence[str], wanted: tuple[str, ...]) -> bool:
    """Do ``stems`` hold the run of stems ``wanted``, in order and next to each other?"""
    n = len(wanted)
    return any(tuple(stems[i : i + n]) == wanted for i in range(len(stems) - n + 1) if stems[i] == wanted[0])


def _entity_present(
    entity: Entity, evidence_canon: set[str], words: Sequence[str], stems: Sequence[str]
) -> bool:
    """Is the entity in the evidence: its canonical form, its words up to inflection (``stems``: the
    evidence's ``words`` stemmed), or a name or medicine spelled nearly alike (``FUZZY_ENTITY``)?"""
    if entity.canonical in evidence_canon:
        return True
    if any(_holds(stems, wanted) for wanted in _term_stems(entity.text)):
        return True
    if entity.kind in {"name", "medicine"}:
        return any(
            fuzz.ratio(entity.text, w) >= FUZZY_ENTITY for w in words if abs(len(w) - len(entity.text)) <= 2
        )
    return False


_CLASHING_KINDS = frozenset(("medicine", "condition", "population"))
"""Body parts and capitalised names are only ever missing: a passage names many of them in passing."""


def _can_clash(entity: Entity, words: EntityWords) -> bool:
    return entity.kind in _CLASHING_KINDS and entity.canonical not in words.class_terms


def subjects(text: NamedText) -> dict[str, str]:
    """What the text says findings were observed in: subject group name -> the first form naming it."""
    found: dict[str, str] = {}
    words = text.entity_lists
    for match in words.subjects_pattern.finditer(text.entity_text):
        found.setdefault(words.subjects[match.group(0)], match.group(0))
    return found


def check_subjects(claim: NamedText, evidence: NamedText) -> CheckResult:
    """A claim about one subject (people, mice, cells in vitro: ``lexicon.yaml`` ``subjects``) whose
    evidence names other subjects and none of the claim's is a population CLASH ("in patients" against
    a source on mice). Never MISSING: evidence that names no subject says nothing about it, and "people"
    or "patients" are too common to require."""
    theirs = evidence.subjects
    if not theirs:
        return pass_result(CheckName.ENTITY)
    ours = claim.subjects
    if not ours or ours.keys() & theirs.keys():
        return pass_result(CheckName.ENTITY)
    said, other = next(iter(ours.values())), next(iter(theirs.values()))
    return clash(
        CheckName.ENTITY,
        ConflictKind.POPULATION,
        f"the claim is about {said!r}; the evidence about {other!r}",
        said,
        other,
    )


def check_entities(claim: NamedText, evidence: NamedText) -> CheckResult:
    """Every medicine, condition, body part, population and name of the claim must be in the evidence.

    A swapped drug (ibuprofen for paracetamol) or population (children for adults) is a CLASH when the
    evidence names another entity of the same kind; otherwise the entity is MISSING. The claim's
    subjects are compared first (``check_subjects``).
    """
    swapped = check_subjects(claim, evidence)
    if not swapped.passed:
        return swapped
    wanted = claim.entities
    if not wanted:
        return pass_result(CheckName.ENTITY)
    theirs = evidence.entities
    canon = {e.canonical for e in theirs}
    words = evidence.entity_words
    stems = evidence.entity_stems
    for entity in wanted:
        if _entity_present(entity, canon, words, stems):
            continue
        lists = claim.entity_lists
        rivals = [
            e.text
            for e in theirs
            if e.kind == entity.kind and _can_clash(entity, lists) and _can_clash(e, lists)
        ]
        if rivals:
            kind = ConflictKind.POPULATION if entity.kind == "population" else ConflictKind.ENTITY
            return clash(
                CheckName.ENTITY,
                kind,
                f"the claim names {entity.text!r}; the evidence names {rivals[0]!r}",
                entity.text,
                rivals[0],
            )
        return CheckResult(CheckName.ENTITY, CheckOutcome.MISSING, f"{entity.text!r} is not in the evidence")
    return pass_result(CheckName.ENTITY)
