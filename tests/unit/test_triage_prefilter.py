"""The evidence reader's prefilter (#31 item 7): a term pattern runs only on a sentence holding what
each of its matches must contain, and finds exactly what it found without the prefilter."""

from __future__ import annotations

import re
import string
from typing import Any

from gateway.triage.evidence import EvidenceReader
from gateway.triage.evidence_policy import EvidencePolicy, TermGroup
from gateway.triage.prefilter import NON_ASCII_FOLDS, fold, may_match, needs
from tests.support.shipped_triage import TRIAGE

NEGATION = TRIAGE.settings.negation
CHEST = r"\b(pain\w*|ache)\b[^.?!]{0,30}\bchest\b"


class Spy:
    """Records the texts on which the prefilter let the chest pattern run (handed to the reader as its
    ``prefilter``)."""

    def __init__(self) -> None:
        self.searched: list[str] = []

    def may_match(self, needed: Any, folded: str) -> bool:
        allowed = may_match(needed, folded)
        if allowed and needed == needs(CHEST):
            self.searched.append(folded)
        return allowed


def spied_reader() -> tuple[EvidenceReader, Spy]:
    policy = EvidencePolicy(
        terms={"chest_discomfort": TermGroup(patterns=(CHEST,)), "fever": TermGroup(words=("fever",))},
        health_gate=("fever", "chest_discomfort"),
        categories={},
    )
    spy = Spy()
    return EvidenceReader(policy, NEGATION, {}, prefilter=spy.may_match), spy


def test_needs_are_the_literals_every_match_holds() -> None:
    assert needs(CHEST) == (frozenset({"chest"}), frozenset({"pain", "ache"}))
    assert needs(r"\bmains\b") == (frozenset({"mains"}),)
    assert needs(r"\b\d+\s*(g)?") == ()  # nothing every match must hold: always run
    assert needs(r"\b(blood|\d+)\b") == ()  # one branch needs no literal
    assert needs(r"(?<!pins and )\bpin") == (frozenset({"pin"}),)  # a lookbehind is no need


def test_a_group_whose_needs_are_absent_is_skipped() -> None:
    reader, spy = spied_reader()
    reading = reader.read("I have had a fever since Monday.")
    assert [h.group for h in reading.hits] == ["fever"]
    assert spy.searched == []


def test_a_group_whose_needs_are_present_still_matches_and_is_negated() -> None:
    reader, spy = spied_reader()
    (hit,) = reader.read("Crushing pain in my chest").hits
    assert (hit.group, hit.text, hit.negated) == ("chest_discomfort", "pain in my chest", False)
    (denied,) = reader.read("No pain in my chest at all").hits
    assert (denied.group, denied.negated) == ("chest_discomfort", True)
    assert len(spy.searched) == 2


def test_the_fold_keeps_what_re_matches_case_insensitively() -> None:
    # str.lower() turns "İ" into "i" and a combining dot: "PAİN" would lose its "pain"
    reader, _ = spied_reader()
    assert [h.text for h in reader.read("PAİN across my CHEſT").hits] == ["PAİN across my CHEſT"]
    assert fold("PAİN ıſ K") == "pain is k"
    assert not may_match(needs(CHEST), fold("a fever and a cough"))


def test_the_non_ascii_folds_are_all_of_re_s() -> None:
    """Every character ``re.IGNORECASE`` matches to an ASCII letter folds to that letter."""
    others = "".join(map(chr, range(0x80, 0x110000)))
    for letter in string.ascii_lowercase:
        matched = set(re.findall(letter, others, re.IGNORECASE))
        assert matched == {c for c, folded in NON_ASCII_FOLDS.items() if folded == letter}
    for char in string.punctuation + string.digits + " ":
        assert re.search(re.escape(char), others, re.IGNORECASE) is None


SENTENCES = (
    "My dad has crushing chest pain going down his left arm and he is grey and sweaty.",
    "She's 34 weeks pregnant and the baby hasn't moved since this morning.",
    "He took 30 paracetamol and a bottle of vodka about an hour ago, temp 39.5.",
    "My 3 month old has a temperature of 38.2 and is floppy, no wet nappy since last night.",
    "I don't want to live anymore, I've been saving up my tablets.",
    "No chest pain, no breathlessness, BP 165/112 at 36/40.",
    "Her face has dropped on one side and her speech is slurred, she can't lift her right arm.",
    "Blood everywhere, it won't stop bleeding after he cut his hand on broken glass.",
    "ŞİMDİ göğsümde ağrı var – CHEſT PAİN ıs BAD, 10/10, KNOCKED OUT COLD for a minute.",
    "My son (5 y/o) fell off the trampoline and banged his head, he can't remember what happened.",
    "What would an overdose of sertraline look like?",
    "Had a DVT in my leg in 2019, now my calf is swollen and hot again.",
)


def test_the_shipped_patterns_find_the_same_with_and_without_the_prefilter() -> None:
    reader = EvidenceReader(TRIAGE.evidence, NEGATION, TRIAGE.vitals.pressure_signs)
    patterns = [re.compile(p, re.IGNORECASE) for g in TRIAGE.evidence.terms.values() for p in g.patterns]
    assert patterns
    filtered = {}
    for sentence in SENTENCES:
        folded = fold(sentence)
        for pattern in patterns:
            if pattern.search(sentence):
                assert may_match(needs(pattern.pattern, pattern.flags), folded), (pattern.pattern, sentence)
        filtered[sentence] = reader.read(sentence)
        assert filtered[sentence].hits
    every_pattern_runs = EvidenceReader(
        TRIAGE.evidence, NEGATION, TRIAGE.vitals.pressure_signs, prefilter=lambda needed, folded: True
    )
    for sentence in SENTENCES:
        assert every_pattern_runs.read(sentence) == filtered[sentence]
