"""The LLM judge against a real OpenAI-compatible server on loopback, and the cascade's escalation."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from gateway.domain import ClaimToCheck, Evidence, Passage, Span, Verdict, VerdictLabel
from gateway.metrics import GatewayMetrics, count_verifier_failures
from gateway.models import Endpoint, ModelPool, OpenAIChatModel
from gateway.settings import Secret, Settings
from gateway.testing import Reply, ScriptedChatModel, ScriptedUpstream, ScriptedVerifier, serve_in_thread
from gateway.verification.anchoring import QuoteAnchoringVerifier
from gateway.verification.calibration import ScoreCalibration
from gateway.verification.cascade import CascadeVerifier, build_verifier
from gateway.verification.judge import JudgeConfig, LLMJudgeVerifier
from gateway.verification.policy import VerificationPolicy
from gateway.verification.verifier import operating_point

TEXT = "Adults can take 500 mg every 4 to 6 hours. Do not take more than 4 g in 24 hours."
SLOW_RELEASED = threading.Event()
"""The ``slow`` model's reply is held until the module's server stops: only a timeout ends its call."""
CALL_SECONDS = 60.0
"""The other calls' timeout: far longer than a slow machine takes, so they fail only as scripted."""


VERDICTS = {
    "good": json.dumps(
        {"verdict": "supported", "quote": "take 500 mg every 4 to 6 hours", "reason": "stated"}
    ),
    "contradict": json.dumps(
        {"verdict": "contradicted", "quote": "Do not take more than 4 g", "reason": "x"}
    ),
    "invented": json.dumps({"verdict": "supported", "quote": "take 5 g at once", "reason": "made up"}),
    "garbage": "I think it is probably fine!",
    "badverdict": json.dumps({"verdict": "maybe", "quote": "", "reason": ""}),
    "slow": json.dumps({"verdict": "supported", "quote": "take 500 mg", "reason": "late"}),
}


def by_model(body: dict[str, Any]) -> Reply:
    """Answers according to the requested model name."""
    behaviour = body["model"]
    if behaviour == "error":
        return Reply(status=500, content="boom")
    return Reply(content=VERDICTS[behaviour], hold_until=SLOW_RELEASED if behaviour == "slow" else None)


MODEL = ScriptedUpstream()
"""The judge's model server: every request it got is in ``MODEL.requests``."""
MODEL.responder = by_model


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with serve_in_thread(MODEL.app()) as url:
        try:
            yield f"{url}/v1"
        finally:
            SLOW_RELEASED.set()  # let the held replies end before the server stops


def passage() -> Passage:
    return Passage(
        id="p1",
        document_id="d1",
        text=TEXT,
        title="",
        url="",
        org="",
        tier="unknown",
        reviewed_on=None,
        score=1.0,
    )


def claim(text: str = "Adults may take 500 mg every 4 to 6 hours.", quote: str | None = None) -> ClaimToCheck:
    return ClaimToCheck(text, quote, ((1, passage()),))


def judge(url: str, model: str, timeout: float = CALL_SECONDS) -> LLMJudgeVerifier:
    endpoint = Endpoint(base_url=url, api_key=Secret("test"), model=model, timeout=timeout, retries=0)
    return LLMJudgeVerifier(OpenAIChatModel.from_endpoint(endpoint), JudgeConfig(timeout=timeout))


async def test_good_answer_is_anchored(server_url: str) -> None:
    [verdict] = await judge(server_url, "good").verify([claim()])
    assert verdict.label is VerdictLabel.SUPPORTED
    assert verdict.method == "judge"
    assert verdict.evidence is not None
    assert (
        TEXT[verdict.evidence.span.start : verdict.evidence.span.end].lower()
        == "take 500 mg every 4 to 6 hours"
    )
    sent = MODEL.requests[-1]
    assert sent["temperature"] == 0
    assert sent["response_format"]["type"] == "json_schema"
    assert TEXT in sent["messages"][-1]["content"]


