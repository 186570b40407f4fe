"""The split and verify stages as components (#34 item 1): built once with their dependencies, with
what is per request kept in the request's own state (``DraftBounds``), not in the component."""

from __future__ import annotations

import pytest

from gateway.claims.splitter import DraftBounds, SentenceSplitter
from gateway.domain import Passage, Span, Statement, StatementKind, Verdict, VerdictLabel
from gateway.drafting.contract import DraftSentence
from gateway.errors import DraftLimitExceeded, VerifierError
from gateway.testing import ScriptedVerifier
from gateway.verification.verify import ClaimChecker
from gateway.vocabulary import VerdictCheck, VerifierMethod

SENTENCE = DraftSentence("Flu symptoms usually come on quickly.", (1,))


async def test_the_splitter_counts_repeats_and_statements_per_request() -> None:
    splitter = SentenceSplitter(max_repeats=2, max_statements=300, planted=())
    first, second = DraftBounds(), DraftBounds()
    await splitter.run(SENTENCE, 0, 0, first)
    await splitter.run(SENTENCE, 40, 1, first)
    await splitter.run(SENTENCE, 0, 0, second)  # another request: its own bounds
    assert (first.statements, second.statements) == (2, 1)
    with pytest.raises(DraftLimitExceeded, match="repeats one sentence 3 times"):
        await splitter.run(SENTENCE, 80, 2, first)


async def test_the_splitter_places_statements_in_the_answer_and_refuses_too_many() -> None:
    splitter = SentenceSplitter(max_repeats=3, max_statements=1, planted=())
    reply = await splitter.run(SENTENCE, 10, 4, DraftBounds())
    (statement,) = reply.statements
    assert (statement.span.start, statement.sentence_index) == (10, 4)
    assert not reply.instruction
    with pytest.raises(DraftLimitExceeded):
        await splitter.run(
            DraftSentence("Rest and fluids help most people.", (1,)), 50, 5, DraftBounds(statements=1)
        )


def passage(number: int) -> Passage:
    text = f"text {number}"
    return Passage(f"p{number}", f"d{number}", text, "t", "https://x", "o", "guideline", None, 1.0)


def claim(text: str, *sources: int) -> Statement:
    return Statement(text, Span(0, len(text)), StatementKind.CLAIM, sources, 0)


async def test_the_checker_sends_each_claim_its_cited_sources_and_refuses_a_short_answer() -> None:
    method = VerifierMethod.unlisted("scripted")
    verdict = Verdict(VerdictLabel.SUPPORTED, 1.0, method, VerdictCheck.QUOTE_EXACT)
    verifier = ScriptedVerifier(verdicts=[verdict])
    checker = ClaimChecker(verifier)
    passages = [passage(1), passage(2)]
    assert await checker.run([claim("cited", 2)], passages) == [verdict]
    assert [n for n, _ in verifier.calls[0][0].sources] == [2]
    assert await checker.run([], passages) == []
    with pytest.raises(VerifierError, match="1 verdicts for 2 claims"):
        await checker.run([claim("a"), claim("b")], passages)
