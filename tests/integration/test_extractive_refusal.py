"""The extractive responder (issue #32, item 5): a question in a passage is never quoted as a fact, and
"nothing close enough to quote" is a refusal of its own (``nothing_to_quote``), counted as a refusal,
not a ``malformed_output`` error."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gateway.audit import AuditFilter
from gateway.domain import ChatRequest, Message, Passage, RefusalReason, Role
from gateway.drafting.drafter import Drafter
from gateway.drafting.extractive import ExtractiveResponder, is_heading_question
from gateway.drafting.extractive_policy import ExtractivePolicy, load_extractive_policy
from gateway.errors import ConfigurationError, NothingToQuote
from gateway.pipeline.run import answer
from gateway.text import load_question_words, sentence_spans
from tests.support.components import with_components

GOUT = (
    "What are the symptoms of gout ? Gout causes sudden, severe pain in a joint, often the big toe. "
    "The joint becomes hot, red and swollen. How is gout diagnosed? A blood test measures uric acid."
)


def ask(question: str) -> ChatRequest:
    return ChatRequest(messages=(Message(Role.USER, question),), model="m")


def passage(text: str) -> Passage:
    spans = tuple(sentence_spans(text))  # as stored at ingestion
    return Passage(
        "gout:1.0",
        "gout",
        text,
        "Gout",
        "https://x.org/gout",
        "NHS",
        "guideline",
        None,
        0.9,
        sentence_spans=spans,
    )


def test_headings_and_questions_are_recognised() -> None:
    asking = load_question_words()
    assert is_heading_question("What is (are) Gout ?", asking)
    assert is_heading_question("How is gout diagnosed?", asking)
    assert is_heading_question("What causes gout", asking)  # a heading without its question mark
    assert not is_heading_question("Gout causes sudden, severe pain in a joint.", asking)
    assert not is_heading_question(
        "What you eat can raise the level of uric acid in the blood, so eat less red meat.", asking
    )


async def test_a_question_in_a_passage_is_never_quoted_as_a_fact(embedder) -> None:  # type: ignore[no-untyped-def]
    draft = await ExtractiveResponder(embedder).draft(ask("What are the symptoms of gout?"), [passage(GOUT)])
    quoted = [c.text for c in draft.claims]
    assert quoted  # it still answers, from the statements
    assert not any(text.rstrip().endswith("?") for text in quoted)
    assert "?" not in draft.answer
    assert any("big toe" in text for text in quoted)


async def test_nothing_close_enough_raises_nothing_to_quote(embedder) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(NothingToQuote):
        await ExtractiveResponder(embedder).draft(ask("How do I change a car tyre?"), [passage(GOUT)])


async def test_nothing_to_quote_is_a_counted_refusal_not_an_error(make_services) -> None:  # type: ignore[no-untyped-def]
    services = make_services()
    min_relevance = services.policy.thresholds.retrieval.min_relevance
    responder = ExtractiveResponder(  # no sentence can be close enough
        services.embedder, min_relevance, policy_dir=services.settings.policy_dir, min_similarity=1.01
    )
    services = with_components(services, drafter=Drafter(responder))
    result = await answer(ask("How much paracetamol can an adult take in a day?"), services.answer_parts)

    assert result.outcome.refused
    assert result.outcome.refusal_reason is RefusalReason.NOTHING_TO_QUOTE
    assert result.report.summary.reason is RefusalReason.NOTHING_TO_QUOTE
    assert result.answer == services.messages.refusal(RefusalReason.NOTHING_TO_QUOTE, rule=None)
    assert result.error is None
    registry = services.metrics.registry
    assert registry.get_sample_value("gateway_refusals_total", {"reason": "nothing_to_quote"}) == 1.0
    assert registry.get_sample_value("gateway_requests_total", {"outcome": "refused"}) == 1.0
    assert not registry.get_sample_value("gateway_requests_total", {"outcome": "error"})
    assert not registry.get_sample_value("gateway_refusals_total", {"reason": "malformed_output"})
    stage_errors = [
        s for f in registry.collect() for s in f.samples if s.name == "gateway_stage_errors_total" and s.value
    ]
    assert stage_errors == []
    (row,) = services.audit.list(AuditFilter())
    assert (row.outcome, row.reason) == ("refused", "nothing_to_quote")


PARACETAMOL = (
    "The usual adult dose of paracetamol is one or two 500 mg tablets, which is 500 mg to 1 g in a single "
    "dose. Adults can take a dose every 4 to 6 hours, up to 4 times in 24 hours. Adults must never take "
    "more than 4 g of paracetamol in 24 hours, which is the same as 8 tablets of 500 mg. Paracetamol can "
    "be taken with or without food."
)


async def test_the_sentence_answering_the_kind_of_question_is_quoted(embedder) -> None:  # type: ignore[no-untyped-def]
    """ "How often" is answered by the interval, though the maximum-dose sentence is closer by cosine."""
    source = replace(passage(PARACETAMOL), document_id="paracetamol", title="Paracetamol for adults")
    question = ask("How often can I take paracetamol?")
    ranked = await ExtractiveResponder(embedder).draft(question, [source])
    plain = await ExtractiveResponder(embedder, policy=ExtractivePolicy()).draft(question, [source])
    assert any("every 4 to 6 hours" in c.text for c in ranked.claims)
    assert not any("every 4 to 6 hours" in c.text for c in plain.claims)  # cosine alone misses it


def test_the_extractive_policy_names_a_bad_pattern(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "extractive.yaml").write_text("question_kinds: [{name: a, question: '(', answer: b}]\n")
    with pytest.raises(ConfigurationError, match=r"extractive.yaml: question_kinds\[0\].question"):
        load_extractive_policy(tmp_path)