async def test_contradiction_keeps_its_quote(server_url: str) -> None:
    [verdict] = await judge(server_url, "contradict").verify([claim("Take up to 8 g in 24 hours.")])
    assert verdict.label is VerdictLabel.CONTRADICTED
    assert verdict.evidence is not None


async def test_invented_quote_is_downgraded(server_url: str) -> None:
    [verdict] = await judge(server_url, "invented").verify([claim()])
    assert verdict.label is VerdictLabel.UNSUPPORTED
    assert verdict.check == "judge_quote_not_found"


@pytest.mark.parametrize("model", ["garbage", "badverdict", "error"])
async def test_bad_output_or_api_error_fails_closed(server_url: str, model: str) -> None:
    [verdict] = await judge(server_url, model).verify([claim()])
    assert verdict.label is VerdictLabel.UNSUPPORTED
    assert verdict.check == "judge_error"
    assert verdict.reason


async def test_timeout_fails_closed(server_url: str) -> None:
    # the reply is held (a broken timeout would get the held "supported" after HOLD_LIMIT_SECONDS)
    [verdict] = await judge(server_url, "slow", timeout=0.5).verify([claim()])
    assert not SLOW_RELEASED.is_set()
    assert verdict.label is VerdictLabel.UNSUPPORTED
    assert verdict.check == "judge_error"


async def test_unreachable_endpoint_fails_closed() -> None:
    [verdict] = await judge("http://127.0.0.1:9/v1", "good", timeout=1.0).verify([claim()])
    assert verdict.check == "judge_error"


@pytest.mark.parametrize(
    ("model", "seconds", "failure"),
    [
        ("garbage", CALL_SECONDS, "invalid_output"),
        ("badverdict", CALL_SECONDS, "invalid_output"),
        ("error", CALL_SECONDS, "error"),
        ("slow", 0.5, "timeout"),
    ],
)
async def test_judge_failures_are_closed_failures_and_counted(
    server_url: str, model: str, seconds: float, failure: str
) -> None:
    """A failed judge call is never an ordinary unsupported verdict: check, failure kind and metric."""
    [verdict] = await judge(server_url, model, timeout=seconds).verify([claim()])
    assert verdict.check == "judge_error"
    assert verdict.failure == failure
    assert verdict.reason.startswith("judge failed, claim not verified")
    metrics = GatewayMetrics()
    count_verifier_failures([verdict, local_verdict(0.4)], metrics)
    assert (
        metrics.registry.get_sample_value(
            "gateway_verifier_failures_total", {"stage": "judge", "kind": failure}
        )
        == 1
    )


def local_verdict(score: float, label: VerdictLabel = VerdictLabel.UNSUPPORTED) -> Verdict:
    return Verdict(label, score, "local", "similarity", "", Evidence(1, "p1", TEXT[:10], Span(0, 10)))


JUDGED = Verdict(VerdictLabel.SUPPORTED, 1.0, "judge", "judge", "ok")
POLICY = VerificationPolicy(
    uncertain_band=(0.35, 0.65),
    judge_budget_per_request=2,
    support_threshold=0.5,
    unanchored_support_threshold=0.6,
)


def cascade(
    local: ScriptedVerifier, judge_: ScriptedVerifier | None, policy: VerificationPolicy = POLICY
) -> CascadeVerifier:
    return CascadeVerifier(QuoteAnchoringVerifier(0.85, 12), local, judge_, policy)


RESTATED_LINEAR = ScoreCalibration((0.0, 0.5, 1.0), (0.0, 0.0, 1.0))
"""Maps a restated claim's raw check-only score (0.5 + 0.5 x local) back to its local score."""


