"""The one citation-marker grammar: every form is read the same way through every entry point.

Single (``[1]``), listed (``[1, 2]``), ranged with ``-``, ``–`` or ``—`` (``[1–3]``) and mixed
(``[1, 3–5]``) markers: the splitter, the repeat bound, the contract reader and the streamed release
all cite the same passages, strip the same characters and never lose a ranged marker's citations.
"""

from __future__ import annotations

import pytest

from gateway.claims.bounds import sentence_keys
from gateway.claims.split import IdMarkers, split
from gateway.claims.splitter import split_sentence
from gateway.domain import Draft, DraftFormat
from gateway.drafting.contract import ContractReader, DraftSentence, parse_draft, sentence_line, urgency_line
from gateway.text import find_markers, marker_numbers, split_sentences, strip_markers

PASSAGES = 6
MAX_LINE = 2000
CLAIM = "Paracetamol can be taken with food"

FORMS = [
    ("[2]", (2,)),
    ("[1, 2]", (1, 2)),
    ("[1,2]", (1, 2)),
    ("[1-3]", (1, 2, 3)),
    ("[1–3]", (1, 2, 3)),
    ("[1—3]", (1, 2, 3)),
    ("[1 – 3]", (1, 2, 3)),
    ("[1, 3–5]", (1, 3, 4, 5)),
    ("[3–1]", (1, 2, 3)),
    ("[2, 2–3]", (2, 3)),
]
IDS = [f"[{marker}]" for marker, _ in FORMS]


@pytest.mark.parametrize(("marker", "numbers"), FORMS, ids=IDS)
def test_the_grammar_reads_and_strips_each_form(marker: str, numbers: tuple[int, ...]) -> None:
    text = f"{CLAIM} {marker}."
    assert marker_numbers(text) == numbers
    assert [m.numbers for m in find_markers(text)] == [numbers]
    assert strip_markers(text) == f"{CLAIM}."


@pytest.mark.parametrize(("marker", "numbers"), FORMS, ids=IDS)
def test_split_cites_what_the_marker_names(marker: str, numbers: tuple[int, ...]) -> None:
    answer = f"{CLAIM} {marker}."
    [statement] = split(Draft(answer, (), DraftFormat.INLINE, answer))
    assert statement.source_numbers == numbers
    assert statement.text == f"{CLAIM}."


@pytest.mark.parametrize(("marker", "numbers"), FORMS, ids=IDS)
def test_id_reader_reads_numeric_markers_by_the_same_grammar(marker: str, numbers: tuple[int, ...]) -> None:
    reader = IdMarkers([str(n) for n in range(1, PASSAGES + 1)])
    assert reader.find(f"{CLAIM} {marker}.") == numbers


@pytest.mark.parametrize(("marker", "numbers"), FORMS, ids=IDS)
def test_the_repeat_bound_ignores_every_form(marker: str, numbers: tuple[int, ...]) -> None:
    assert sentence_keys(f"{CLAIM} {marker}.") == sentence_keys(f"{CLAIM}.")


@pytest.mark.parametrize(("marker", "numbers"), FORMS, ids=IDS)
def test_a_marker_after_the_full_stop_stays_with_its_sentence(marker: str, numbers: tuple[int, ...]) -> None:
    assert split_sentences(f"{CLAIM}. {marker} Rest helps too.") == [f"{CLAIM}. {marker}", "Rest helps too."]


@pytest.mark.parametrize(("marker", "numbers"), FORMS, ids=IDS)
def test_the_contract_reads_an_inline_marker_of_each_form(marker: str, numbers: tuple[int, ...]) -> None:
    reply = urgency_line("routine", "dosing") + "\n" + sentence_line(f"{CLAIM} {marker}.") + "\n"
    draft = parse_draft(reply, passage_count=PASSAGES, max_line_chars=MAX_LINE)
    [claim] = draft.claims
    assert claim.source_numbers == numbers  # a ranged marker's citations are not lost
    assert claim.text == f"{CLAIM}."
    assert marker_numbers(draft.answer) == numbers


@pytest.mark.parametrize(("marker", "numbers"), FORMS, ids=IDS)
def test_the_streamed_release_cites_what_the_marker_names(marker: str, numbers: tuple[int, ...]) -> None:
    reader = ContractReader(PASSAGES, MAX_LINE)
    parts = reader.feed(urgency_line("routine", "dosing") + "\n" + sentence_line(f"{CLAIM} {marker}.") + "\n")
    sentence = parts[-1]
    assert isinstance(sentence, DraftSentence)
    statements = split_sentence(sentence, offset=0, first_index=0)
    assert [s.source_numbers for s in statements] == [numbers]
    assert sentence_keys(sentence.cited) == sentence_keys(f"{CLAIM}.")


def test_numbers_naming_no_passage_are_dropped_by_the_contract_only() -> None:
    text = f"{CLAIM} [5–8]."
    assert marker_numbers(text) == (5, 6, 7, 8)
    reply = urgency_line("routine", "dosing") + "\n" + sentence_line(text)
    [claim] = parse_draft(reply, passage_count=PASSAGES, max_line_chars=MAX_LINE).claims
    assert claim.source_numbers == (5, 6)


def test_a_very_wide_range_is_read_as_its_two_ends() -> None:
    assert marker_numbers("See [1–100000].") == (1, 100000)


@pytest.mark.parametrize("text", ["[1-2-3]", "[1,]", "[a]", "[1; 2]", "[ 1]", "[]"])
def test_other_bracket_groups_are_not_markers(text: str) -> None:
    assert marker_numbers(f"{CLAIM} {text}.") == ()
    assert strip_markers(f"{CLAIM} {text}.") == f"{CLAIM} {text}."
