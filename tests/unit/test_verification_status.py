"""Three outcomes: supported, contradicted (naming the conflict), not_verified; the judge sees only
the undecided claims, several per call, and fails each call closed."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from gateway.checkonly.inputs import SourceInput
from gateway.checkonly.rendering import report_json
from gateway.checkonly.service import check_answer
from gateway.domain import (
    ClaimToCheck,
    Conflict,
    ConflictKind,
    Evidence,
    Span,
    Verdict,
    VerdictLabel,
    VerificationStatus,
)
from gateway.errors import ConfigurationError
from gateway.fetching.fetcher import SafeFetcher
from gateway.settings import Settings
from gateway.testing import ScriptedChatModel, ScriptedVerifier
from gateway.text import passage_from_text
from gateway.verification.anchoring import QuoteAnchoringVerifier
from gateway.verification.cascade import CascadeVerifier, build_verifier
from gateway.verification.judge import JudgeConfig, LLMJudgeVerifier
from gateway.verification.policy import VerificationPolicy

TEXT = (
    "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours. "
    "Do not take more than 4 g of paracetamol in 24 hours."
)
NUMBERS_ONLY = VerificationPolicy(contradiction_kinds=("number",))


def check(text: str) -> ClaimToCheck:
    return ClaimToCheck(text, None, ((1, passage_from_text(TEXT, "leaflet")),), quote_bound=False)


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_check_only_claims_get_one_of_three_outcomes_and_a_contradiction_names_its_numbers(
    embedder,  # type: ignore[no-untyped-def]
) -> None:
    verifier = build_verifier(Settings(), NUMBERS_ONLY, embedder)
    verbatim, paraphrase, changed = await verifier.verify(
        [
            check("Do not take more than 4 g of paracetamol in 24 hours."),
            check("A day's paracetamol should stay under four grams for grown-ups."),
            check("Do not take more than 8 g of paracetamol in 24 hours."),
        ]
    )
    assert verbatim.status is VerificationStatus.SUPPORTED
    assert paraphrase.status is VerificationStatus.NOT_VERIFIED
    assert paraphrase.label is VerdictLabel.UNSUPPORTED  # the existing field keeps its meaning
    assert changed.status is VerificationStatus.CONTRADICTED
    assert changed.conflict is not None
    assert changed.conflict.kind is ConflictKind.NUMBER
    assert changed.conflict.claim == "8 g"
    assert "4 g" in changed.conflict.source


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_a_clash_of_a_kind_not_trusted_leaves_the_claim_not_verified(embedder) -> None:  # type: ignore[no-untyped-def]
    verifier = build_verifier(Settings(), replace(NUMBERS_ONLY, contradiction_kinds=("negation",)), embedder)
    [changed] = await verifier.verify([check("Do not take more than 8 g of paracetamol in 24 hours.")])
    assert changed.status is VerificationStatus.NOT_VERIFIED
    assert changed.conflict is None
    assert changed.check == "number_mismatch"
    assert "not decided locally" in changed.reason


def test_an_unknown_contradiction_kind_is_a_configuration_error_naming_the_key() -> None:
    with pytest.raises(ConfigurationError, match="contradiction_kinds"):
        VerificationPolicy(contradiction_kinds=("numbers",))


def verdict(label: VerdictLabel, **fields: object) -> Verdict:
    return Verdict(label, 0.5, "local", "test", "", Evidence(1, "leaflet", TEXT[:20], Span(0, 20)), **fields)  # type: ignore[arg-type]


CONFLICT = Conflict(ConflictKind.NUMBER, "claim says '8 g', evidence says '4 g'", "8 g", "4 g")


async def test_the_report_adds_status_contradiction_support_range_and_operating_point() -> None:
    scripted = ScriptedVerifier(
        "local",
        [
            verdict(VerdictLabel.SUPPORTED),
            verdict(VerdictLabel.UNSUPPORTED),
            verdict(VerdictLabel.CONTRADICTED, conflict=CONFLICT),
            verdict(VerdictLabel.UNSUPPORTED),
        ],
    )
    answer = "Take 500 mg [1]. It works fast [1]. Take 8 g a day [1]. It lasts long [1]."
    report = await check_answer(
        answer, [SourceInput(id="1", text=TEXT)], scripted, SafeFetcher(allowed_domains=[])
    )
    body = report_json(report)
    claims = [c for c in body["claims"] if c["kind"] == "claim"]
    assert [c["status"] for c in claims] == ["supported", "not_verified", "contradicted", "not_verified"]
    assert [c["verdict"] for c in claims] == ["supported", "unsupported", "contradicted", "unsupported"]
    assert claims[2]["contradiction"] == {
        "kind": "number",
        "claim": "8 g",
        "source": "4 g",
        "detail": "claim says '8 g', evidence says '4 g'",
    }
    assert claims[0]["contradiction"] is None
    assert body["claims_by_status"] == {
        "supported": 1,
        "contradicted": 1,
        "unsupported": 0,
        "not_verified": 2,
    }
    assert body["statement_support"] == 0.25
    assert body["statement_support_range"] == {"low": 0.25, "high": 0.75, "undecided": 0.5}
    assert body["response_supported"] is False
    assert body["response_support_possible"] is False  # a contradiction rules the answer out
    assert body["operating_point"] == "local"


async def test_a_claim_citing_no_source_with_text_is_decided_unsupported() -> None:
    scripted = ScriptedVerifier.supporting("local")
    report = await check_answer(
        "Take 500 mg [9].", [SourceInput(id="1", text=TEXT)], scripted, SafeFetcher(allowed_domains=[])
    )
    [claim] = report.claims
    assert claim.status is VerificationStatus.UNSUPPORTED
    assert report_json(report)["statement_support_range"] == {"low": 0.0, "high": 0.0, "undecided": 0.0}


# --- the cascade's judge: only undecided claims, batched, failing closed -------------------------

QUOTE = "Do not take more than 4 g of paracetamol"


def batch_reply(*items: tuple[str, str, str]) -> str:
    verdicts = [
        {"statement": k, "verdict": v, "quote": q, "reason": "r", "conflict": c}
        for k, (v, q, c) in enumerate(items, start=1)
    ]
    return json.dumps({"verdicts": verdicts})


def cascade(
    local: list[Verdict], model: ScriptedChatModel, batch: int = 2, budget: int = 6
) -> CascadeVerifier:
    policy = VerificationPolicy(judge_batch_size=batch, judge_budget_per_request=budget)
    judge = LLMJudgeVerifier(model, JudgeConfig(timeout=5.0, batch_size=batch))
    return CascadeVerifier(QuoteAnchoringVerifier(0.85, 12), ScriptedVerifier("local", local), judge, policy)


async def test_only_not_verified_claims_reach_the_judge_several_per_call() -> None:
    restated = Evidence(1, "leaflet", "claim 0", Span(0, 7))  # the local checker's restatement
    local = [
        replace(verdict(VerdictLabel.SUPPORTED), score=1.0, evidence=restated),
        verdict(VerdictLabel.UNSUPPORTED),
        verdict(VerdictLabel.CONTRADICTED, conflict=CONFLICT),
        verdict(VerdictLabel.UNSUPPORTED),
        verdict(VerdictLabel.UNSUPPORTED),
    ]
    model = ScriptedChatModel(
        batch_reply(("supported", QUOTE, ""), ("contradicted", QUOTE, "population")),
        json.dumps({"verdict": "unsupported", "quote": "", "reason": "not stated", "conflict": ""}),
    )
    claims = [replace(check(f"claim {i}"), quote_bound=False) for i in range(5)]
    verdicts = await cascade(local, model).verify(claims)
    assert model.calls == 2  # three undecided claims: a batch of two, then one
    asked = [request["messages"][-1]["content"] for request in model.requests]
    assert "claim 1" in asked[0]
    assert "claim 3" in asked[0]
    assert "claim 4" in asked[1]
    assert not any("claim 0" in a or "claim 2" in a for a in asked)
    assert model.requests[0]["schema_name"] == "claim_verdicts"
    assert [v.status for v in verdicts] == [
        VerificationStatus.SUPPORTED,
        VerificationStatus.SUPPORTED,
        VerificationStatus.CONTRADICTED,
        VerificationStatus.CONTRADICTED,
        VerificationStatus.UNSUPPORTED,
    ]
    assert [v.method for v in verdicts] == ["local", "judge", "local", "judge", "judge"]
    assert verdicts[3].conflict is not None
    assert verdicts[3].conflict.kind is ConflictKind.POPULATION


@pytest.mark.parametrize(
    "reply",
    [
        "not json",
        batch_reply(("supported", QUOTE, "")),  # statement 2 missing
        json.dumps({"verdicts": [{"statement": 1, "verdict": "supported", "quote": QUOTE}] * 2}),
        batch_reply(("maybe", "", ""), ("supported", QUOTE, "")),
        batch_reply(("contradicted", QUOTE, "colour"), ("supported", QUOTE, "")),
    ],
)
async def test_a_judge_call_out_of_contract_fails_each_of_its_claims_closed(reply: str) -> None:
    model = ScriptedChatModel(reply)
    local = [verdict(VerdictLabel.UNSUPPORTED), verdict(VerdictLabel.UNSUPPORTED)]
    claims = [replace(check(f"claim {i}"), quote_bound=False) for i in range(2)]
    verdicts = await cascade(local, model).verify(claims)
    assert model.calls == 1
    for judged in verdicts:
        assert judged.failure == "invalid_output"
        assert judged.check == "judge_error"
        assert judged.status is VerificationStatus.NOT_VERIFIED


async def test_the_judge_budget_bounds_the_claims_sent_per_request() -> None:
    model = ScriptedChatModel(default=batch_reply(("unsupported", "", ""), ("unsupported", "", "")))
    local = [verdict(VerdictLabel.UNSUPPORTED) for _ in range(7)]
    claims = [replace(check(f"claim {i}"), quote_bound=False) for i in range(7)]
    verdicts = await cascade(local, model, batch=2, budget=4).verify(claims)
    assert model.calls == 2
    assert sum(v.method == "judge" for v in verdicts) == 4
    assert sum(v.status is VerificationStatus.NOT_VERIFIED for v in verdicts) == 3