async def test_only_uncertain_claims_escalate_within_budget() -> None:
    """Check-only claims (no quote contract): the calibrated score decides, the band escalates."""
    scores = [0.9, 0.5, 0.4, 0.62, 0.05]
    texts = [f"claim {i}" for i in range(len(scores))]
    restated = [  # evidence that restates each claim, so the calibrated score is the local one
        replace(local_verdict(s), evidence=Evidence(1, "p1", t, Span(0, len(t))))
        for s, t in zip(scores, texts, strict=True)
    ]
    local = ScriptedVerifier("local", restated)
    judge_ = ScriptedVerifier("judge", each=JUDGED)
    claims = [replace(claim(t), quote_bound=False) for t in texts]
    policy = replace(POLICY, check_support_probability=0.6)
    anchoring = QuoteAnchoringVerifier(0.85, 12)
    verifier = CascadeVerifier(anchoring, local, judge_, policy, calibration=RESTATED_LINEAR)
    verdicts = await verifier.verify(claims)
    assert judge_.texts == [["claim 1", "claim 2"]]
    assert [v.method for v in verdicts] == ["local", "judge", "judge", "local", "local"]
    assert verdicts[0].label is VerdictLabel.SUPPORTED
    assert verdicts[3].label is VerdictLabel.SUPPORTED
    assert verdicts[4].label is VerdictLabel.UNSUPPORTED


async def test_a_chat_claim_without_an_anchored_quote_is_never_supported_locally() -> None:
    local = ScriptedVerifier("local", [local_verdict(0.95), local_verdict(0.95)])
    claims = [claim(), claim(quote="never exceed ten grams daily")]
    missing, fabricated = await cascade(local, None).verify(claims)
    for verdict in (missing, fabricated):
        assert verdict.label is VerdictLabel.UNSUPPORTED
        assert verdict.check == "no_anchored_quote"
    assert "no_quote" in missing.reason
    assert "quote_not_found" in fabricated.reason


async def test_anchored_quote_supports_only_a_claim_that_restates_it() -> None:
    quote = "Do not take more than 4 g in 24 hours"
    local = ScriptedVerifier("local", [local_verdict(0.2), local_verdict(0.9), local_verdict(0.9)])
    claims = [
        claim("Do not take more than 4 g in 24 hours.", quote),
        claim("Do not take more than 4 g of paracetamol in 24 hours with alcohol.", quote),
        claim("Do not take more than 8 g in 24 hours.", quote),
    ]
    restated, added, changed = await cascade(local, None).verify(claims)
    assert restated.label is VerdictLabel.SUPPORTED
    assert restated.check == "quote_bound"
    assert restated.evidence is not None
    assert restated.evidence.text == "Do not take more than 4 g in 24 hours."
    assert added.label is VerdictLabel.UNSUPPORTED
    assert added.check in {"quote_binding", "entity_missing"}
    assert "paracetamol" in added.reason
    assert changed.label is VerdictLabel.CONTRADICTED
    assert changed.check == "number_mismatch"
    assert "8 g" in changed.reason


async def test_local_contradiction_beats_a_real_quote() -> None:
    local = ScriptedVerifier("local", [local_verdict(0.1, VerdictLabel.CONTRADICTED)])
    judge_ = ScriptedVerifier("judge", each=JUDGED)
    [verdict] = await cascade(local, judge_).verify([claim(quote="Do not take more than 4 g in 24 hours")])
    assert verdict.label is VerdictLabel.CONTRADICTED
    assert judge_.calls == []


async def test_cascade_with_real_judge_server(server_url: str) -> None:
    local = ScriptedVerifier("local", [local_verdict(0.5)])
    verifier = cascade(local, judge(server_url, "error"))  # type: ignore[arg-type]
    [verdict] = await verifier.verify([claim()])
    assert verdict.label is VerdictLabel.UNSUPPORTED
    assert verdict.check == "judge_error"


@pytest.mark.slow  # loads MiniLM, Chroma or the services
def test_build_verifier_adds_the_judge_only_when_configured(embedder: Any) -> None:
    policy = VerificationPolicy()
    without = build_verifier(Settings(), policy, embedder)
    configured = Settings(judge_base_url="http://127.0.0.1:9/v1", judge_api_key=Secret("k"))
    models = ModelPool(configured, connect=lambda endpoint: ScriptedChatModel())
    with_judge = build_verifier(configured, policy, embedder, models)
    assert isinstance(without, CascadeVerifier)
    assert without.name == "cascade"
    assert operating_point(without).startswith("cascade[local] ")
    assert operating_point(with_judge).startswith("cascade[local+judge] ")
