"""Triage's clauses (#34 item 4): sentences from the product's one splitter, with triage's options, then
cut at clause breaks. What ended each clause is kept (a rule matching within a sentence reads it). A date
excepting a term is read where it is attached to the term (#31, #34)."""

from __future__ import annotations

import re

import pytest

from gateway.errors import ConfigurationError, InvalidValue
from gateway.text import MAX_SENTENCE_WORDS
from gateway.triage.clauses import Clause, attached, clauses, joined_by_dash
from gateway.triage.evidence_policy import EvidencePolicy, TermDatesPolicy, TermGroup
from gateway.validation import validate
from tests.support.shipped_triage import TRIAGE

PARTS = TRIAGE.evidence.term_dates.parts


def test_sentences_then_clauses_with_what_ended_each() -> None:
    text = "chest pain but no fever; cant breathe - is it bad?\n\nshe said no. It started.Then worse!"
    assert clauses(text) == [
        Clause("chest pain", "but", 0),
        Clause("no fever", ";", 0),
        Clause("cant breathe", "-", 0),
        Clause("is it bad", "?", 0),
        Clause("she said no", ".", 1),
        Clause("It started", ".", 1),
        Clause("Then worse", "!", 1),
    ]


def test_a_stop_inside_closing_quotes_ends_the_clause_and_a_decimal_does_not() -> None:
    assert clauses('he said "I took 2.5 grams." (then slept.) now awake') == [
        Clause('he said "I took 2.5 grams', ".", 0),
        Clause("(then slept", ".", 0),
        Clause("now awake", ".", 0),
    ]


def test_a_long_post_is_never_cut_by_the_word_limit() -> None:
    run = " ".join(["i feel like i cant go on"] * MAX_SENTENCE_WORDS)
    assert clauses(run) == [Clause(run, ".", 0)]


def _dated(text: str) -> bool:
    return re.search(r"\byears ago\b|\bin 20\d\d\b", text, re.IGNORECASE) is not None


def _held(text: str, term: str) -> bool:
    start = text.index(term)
    return attached(text, start, start + len(term), _dated, PARTS)


def test_a_date_is_attached_to_the_term_of_its_own_part_or_told_right_beside_it() -> None:
    told = "had my knee done years ago and was in hospital last week"
    assert _held(told, "had my knee done")
    assert not _held(told, "in hospital")  # the knee's date, not the stay's
    assert _held("I had an operation, years ago", "operation")  # a short date after it
    assert _held("In 2015, I had an operation", "operation")  # a short date before it
    assert not _held("knee op years ago, in hospital last week", "in hospital")  # a part of its own
    assert not _held("in hospital, my knee was done years ago", "in hospital")
    assert not _held("in hospital last week", "in hospital")
    assert _held("surgery on my hip and knee years ago", "surgery")  # an "and" between nouns
    assert _held("had an operation, which was many years ago", "operation")


def test_the_words_that_part_a_clause_are_policy_checked_at_start_up() -> None:
    with pytest.raises(InvalidValue, match="break_words"):
        TermDatesPolicy(break_words=("but then",))
    with pytest.raises(ConfigurationError, match="date_words: must be <= 10, got 11"):
        validate(TermDatesPolicy, {"date_words": 11}, "evidence.yaml")
    dated = TermGroup(words=("operation",), unless=(r"\byears ago\b",), unless_scope="term")
    with pytest.raises(InvalidValue, match="term_dates"):
        EvidencePolicy(terms={"risk": dated}, health_gate=(), categories={})
    assert TermDatesPolicy(break_words=("but",)).parts is not None


def test_without_break_words_a_term_part_ends_at_punctuation_alone() -> None:
    bare = TermDatesPolicy(filler=("which",), date_words=3).parts
    told = "had my knee done years ago and was in hospital last week"
    assert attached(told, told.index("in hospital"), told.index("in hospital") + 11, _dated, bare)
    assert not _held("in hospital, my knee was done years ago", "in hospital")


def test_joined_by_dash_keeps_the_clauses_a_dash_joins() -> None:
    parts = clauses("right arm numb - is it the scarring. fine")
    assert joined_by_dash(parts, 0) == "right arm numb - is it the scarring"
    assert joined_by_dash(parts, 2) == "fine"
