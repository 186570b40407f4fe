"""Splitting answers into statements: sentences, atomic claims, kinds, spans and citations."""

from __future__ import annotations

import pytest

from gateway.claims.split import IdMarkers, atomic_clauses, classify, split
from gateway.domain import Draft, DraftClaim, DraftFormat, Statement, StatementKind


def inline(answer: str, *claims: DraftClaim) -> Draft:
    return Draft(answer, tuple(claims), DraftFormat.JSON if claims else DraftFormat.INLINE, answer)


def claims_of(statements: list[Statement]) -> list[Statement]:
    return [s for s in statements if s.is_claim]


def spanned(answer: str, statement: Statement) -> str:
    return answer[statement.span.start : statement.span.end]


# --- atomic claims ----------------------------------------------------------------------------


def test_parallel_quantities_become_one_claim_each_with_their_clause_span() -> None:
    answer = "The rate is 28% for men and 1% for women [1]."
    statements = split(inline(answer))
    assert [s.text for s in statements] == ["The rate is 28% for men", "The rate is 1% for women"]
    assert [spanned(answer, s) for s in statements] == ["The rate is 28% for men", "1% for women [1]"]
    assert all(s.source_numbers == (1,) for s in statements)
    assert {s.sentence_index for s in statements} == {0}


def test_parallel_quantities_share_a_trailing_predicate_and_keep_their_own_markers() -> None:
    answer = "About 28% of men [1] and 1% of women [2] are affected."
    statements = split(inline(answer))
    assert [s.text for s in statements] == ["About 28% of men are affected", "1% of women are affected"]
    assert [s.source_numbers for s in statements] == [(1,), (2,)]
    assert spanned(answer, statements[0]) == "About 28% of men [1]"


def test_ranges_and_qualifiers_are_part_of_the_quantity() -> None:
    clauses = atomic_clauses("Symptoms last 7 to 10 days in adults and up to 2 weeks in children.")
    assert [c.text for c in clauses] == [
        "Symptoms last 7 to 10 days in adults",
        "Symptoms last up to 2 weeks in children",
    ]


def test_semicolon_joined_clauses_split_and_each_takes_its_marker() -> None:
    answer = "Adults can take 1 g every 4 to 6 hours [1]; do not take more than 4 g in 24 hours [2]."
    statements = split(inline(answer))
    assert [s.text for s in statements] == [
        "Adults can take 1 g every 4 to 6 hours",
        "do not take more than 4 g in 24 hours",
    ]
    assert [s.source_numbers for s in statements] == [(1,), (2,)]
    assert spanned(answer, statements[1]) == "do not take more than 4 g in 24 hours [2]"


def test_comma_and_between_two_full_clauses_splits() -> None:
    answer = "Paracetamol is safe in pregnancy [1], and ibuprofen should be avoided in late pregnancy [2]."
    statements = split(inline(answer))
    assert [s.text for s in statements] == [
        "Paracetamol is safe in pregnancy",
        "ibuprofen should be avoided in late pregnancy",
    ]
    assert [s.source_numbers for s in statements] == [(1,), (2,)]


@pytest.mark.parametrize(
    "sentence",
    [
        "Flu causes fever, aches, and tiredness [1].",  # a list of objects stays one claim
        "Flu causes fever, aches and tiredness [1].",
        "Take it with food, and do not drink alcohol [1].",  # no subject of its own on the right
        "Most people recover within a week and feel better soon [1].",
        "Doses of 500 mg for adults are common [1].",  # one quantity only
        "Take 1 tablet; daily [1].",  # the right side is no clause
    ],
)
def test_coordinations_without_independent_facts_stay_whole(sentence: str) -> None:
    statements = split(inline(sentence))
    assert len(statements) == 1
    assert statements[0].span.start == 0
    assert statements[0].span.end == len(sentence)
    assert statements[0].text == sentence.replace(" [1]", "")


def test_single_sentence_claim_keeps_the_sentence_span_and_text_without_markers() -> None:
    answer = "Hello. Adults can take 500 mg to 1 g every 4 to 6 hours [2]. Do you have a fever?"
    statements = split(inline(answer))
    assert [s.kind for s in statements] == [
        StatementKind.ACKNOWLEDGEMENT,
        StatementKind.CLAIM,
        StatementKind.QUESTION,
    ]
    claim = statements[1]
    assert claim.text == "Adults can take 500 mg to 1 g every 4 to 6 hours."
    assert spanned(answer, claim) == "Adults can take 500 mg to 1 g every 4 to 6 hours [2]."
    assert claim.source_numbers == (2,)
    assert [s.sentence_index for s in statements] == [0, 1, 2]


# --- listed (JSON-contract) claims -------------------------------------------------------------


