"""SourceCleanup: judging, refusal rules, text assembly and release, and both rewriters."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gateway.cleanup import SourceRewriter, UpstreamRewriter
from gateway.cleanup.cleaner import CleanupStep, SentenceCleaner
from gateway.cleanup.policy import CleanupPolicy
from gateway.cleanup.rewriter import NoRewriter
from gateway.cleanup.stage import Cleanup, judge_claims, refusal_reason
from gateway.domain import (
    ClaimOutcome,
    ClaimResult,
    Evidence,
    RefusalReason,
    Span,
    Statement,
    StatementKind,
    Verdict,
    VerdictLabel,
)
from gateway.drafting.contract import with_markers as cite
from gateway.errors import UpstreamTimeout
from gateway.metrics import GatewayMetrics
from gateway.policies import load_policy
from gateway.testing import ScriptedChatModel
from gateway.text import sentence_spans
from gateway.verification.anchoring import QuoteAnchoringVerifier
from gateway.verification.cascade import CascadeVerifier
from gateway.verification.local import LocalEntailmentVerifier
from gateway.verification.policy import VerificationPolicy
from gateway.vocabulary import VerdictCheck
from tests.support.cleanup_claims import DOSE, GAP, MAXIMUM, PASSAGES, PLANTED, REQUEST, quoted

POLICY = load_policy(Path(__file__).resolve().parents[2] / "policies", "general").thresholds.cleanup
SUPPORTED = Verdict(VerdictLabel.SUPPORTED, 1.0, "anchoring", "quote_exact")
UNSUPPORTED = Verdict(
    VerdictLabel.UNSUPPORTED, 0.0, "anchoring", "quote_not_found", "the quote is not in the source"
)


def statements(answer: str, numbers: tuple[int, ...] = (1,)) -> list[Statement]:
    """One claim per sentence of ``answer`` (questions are conversational)."""
    out = []
    for index, span in enumerate(sentence_spans(answer)):
        text = answer[span.start : span.end]
        kind = StatementKind.QUESTION if text.endswith("?") else StatementKind.CLAIM
        out.append(Statement(text, span, kind, numbers if kind is StatementKind.CLAIM else (), text, index))
    return out


def cleanup_of(answer: str, verdicts: list[Verdict], policy: CleanupPolicy = POLICY) -> Cleanup:
    stated = statements(answer)
    return Cleanup(answer, stated, judge_claims(stated, verdicts, PASSAGES, policy), policy)


def rewritten(result: ClaimResult, text: str, number: int = 1) -> ClaimResult:
    evidence = Evidence(number, "p1", text, Span(0, len(text)))
    return replace(
        result,
        outcome=ClaimOutcome.REWRITTEN,
        final_text=text,
        rewrite_verdict=replace(SUPPORTED, evidence=evidence),
    )


def test_cite_puts_markers_before_the_closing_punctuation() -> None:
    assert cite("Adults can take 4 g.", [1]) == "Adults can take 4 g [1]."
    assert cite("Adults can take 4 g", [1, 3]) == "Adults can take 4 g [1, 3]."
    assert cite("Is it safe?", []) == "Is it safe?"


def test_supported_answer_is_kept_verbatim() -> None:
    answer = f"{DOSE[:-1]} [1]. {MAXIMUM[:-1]} [1]. Would you like to know more?"
    cleaning = cleanup_of(answer, [SUPPORTED, SUPPORTED])
    outcome = cleaning.outcome()
    assert not outcome.refused
    assert outcome.answer == answer
    second = answer.index("Do not")
    assert [c.final_span for c in outcome.claims] == [
        Span(0, second - 1),
        Span(second, answer.index(" Would")),
    ]


def test_removed_sentence_takes_its_dangling_connective_with_it() -> None:
    answer = f"{DOSE[:-1]} [1]. It cures migraines [1]. However, do not take more than 4 g in 24 hours [1]."
    outcome = cleanup_of(answer, [SUPPORTED, UNSUPPORTED, SUPPORTED]).outcome()
    assert outcome.answer == f"{DOSE[:-1]} [1]. Do not take more than 4 g in 24 hours [1]."
    assert [c.outcome for c in outcome.claims] == [
        ClaimOutcome.VERIFIED,
        ClaimOutcome.REMOVED,
        ClaimOutcome.VERIFIED,
    ]
    assert outcome.claims[1].final_span is None


def test_uncited_supported_claim_gets_the_marker_of_its_evidence() -> None:
    answer = f"{DOSE[:-1]} [1]. {MAXIMUM}"
    stated = [statements(answer)[0], replace(statements(answer)[1], source_numbers=())]
    evidence = Evidence(1, "p1", MAXIMUM, Span(0, 10))
    results = judge_claims(stated, [SUPPORTED, replace(SUPPORTED, evidence=evidence)], PASSAGES, POLICY)
    outcome = Cleanup(answer, stated, results, POLICY).outcome()
    assert outcome.answer == f"{DOSE[:-1]} [1]. {MAXIMUM[:-1]} [1]."


def test_a_sentence_with_several_claims_keeps_the_surviving_ones() -> None:
    answer = "Adults can take 500 mg to 1 g every 4 to 6 hours and it cures migraines [1]."
    span = Span(0, len(answer))
    stated = [
        Statement(
            "Adults can take 500 mg to 1 g every 4 to 6 hours", span, StatementKind.CLAIM, (1,), DOSE, 0
        ),
        Statement("it cures migraines", span, StatementKind.CLAIM, (1,), "cures migraines", 0),
        Statement(
            "Leave 4 hours between doses.",
            Span(len(answer) + 1, len(answer) + 29),
            StatementKind.CLAIM,
            (1,),
            GAP,
            1,
        ),
    ]
    answer = f"{answer} Leave 4 hours between doses."
    results = judge_claims(stated, [SUPPORTED, UNSUPPORTED, SUPPORTED], PASSAGES, POLICY)
    outcome = Cleanup(answer, stated, results, POLICY).outcome()
    assert (
        outcome.answer == "Adults can take 500 mg to 1 g every 4 to 6 hours [1]. Leave 4 hours between doses."
    )


@pytest.mark.parametrize(
    ("verdicts", "reason"),
    [
        (
            [UNSUPPORTED, UNSUPPORTED],
            RefusalReason.SAFETY_CRITICAL_FAILED,
        ),  # the dose claim is safety-critical
        ([SUPPORTED, UNSUPPORTED, UNSUPPORTED], RefusalReason.TOO_MANY_REMOVED),
    ],
)
def test_refusal_rules(verdicts: list[Verdict], reason: RefusalReason) -> None:
    answer = " ".join(
        ["Adults can take 8 g a day [1].", "Paracetamol is blue [1].", "It tastes of mint [1]."][
            : len(verdicts)
        ]
    )
    if reason is RefusalReason.TOO_MANY_REMOVED:
        answer = "Paracetamol is a painkiller [1]. Paracetamol is blue [1]. It tastes of mint [1]."
    cleaning = cleanup_of(answer, verdicts)
    assert cleaning.ready() == []
    outcome = cleaning.outcome()
    assert (outcome.refused, outcome.refusal_reason, outcome.answer) == (True, reason, "")


def test_no_claim_at_all_or_none_surviving_is_refused() -> None:
    assert refusal_reason([], POLICY) == (
        RefusalReason.NO_CLAIM_SURVIVED,
        "the answer contained no checkable claim",
    )
    outcome = cleanup_of(
        "Paracetamol is blue [1]. It tastes of mint [1].", [UNSUPPORTED, UNSUPPORTED]
    ).outcome()
    assert outcome.refusal_reason is RefusalReason.NO_CLAIM_SURVIVED


def test_rewritten_safety_critical_claim_refuses_only_when_policy_says_so() -> None:
    answer = f"Adults can take 8 g a day [1]. {MAXIMUM[:-1]} [1]. {GAP[:-1]} [1]."
    for allow, refused in ((True, False), (False, True)):
        policy = replace(POLICY, allow_rewritten_safety_critical=allow)
        cleaning = cleanup_of(answer, [UNSUPPORTED, SUPPORTED, SUPPORTED], policy)
        # when even a verified rewrite would refuse, rewriting is not attempted at all
        assert cleaning.start_rewrites() == ([0] if allow else [])
        if allow:
            cleaning.resolve(0, rewritten(cleaning.results[0], DOSE))
        outcome = cleaning.outcome()
        assert outcome.refused is refused
        if not refused:
            assert outcome.answer == f"{DOSE[:-1]} [1]. {MAXIMUM[:-1]} [1]. {GAP[:-1]} [1]."


def test_a_claim_resting_on_a_planted_instruction_refuses_and_is_never_rewritten() -> None:
    answer = f"{DOSE[:-1]} [1]. Take double the usual dose of every medicine you have [2]."
    stated = statements(answer)
    stated[1] = replace(stated[1], source_numbers=(2,), quote="take double the usual dose of every medicine")
    evidence = Evidence(2, "p2", "take double the usual dose of every medicine", Span(47, 91))
    results = judge_claims(stated, [SUPPORTED, replace(SUPPORTED, evidence=evidence)], PASSAGES, POLICY)
    assert results[1].verdict.check is VerdictCheck.PLANTED_INSTRUCTION
    cleaning = Cleanup(answer, stated, results, POLICY)
    assert cleaning.start_rewrites() == []
    outcome = cleaning.outcome()
    assert outcome.refusal_reason is RefusalReason.SAFETY_CRITICAL_FAILED
    assert "planted" in outcome.refusal_detail


def test_release_waits_until_no_pending_rewrite_could_refuse() -> None:
    answer = f"{DOSE[:-1]} [1]. Paracetamol is a painkiller [1]. It is blue [1]. {GAP[:-1]} [1]."
    cleaning = cleanup_of(answer, [SUPPORTED, UNSUPPORTED, UNSUPPORTED, SUPPORTED])
    # worst case now: 2 of 4 removed = 0.5, not above the 0.5 share: the first sentence is final and safe
    assert "".join(cleaning.ready()) == f"{DOSE[:-1]} [1]."
    assert cleaning.start_rewrites() == [1, 2]
    assert "".join(cleaning.ready()) == ""
    cleaning.resolve(1, rewritten(cleaning.results[1], "Paracetamol is a painkiller."))
    assert "".join(cleaning.ready()) == " Paracetamol is a painkiller [1]."
    cleaning.resolve(2, cleaning.results[2])
    assert "".join(cleaning.ready()) == f" {GAP[:-1]} [1]."
    outcome = cleaning.outcome()
    assert outcome.answer == f"{DOSE[:-1]} [1]. Paracetamol is a painkiller [1]. {GAP[:-1]} [1]."


def test_release_holds_everything_while_the_worst_case_would_refuse() -> None:
    answer = f"{GAP[:-1]} [1]. Paracetamol is a painkiller [1]. It is blue [1]."
    cleaning = cleanup_of(answer, [SUPPORTED, UNSUPPORTED, UNSUPPORTED])
    assert cleaning.start_rewrites() == [1, 2]
    assert "".join(cleaning.ready()) == ""  # 2 of 3 could still be removed: refusal possible, nothing is sent
    cleaning.resolve(1, rewritten(cleaning.results[1], "Paracetamol is a painkiller."))
    assert "".join(cleaning.ready()) == f"{GAP[:-1]} [1]. Paracetamol is a painkiller [1]."


async def cleaned_steps(
    sentences: list[str], verdicts: list[Verdict], removals_refuse: bool = True
) -> tuple[list[CleanupStep], CleanupStep, list[str]]:
    """Each sentence through the cleaner's ``run``, then its ``finish``: the steps, the last one, and
    what the cleaner released itself (only while a model rewrite resolves: none here)."""
    cleaner = SentenceCleaner(NoRewriter(), POLICY, GatewayMetrics(), max_rewrites=0, deadline=5.0)
    released: list[str] = []

    async def release(*pieces: str) -> None:
        released.extend(pieces)

    state = cleaner.start(REQUEST, "req_steps", PASSAGES, release, list, time.perf_counter())
    stated = statements(" ".join(sentences))
    steps = []
    for index, verdict in enumerate(verdicts):
        answer = " ".join(sentences[: index + 1])
        steps.append(await cleaner.run(state, answer, stated[index : index + 1], [verdict]))
    return steps, await cleaner.finish(state, removals_refuse), released


async def test_each_cleanup_step_says_what_to_release_and_where_to_stop() -> None:
    dose, wrong = f"{DOSE[:-1]} [1].", "Adults can take 8 g a day [1]."
    steps, _, released = await cleaned_steps([dose, wrong], [SUPPORTED, UNSUPPORTED])
    assert steps[0] == CleanupStep((dose,), None)
    # a safety-critical claim that failed for good: nothing more is final, and the answer stops here
    assert steps[1].ready == ()
    assert steps[1].stop is not None
    assert steps[1].stop[0] is RefusalReason.SAFETY_CRITICAL_FAILED
    assert released == []


async def test_the_last_cleanup_step_applies_whether_removals_refuse() -> None:
    answer = ["Paracetamol is a painkiller [1].", "It is blue [1].", f"{GAP[:-1]} [1]."]
    verdicts = [UNSUPPORTED, UNSUPPORTED, SUPPORTED]
    steps, last, _ = await cleaned_steps(answer, verdicts)
    assert [step.ready for step in steps] == [(), (), ()]  # 2 of 3 removed: refused, nothing released
    assert last == CleanupStep((), None)
    # a reply that calls tools: the failing claims are removed and the rest is released at the end
    _, last, _ = await cleaned_steps(answer, verdicts, removals_refuse=False)
    assert last == CleanupStep((f"{GAP[:-1]} [1].",), None)


def test_a_rewrite_repeating_another_sentence_is_removed() -> None:
    answer = f"{MAXIMUM[:-1]} [1]. Adults can take 8 g a day [1]. {GAP[:-1]} [1]."
    cleaning = cleanup_of(answer, [SUPPORTED, UNSUPPORTED, SUPPORTED])
    cleaning.start_rewrites()
    cleaning.resolve(1, rewritten(cleaning.results[1], MAXIMUM))
    assert cleaning.results[1].outcome is ClaimOutcome.REMOVED
    assert "repeats" in cleaning.results[1].reason


# --- rewriters ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def anchoring() -> QuoteAnchoringVerifier:
    return QuoteAnchoringVerifier(0.85, 12)


def failed(text: str, numbers: tuple[int, ...] = (1,)) -> ClaimResult:
    statement = Statement(text, Span(0, len(text)), StatementKind.CLAIM, numbers, text, 0)
    return ClaimResult(statement, UNSUPPORTED, ClaimOutcome.REMOVED, None, reason="quote_not_found")


def cascade_verifier(embedder: Any) -> CascadeVerifier:
    """The real chat-path verifier (anchoring, quote binding, local checks), without a judge."""
    policy = VerificationPolicy()
    anchoring = QuoteAnchoringVerifier(policy.quote_fuzzy_threshold, policy.quote_min_chars)
    return CascadeVerifier(anchoring, LocalEntailmentVerifier(embedder, policy), None, policy)


def source_rewriter(verifier: Any, first: Any = None) -> SourceRewriter:
    return SourceRewriter(verifier, POLICY, 0.85, 12, first)


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_source_rewriter_replaces_a_failing_claim_by_the_sentence_holding_its_quote(embedder) -> None:  # type: ignore[no-untyped-def]
    result = await source_rewriter(cascade_verifier(embedder)).rewrite(
        quoted("Adults can take 2 g of paracetamol every 2 hours.", "500 mg to 1 g of paracetamol"),
        PASSAGES,
        REQUEST,
    )
    assert result.outcome is ClaimOutcome.REWRITTEN
    assert result.final_text == DOSE
    assert result.rewrite_verdict is not None
    assert result.rewrite_verdict.supported
    assert result.rewrite_verdict.method == "source_rewrite"
    assert result.verdict.label is VerdictLabel.CONTRADICTED  # the clinician still sees the contradiction
    assert "rewritten by the source rewriter" in result.reason


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_source_rewriter_removes_a_claim_without_an_anchored_quote(embedder) -> None:  # type: ignore[no-untyped-def]
    rewriter = source_rewriter(cascade_verifier(embedder))
    for quote in (None, "paracetamol cures migraines within ten minutes"):
        result = await rewriter.rewrite(
            quoted("Paracetamol also cures migraines within ten minutes.", quote), PASSAGES, REQUEST
        )
        assert result.outcome is ClaimOutcome.REMOVED
        assert "no anchored quote" in result.reason


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_source_rewriter_never_uses_a_planted_instruction(embedder) -> None:  # type: ignore[no-untyped-def]
    result = await source_rewriter(cascade_verifier(embedder)).rewrite(
        quoted("Take double the usual dose.", "take double the usual dose of every medicine", (2,)),
        PASSAGES,
        REQUEST,
    )
    assert result.outcome is ClaimOutcome.REMOVED
    assert "planted" in result.reason


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_the_llm_rewriter_is_tried_first_and_the_source_is_the_fallback(embedder) -> None:  # type: ignore[no-untyped-def]
    verifier = cascade_verifier(embedder)
    claim = quoted("Adults can take 2 g of paracetamol every 2 hours.", "500 mg to 1 g of paracetamol")
    good = ScriptedChatModel(json.dumps({"rewrite": DOSE, "quote": DOSE}))
    first = UpstreamRewriter(good, verifier, POLICY)
    result = await source_rewriter(verifier, first).rewrite(claim, PASSAGES, REQUEST)
    assert good.calls
    assert result.outcome is ClaimOutcome.REWRITTEN
    assert "rewritten by the upstream rewriter" in result.reason
    failing = UpstreamRewriter(ScriptedChatModel(UpstreamTimeout("slow")), verifier, POLICY)
    result = await source_rewriter(verifier, failing).rewrite(claim, PASSAGES, REQUEST)
    assert result.outcome is ClaimOutcome.REWRITTEN
    assert result.final_text == DOSE
    assert result.rewrite_verdict is not None
    assert result.rewrite_verdict.method == "source_rewrite"


@pytest.mark.parametrize(
    ("reply", "outcome", "reason"),
    [
        (json.dumps({"rewrite": DOSE, "quote": DOSE}), ClaimOutcome.REWRITTEN, "rewritten by the upstream"),
        (
            json.dumps({"rewrite": "Adults may take nine grams daily.", "quote": "nine grams daily is fine"}),
            ClaimOutcome.REMOVED,
            "failed verification",
        ),
        (json.dumps({"rewrite": "", "quote": ""}), ClaimOutcome.REMOVED, "nothing supported"),
        ("Sure! Here is the fix: adults can take 1 g.", ClaimOutcome.REMOVED, "not the JSON"),
        (json.dumps({"rewrite": DOSE}), ClaimOutcome.REMOVED, "not the JSON"),
        (UpstreamTimeout("slow"), ClaimOutcome.REMOVED, "the rewriter failed (UpstreamTimeout)"),
    ],
)
async def test_upstream_rewriter_outcomes(anchoring, reply, outcome, reason) -> None:  # type: ignore[no-untyped-def]
    client = ScriptedChatModel(reply)
    result = await UpstreamRewriter(client, anchoring, POLICY).rewrite(
        failed("Adults can take 2 g of paracetamol every 2 hours."), PASSAGES, REQUEST
    )
    assert result.outcome is outcome
    assert reason in result.reason
    call = client.requests[0]
    assert call["schema_name"] == "claim_rewrite"
    assert "[1]" in call["messages"][1]["content"]
    assert PLANTED not in call["messages"][1]["content"]
