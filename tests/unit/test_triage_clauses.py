"""Triage's clauses (#34 item 4): sentences from the product's one splitter, with triage's options, then
cut at clause breaks. What ended each clause is kept (a rule matching within a sentence reads it)."""

from __future__ import annotations

from gateway.text import MAX_SENTENCE_WORDS
from gateway.triage.clauses import Clause, clauses


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