def test_listed_claims_take_their_citations_quotes_and_clause_spans() -> None:
    answer = "Paracetamol is safe in pregnancy [1], and ibuprofen should be avoided in late pregnancy [2]."
    draft = inline(
        answer,
        DraftClaim(
            "Ibuprofen should be avoided in late pregnancy", (2,), "avoid ibuprofen late in pregnancy"
        ),
        DraftClaim("Paracetamol is safe in pregnancy", (1,), "paracetamol is safe to take in pregnancy"),
    )
    statements = split(draft)
    assert [s.text for s in statements] == [
        "Paracetamol is safe in pregnancy",
        "Ibuprofen should be avoided in late pregnancy",
    ]
    assert [s.quote for s in statements] == [
        "paracetamol is safe to take in pregnancy",
        "avoid ibuprofen late in pregnancy",
    ]
    assert spanned(answer, statements[1]).startswith("ibuprofen should be avoided")


def test_listed_claim_on_an_unsplittable_sentence_gets_the_sentence_span() -> None:
    answer = "Adults can take up to 4 g a day [1]. Thanks for asking!"
    draft = inline(answer, DraftClaim("Adults can take up to 4 g a day", (1,), "up to 4 g in 24 hours"))
    statements = split(draft)
    assert statements[0].span.start == 0
    assert spanned(answer, statements[0]) == "Adults can take up to 4 g a day [1]."
    assert statements[0].quote == "up to 4 g in 24 hours"
    assert statements[1].kind is StatementKind.ACKNOWLEDGEMENT


def test_conversational_sentence_that_cites_a_source_is_a_claim() -> None:
    statements = split(inline("Please speak to your GP if it lasts longer than a week [1]."))
    assert statements[0].kind is StatementKind.CLAIM


# --- classification ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "kind"),
    [
        ("Do you have a temperature?", StatementKind.QUESTION),
        ("Would you like to know more [1]?", StatementKind.QUESTION),
        ("Thanks for asking!", StatementKind.ACKNOWLEDGEMENT),
        ("I'm sorry to hear you are feeling unwell.", StatementKind.ACKNOWLEDGEMENT),
        ("I hope this helps.", StatementKind.ACKNOWLEDGEMENT),
        ("Let me know if anything else worries you.", StatementKind.ACKNOWLEDGEMENT),
        ("Sure, I can help.", StatementKind.ACKNOWLEDGEMENT),
        ("This is general information, not medical advice.", StatementKind.DISCLAIMER),
        ("Please speak to your pharmacist before taking anything new.", StatementKind.DISCLAIMER),
        ("The sources do not say how long it lasts.", StatementKind.DISCLAIMER),
        ("Ibuprofen can upset your stomach.", StatementKind.CLAIM),
        # conversational openers must not hide a fact
        ("Of course, ibuprofen can upset your stomach.", StatementKind.CLAIM),
        ("Sure, adults can take 2 tablets.", StatementKind.CLAIM),
        ("See a GP if symptoms last more than 3 weeks.", StatementKind.CLAIM),
    ],
)
def test_classify(sentence: str, kind: StatementKind) -> None:
    assert classify(sentence) is kind


def test_only_claims_need_support() -> None:
    answer = "I'm sorry you feel unwell. Flu usually lasts about a week [1]. Is your fever high?"
    statements = split(inline(answer))
    assert [s.text for s in claims_of(statements)] == ["Flu usually lasts about a week."]
    assert len(statements) == 3


# --- source-id markers (/v1/verify) -------------------------------------------------------------


def test_id_markers_map_ids_to_source_positions() -> None:
    answer = (
        "Flu lasts a week [nhs]. It spreads by droplets [cdc, nhs]. It is rare [7]. Bracketed [sic] text."
    )
    statements = split(inline(answer), IdMarkers(["cdc", "nhs"]))
    assert [s.source_numbers for s in statements] == [(2,), (1, 2), (IdMarkers.UNKNOWN,), ()]
    assert statements[0].text == "Flu lasts a week."
    assert statements[3].text == "Bracketed [sic] text."


def test_id_markers_split_atomic_claims_too() -> None:
    answer = "The rate is 28% for men [a] and 1% for women [b]."
    statements = split(inline(answer), IdMarkers(["a", "b"]))
    assert [(s.text, s.source_numbers) for s in statements] == [
        ("The rate is 28% for men", (1,)),
        ("The rate is 1% for women", (2,)),
    ]


def test_every_span_lies_inside_the_answer_and_in_order() -> None:
    answer = (
        "Thanks for asking. The rate is 28% for men and 1% for women [1]; smoking raises the risk [2]. "
        "Ibuprofen can upset the stomach, and it may raise blood pressure [3]. Any questions?"
    )
    statements = split(inline(answer))
    starts = [s.span.start for s in statements]
    assert starts == sorted(starts)
    for s in statements:
        assert 0 <= s.span.start < s.span.end <= len(answer)
    assert len(claims_of(statements)) == 5
