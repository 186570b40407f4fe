"""The cascade's entailment stage (``GATEWAY_NLI_MODEL``) is asked about the ``not_verified`` claims only:
supported, contradicted and decided claims never reach it; what it leaves undecided goes on to the judge,
and a claim it failed on fails closed and goes nowhere (#35 item 3)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

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
from gateway.testing import ScriptedVerifier
from gateway.text import passage_from_text
from gateway.verification.anchoring import QuoteAnchoringVerifier
from gateway.verification.cascade import CascadeVerifier
from gateway.verification.entailment import NLIStage
from gateway.verification.policy import VerificationPolicy
from gateway.vocabulary import VerdictCheck, VerifierMethod

TEXT = "Adults can take 500 mg every 4 to 6 hours. Do not take more than 4 g in 24 hours."
EVIDENCE = Evidence(1, "leaflet", TEXT[:42], Span(0, 42))
CONFLICT = Conflict(ConflictKind.NUMBER, "claim says '8 g', evidence says '4 g'", "8 g", "4 g")


class RecordingModel:
    """An entailment model that records every (premise, hypothesis) pair it is asked about."""

    name = "recording"

    def __init__(self, entailed: Sequence[str] = (), error: Exception | None = None) -> None:
        self.entailed = set(entailed)
        self.error = error
        self.asked: list[str] = []

    def entailment(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.asked.extend(hypothesis for _, hypothesis in pairs)
        if self.error is not None:
            raise self.error
        return [0.97 if hypothesis in self.entailed else 0.2 for _, hypothesis in pairs]


def local_verdicts() -> list[Verdict]:
    """Claim 0 restated (supported), 1 and 4 undecided, 2 contradicted, 3 with no source (decided)."""
    undecided = Verdict(
        VerdictLabel.UNSUPPORTED, 0.5, VerifierMethod.LOCAL, VerdictCheck.SIMILARITY, "", EVIDENCE
    )
    restated = Evidence(1, "leaflet", "claim 0", Span(0, 7))
    return [
        replace(undecided, label=VerdictLabel.SUPPORTED, score=1.0, evidence=restated),
        undecided,
        replace(
            undecided, label=VerdictLabel.CONTRADICTED, check=VerdictCheck.NUMBER_MISMATCH, conflict=CONFLICT
        ),
        Verdict(VerdictLabel.UNSUPPORTED, 0.0, VerifierMethod.LOCAL, VerdictCheck.NO_SOURCE, "no source"),
        undecided,
    ]


JUDGED = Verdict(
    VerdictLabel.UNSUPPORTED, 0.9, VerifierMethod.JUDGE, VerdictCheck.JUDGE, "not stated", decided=True
)


def claims() -> list[ClaimToCheck]:
    source = ((1, passage_from_text(TEXT, "leaflet")),)
    return [ClaimToCheck(f"claim {i}", None, source, quote_bound=False) for i in range(5)]


def cascade(model: RecordingModel, judge: ScriptedVerifier) -> CascadeVerifier:
    local = ScriptedVerifier("local", local_verdicts())
    nli = NLIStage(model, threshold=0.9, timeout=60.0)
    return CascadeVerifier(QuoteAnchoringVerifier(0.85, 12), local, judge, VerificationPolicy(), nli)


async def test_only_not_verified_claims_reach_the_entailment_model_and_the_rest_go_on_to_the_judge() -> None:
    model = RecordingModel(entailed=["claim 1"])
    judge = ScriptedVerifier("judge", each=JUDGED)
    verdicts = await cascade(model, judge).verify(claims())
    assert model.asked == ["claim 1", "claim 4"]  # never the supported, contradicted or no-source claims
    assert judge.texts == [["claim 4"]]  # the one the model did not find entailed
    assert [v.status for v in verdicts] == [
        VerificationStatus.SUPPORTED,
        VerificationStatus.SUPPORTED,
        VerificationStatus.CONTRADICTED,
        VerificationStatus.UNSUPPORTED,
        VerificationStatus.UNSUPPORTED,
    ]
    assert [v.method for v in verdicts] == ["local", "nli", "local", "local", "judge"]
    assert verdicts[1].check == VerdictCheck.NLI_ENTAILMENT
    assert verdicts[2].conflict == CONFLICT


async def test_claims_the_entailment_model_failed_on_fail_closed_and_never_reach_the_judge() -> None:
    model = RecordingModel(error=RuntimeError("model broke"))
    judge = ScriptedVerifier("judge", each=JUDGED)
    verdicts = await cascade(model, judge).verify(claims())
    assert model.asked == ["claim 1", "claim 4"]
    assert judge.calls == []  # a failure is no undecided claim: the judge does not overrule it
    for failed in (verdicts[1], verdicts[4]):
        assert failed.failure == "error"
        assert failed.check == VerdictCheck.NLI_ERROR
        assert failed.status is VerificationStatus.NOT_VERIFIED
        assert failed.label is VerdictLabel.UNSUPPORTED
    assert [verdicts[i].status for i in (0, 2, 3)] == [
        VerificationStatus.SUPPORTED,
        VerificationStatus.CONTRADICTED,
        VerificationStatus.UNSUPPORTED,
    ]
