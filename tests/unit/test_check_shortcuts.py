"""The checks' shortcuts read what the full reading reads (#35 item 7, speed): the cue alternation
skips no text a cue matches, a text's relations are read without its clauses, a text's subjects
once, and a text without antonym words opposes none."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from gateway.text import normalise
from gateway.verification.checks.entities import subjects
from gateway.verification.checks.polarity import check_antonyms
from gateway.verification.checks.reading import read
from gateway.verification.checks.role_reader import read_relations
from gateway.verification.checks.roles import relations
from tests.support.checks import CHECK_DATA, analysed

RESTATEMENTS = Path(__file__).resolve().parents[2] / "bench" / "data" / "restatements"
EXTRA = [
    "Smoking causes lung cancer.",
    "Lung cancer is caused by smoking.",
    "Lung cancer can result from smoking, which leads to death.",
    "The lung cancer that smoking causes is common (in adults).",
    "Women with diabetes have a higher risk than women without it.",
    "It is not known.",
    "",
]
ALWAYS = re.compile("")
"""A cue alternation that finds something in every text: every cue is then looked for one by one."""


def _texts() -> list[str]:
    rows = [json.loads(line) for line in (RESTATEMENTS / "medquad_restatements.jsonl").open(encoding="utf-8")]
    return [normalise(t) for r in rows for t in (r["claim"], r["evidence"])] + [normalise(t) for t in EXTRA]


TEXTS = _texts()


def test_the_cue_alternation_finds_a_text_exactly_when_a_cue_does() -> None:
    grammar = CHECK_DATA.grammar
    found = [bool(grammar.any_cue.search(t)) for t in TEXTS]
    assert found == [any(p.search(t) for _, p, _ in grammar.cues) for t in TEXTS]
    assert any(found)
    assert not all(found)


def test_relations_and_readings_are_those_read_cue_by_cue() -> None:
    data = CHECK_DATA
    cue_by_cue = replace(data.grammar, any_cue=ALWAYS)
    for text in TEXTS:
        found = relations(text, data.roles, data.grammar)
        assert found == relations(text, data.roles, cue_by_cue)
        assert read(text, found, data.grammar, data.verb_forms) == read(
            text, found, cue_by_cue, data.verb_forms
        )
    assert sum(bool(read_relations(t, data.grammar)) for t in TEXTS) > 10


def test_a_texts_relations_are_read_without_its_clauses() -> None:
    text = analysed("Lung cancer is caused by smoking.")
    assert text.relations
    assert "reading" not in vars(text)
    assert text.reading.relations is text.relations


def test_a_texts_subjects_are_read_once() -> None:
    text = analysed("In mice, the drug reduced tumour growth.")
    assert text.subjects == subjects(text)
    assert text.subjects is text.subjects
    with pytest.raises(TypeError):
        text.subjects["people"] = "people"  # type: ignore[index]


def test_antonym_words_are_every_word_of_every_pair() -> None:
    lists = CHECK_DATA.polarity
    assert lists.antonym_words == {w for pair in lists.antonyms for side in pair for w in side}


@pytest.mark.parametrize(
    ("claim", "evidence", "passed"),
    [
        ("The drug increases blood pressure.", "The drug reduces blood pressure.", False),
        ("The drug was given to adults.", "The drug increases blood pressure.", True),
        ("The drug increases blood pressure.", "The drug was given to adults.", True),
        (
            "Obese patients were just as likely to be admitted.",
            "Obese patients were more likely to be admitted.",
            False,
        ),
    ],
)
def test_a_text_without_antonym_words_opposes_none(claim: str, evidence: str, passed: bool) -> None:
    """The last: no antonym word in the claim, yet "no difference" against a difference still clashes."""
    assert check_antonyms(analysed(claim), analysed(evidence)).passed is passed
