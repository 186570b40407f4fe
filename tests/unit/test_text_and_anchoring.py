"""Sentence boundaries and quote anchoring."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest

from gateway.claims.bounds import check_repeats, sentence_keys
from gateway.domain import ClaimToCheck, Passage, VerdictLabel
from gateway.errors import DraftLimitExceeded
from gateway.text import MAX_SENTENCE_WORDS, sentence_spans, split_sentences, strip_markers
from gateway.verification.anchoring import QuoteAnchoringVerifier, find_quote

PASSAGE = "Adults can take 500 mg to 1 g every 4 to 6 hours.  Do not take more than 4 g in 24 hours."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Take 500 mg, e.g. with food. Then rest.", ["Take 500 mg, e.g. with food.", "Then rest."]),
        ("Do not exceed 4 g. [1] Dr. Smith agrees.", ["Do not exceed 4 g. [1]", "Dr. Smith agrees."]),
        ("Use 0.5 mg daily [2]. Stop if sick!", ["Use 0.5 mg daily [2].", "Stop if sick!"]),
        ("Intro:\n- first item\n- second item", ["Intro:", "first item", "second item"]),
        (
            "Treatment has phases. - Chemotherapy is first. - A -5 mg change is rare.",
            ["Treatment has phases.", "Chemotherapy is first.", "A -5 mg change is rare."],
        ),
        ("Para one.\n\nPara two", ["Para one.", "Para two"]),
    ],
)
def test_sentence_splitting(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hi. i have a cough. what can i take?", ["hi.", "i have a cough.", "what can i take?"]),
        ("thanks\nalso can i take ibuprofen", ["thanks", "also can i take ibuprofen"]),
        ("i take 2.5 mg, e.g. with food. is that ok?", ["i take 2.5 mg, e.g. with food.", "is that ok?"]),
        ("Rest is key [1]. then drink water.", ["Rest is key [1].", "then drink water."]),
    ],
)
def test_typed_text_splits_before_lower_case_and_at_every_line(text: str, expected: list[str]) -> None:
    assert split_sentences(text, typed=True) == expected
    assert len(split_sentences(text)) < len(expected)  # edited text: a sentence starts with a capital


def test_the_triage_options_keep_every_boundary_a_patient_meant() -> None:
    text = "it hurts.Then i fell.im scared. he said no. It started at 2.5 mg e.g. today"
    assert split_sentences(text, typed=True) == [
        "it hurts.Then i fell.im scared.",
        "he said no. It started at 2.5 mg e.g. today",
    ]
    spans = sentence_spans(text, typed=True, every_stop=True, abbreviations=False)
    assert [text[s.start : s.end] for s in spans] == [
        "it hurts.",
        "Then i fell.",
        "im scared.",
        "he said no.",
        "It started at 2.5 mg e.",
        "g.",
        "today",
    ]


def test_without_a_word_limit_an_overlong_run_is_one_sentence() -> None:
    run = " ".join(f"w{i}" for i in range(3 * MAX_SENTENCE_WORDS))
    assert len(split_sentences(run)) == 3
    assert [(s.start, s.end) for s in sentence_spans(run, typed=True, max_words=None)] == [(0, len(run))]


def test_the_repeat_bound_counts_sentences_by_the_same_splitter() -> None:
    loop = "take the tablets with food. " * 4 + "Dr. Smith agrees. " * 4
    assert sentence_keys(loop).count("take the tablets with food.") == 4
    assert sentence_keys(loop).count("dr. smith agrees.") == 4  # never cut after "Dr."
    with pytest.raises(DraftLimitExceeded):
        check_repeats(loop, 3)


def test_overlong_runs_are_cut_at_clause_breaks_then_at_the_word_limit() -> None:
    items = "; ".join(f"item {i} is listed" for i in range(40))
    table = " ".join(f"Finding{i} 90%" for i in range(70))
    pieces = split_sentences(f"These include: {items}. {table}")
    assert all(len(p.split()) <= MAX_SENTENCE_WORDS for p in pieces)
    assert pieces[0].endswith("is listed;")
    assert " ".join(pieces).split() == f"These include: {items}. {table}".split()


def test_a_huge_unpunctuated_run_is_cut_without_recursion() -> None:
    run = " ".join(f"w{i}" for i in range(100_000))
    pieces = split_sentences(run)
    assert len(pieces) == -(-100_000 // MAX_SENTENCE_WORDS)
    assert " ".join(pieces) == run


def test_strip_markers() -> None:
    assert strip_markers("Rest helps [1, 2] a lot [3].") == "Rest helps a lot."


def test_exact_quote_reports_offsets_in_the_original_text() -> None:
    anchor = find_quote("do NOT take more than 4 g in 24 hours", PASSAGE, 0.85)
    assert anchor is not None
    assert anchor.exact
    assert PASSAGE[anchor.span.start : anchor.span.end] == "Do not take more than 4 g in 24 hours"


def test_fuzzy_quote_within_threshold() -> None:
    anchor = find_quote("Adults can take 500mg to 1 g every 4-6 hours", PASSAGE, 0.85)
    assert anchor is not None
    assert not anchor.exact
    assert anchor.score >= 0.85
    assert PASSAGE[anchor.span.start : anchor.span.end].startswith("Adults can take 500 mg")


@pytest.mark.parametrize("quote", ["never take more than 8 g daily", "Children can take 2 g every hour"])
def test_fabricated_quote_is_not_found(quote: str) -> None:
    assert find_quote(quote, PASSAGE, 0.85) is None


def _passage() -> Passage:
    return Passage(
        "p:0",
        "p",
        PASSAGE,
        "Paracetamol",
        "https://x.org",
        "NHS",
        "clinical_reference",
        dt.date(2024, 1, 1),
        0.9,
    )


def test_anchoring_verifier_verdicts() -> None:
    verifier = QuoteAnchoringVerifier(threshold=0.85, min_chars=12)
    claims = [
        ClaimToCheck(
            "Do not take more than 4 g a day", "Do not take more than 4 g in 24 hours", ((1, _passage()),)
        ),
        ClaimToCheck("Take 8 g", "never take more than 8 g daily", ((1, _passage()),)),
        ClaimToCheck("Take 1 g", None, ((1, _passage()),)),
        ClaimToCheck("Take 1 g", "Adults can take 500 mg", ()),
    ]
    verdicts = asyncio.run(verifier.verify(claims))
    assert [v.label for v in verdicts] == [
        VerdictLabel.SUPPORTED,
        VerdictLabel.UNSUPPORTED,
        VerdictLabel.UNSUPPORTED,
        VerdictLabel.UNSUPPORTED,
    ]
    assert [v.check for v in verdicts] == ["quote_exact", "quote_not_found", "no_quote", "no_source"]
    evidence = verdicts[0].evidence
    assert evidence is not None
    assert PASSAGE[evidence.span.start : evidence.span.end] == evidence.text
