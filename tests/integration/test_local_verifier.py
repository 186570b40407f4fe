"""The local entailment verifier with the real MiniLM model."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from gateway.domain import ClaimToCheck, ConflictKind, Passage, VerdictLabel, VerificationStatus
from gateway.text import passage_from_text
from gateway.verification.local import LocalEntailmentVerifier
from gateway.verification.policy import VerificationPolicy

LEAFLET = (
    "Paracetamol is used to treat pain and fever. Adults can take 500 mg to 1 g every 4 to 6 hours. "
    "Do not take more than 4 g in 24 hours. Children under 16 should not take aspirin. "
    "Ibuprofen may sometimes cause stomach pain. Paracetamol is safe to take during pregnancy."
)
FLOORS = {"checkcovid_dev": 0.58, "kqa_dev": 0.64}
"""Measured 0.610 (every other Check-COVID row; 0.645 on all rows) and 0.666 (all K-QA rows) with the
default policy and precomputed sentence vectors, minus a margin."""


def make_passage(text: str, pid: str = "p1") -> Passage:
    return passage_from_text(text, pid, title="leaflet")


@pytest.fixture(scope="module")
def verifier(embedder: object) -> LocalEntailmentVerifier:
    return LocalEntailmentVerifier(embedder, VerificationPolicy())  # type: ignore[arg-type]


PERMISSIVE = VerificationPolicy(
    contradiction_kinds=tuple(kind.value for kind in ConflictKind),
    contradiction_similarity=0.6,
    contradiction_max_unshared_words=5,
)
"""Every clash on close evidence is a contradiction (the rule before #35: about half of them were
truly not supported on the dev sets, so the default trusts far fewer)."""


@pytest.fixture(scope="module")
def permissive(embedder: object) -> LocalEntailmentVerifier:
    return LocalEntailmentVerifier(embedder, PERMISSIVE)  # type: ignore[arg-type]


async def check(
    verifier: LocalEntailmentVerifier, claim: str, passage: Passage | None = None
) -> tuple[str, str]:
    [verdict] = await verifier.verify([ClaimToCheck(claim, None, ((1, passage or make_passage(LEAFLET)),))])
    assert verdict.method == "local"
    return verdict.label.value, verdict.check


@pytest.mark.parametrize(
    "claim",
    [
        "Adults may take 500 mg to 1 g of paracetamol every 4 to 6 hours.",
        "Paracetamol treats fever and pain.",
        "You should not take more than 4 g of paracetamol in 24 hours.",
        "Aspirin should not be given to children under 16.",
    ],
)
async def test_paraphrases_are_supported(verifier: LocalEntailmentVerifier, claim: str) -> None:
    assert (await check(verifier, claim))[0] == "supported"


@pytest.mark.parametrize(
    ("claim", "check_name"),
    [
        ("Adults can take 50 mg to 1 g every 4 to 6 hours.", "number_mismatch"),
        ("Do not take more than 8 g in 24 hours.", "number_mismatch"),
        ("Children under 16 should take aspirin.", "negation"),
        ("Ibuprofen always causes stomach pain.", "quantifier"),
        ("Older adults should not take aspirin.", "entity_missing"),
        ("Naproxen is safe to take during pregnancy.", "entity_missing"),
    ],
)
async def test_close_but_wrong_claims_fail(
    verifier: LocalEntailmentVerifier, claim: str, check_name: str
) -> None:
    label, check_used = await check(verifier, claim)
    assert label in {"unsupported", "contradicted"}
    assert check_used == check_name


TRIAL = (
    "In the trial, the new drug reduced deaths from sepsis by a third. Most infected children had no "
    "symptoms. Obese patients were more likely to be admitted to hospital. About 90% of infections went "
    "undetected."
)


@pytest.mark.parametrize(
    ("claim", "check_name"),
    [
        ("The new drug had no effect on deaths from sepsis in the trial.", "negation"),
        ("Obese patients were just as likely to be admitted to hospital.", "antonym"),
        ("Obese patients were less likely to be admitted to hospital.", "antonym"),
        ("About half of infections went undetected.", "number_mismatch"),
    ],
)
async def test_reversed_findings_are_contradicted_where_the_policy_trusts_the_kind(
    permissive: LocalEntailmentVerifier, verifier: LocalEntailmentVerifier, claim: str, check_name: str
) -> None:
    assert await check(permissive, claim, make_passage(TRIAL)) == ("contradicted", check_name)
    label, check_used = await check(verifier, claim, make_passage(TRIAL))
    assert check_used == check_name  # the default still names the possible conflict ...
    if label == "unsupported":  # ... and leaves the claim not verified unless it restates the rest
        [verdict] = await verifier.verify([ClaimToCheck(claim, None, ((1, make_passage(TRIAL)),))])
        assert verdict.status is VerificationStatus.NOT_VERIFIED
        assert "not decided locally" in verdict.reason


@pytest.mark.parametrize(
    "claim",
    [
        "Nine out of 10 infections went undetected.",
        "Most infected children were asymptomatic.",
        "The new drug lowered sepsis mortality in the trial.",
        "In the trial, the new drug cut sepsis deaths by a third.",
    ],
)
async def test_reworded_findings_are_supported(verifier: LocalEntailmentVerifier, claim: str) -> None:
    assert (await check(verifier, claim, make_passage(TRIAL)))[0] == "supported"


async def test_clash_with_close_evidence_is_a_contradiction(permissive: LocalEntailmentVerifier) -> None:
    assert (await check(permissive, "Children under 16 should take aspirin."))[0] == "contradicted"


async def test_a_claim_that_restates_its_evidence_but_for_a_number_is_contradicted_by_default(
    verifier: LocalEntailmentVerifier,
) -> None:
    claim = "Do not take more than 8 g in 24 hours."
    [verdict] = await verifier.verify([ClaimToCheck(claim, None, ((1, make_passage(LEAFLET)),))])
    assert verdict.status is VerificationStatus.CONTRADICTED
    assert verdict.conflict is not None
    assert verdict.conflict.kind is ConflictKind.NUMBER


async def test_unrelated_claim_is_unsupported(verifier: LocalEntailmentVerifier) -> None:
    label, _ = await check(verifier, "Cataract surgery takes about twenty minutes under local anaesthetic.")
    assert label == "unsupported"


async def test_evidence_points_into_the_passage(verifier: LocalEntailmentVerifier) -> None:
    passage = make_passage(LEAFLET)
    [verdict] = await verifier.verify(
        [ClaimToCheck("Children under 16 must not take aspirin.", None, ((3, passage),))]
    )
    assert verdict.evidence is not None
    assert verdict.evidence.source_number == 3
    assert verdict.evidence.passage_id == "p1"
    span = verdict.evidence.span
    assert passage.text[span.start : span.end] == verdict.evidence.text
    assert "aspirin" in verdict.evidence.text


async def test_precomputed_vectors_give_the_same_verdict(
    verifier: LocalEntailmentVerifier, embedder: object
) -> None:
    raw = make_passage(LEAFLET)
    vectors = embedder.encode([t for _, t in raw.sentences()])  # type: ignore[attr-defined]
    ingested = replace(raw, sentence_vectors=np.asarray(vectors, dtype=np.float32))
    claims = ["Paracetamol treats fever and pain.", "Children under 16 should take aspirin."]
    on_the_fly = await verifier.verify([ClaimToCheck(c, None, ((1, raw),)) for c in claims])
    stored = await verifier.verify([ClaimToCheck(c, None, ((1, ingested),)) for c in claims])
    assert [v.label for v in on_the_fly] == [v.label for v in stored]
    assert [v.score for v in on_the_fly] == pytest.approx([v.score for v in stored], abs=1e-3)


async def test_best_of_several_sources_wins(verifier: LocalEntailmentVerifier) -> None:
    other = make_passage("Glaucoma damages the optic nerve.", "p2")
    claim = ClaimToCheck("Paracetamol treats pain and fever.", None, ((1, other), (2, make_passage(LEAFLET))))
    [verdict] = await verifier.verify([claim])
    assert verdict.label is VerdictLabel.SUPPORTED
    assert verdict.evidence is not None
    assert verdict.evidence.source_number == 2


async def test_claim_without_source_fails_closed(verifier: LocalEntailmentVerifier) -> None:
    [verdict] = await verifier.verify([ClaimToCheck("Paracetamol treats pain.", None, ())])
    assert verdict.label is VerdictLabel.UNSUPPORTED
    assert verdict.check == "no_source"


async def test_empty_request(verifier: LocalEntailmentVerifier) -> None:
    assert await verifier.verify([]) == []


STRIDE = {"checkcovid_dev": 2, "kqa_dev": 1}
"""Rows used: every other Check-COVID row (its train/dev halves interleave) and all of K-QA."""


def _balanced_accuracy(verifier: LocalEntailmentVerifier, embedder: object, path: Path, stride: int) -> float:
    """The production path: sentence vectors precomputed (one batch for the set), then one verify batch."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()][::stride]
    passages = [make_passage(r["evidence"], f"r{i}") for i, r in enumerate(rows)]
    unique = sorted({t for p in passages for _, t in p.sentences()})
    encoded = dict(zip(unique, embedder.encode(unique), strict=True))  # type: ignore[attr-defined]
    passages = [
        replace(p, sentence_vectors=np.stack([encoded[t] for _, t in p.sentences()])) for p in passages
    ]
    claims = [ClaimToCheck(r["claim"], None, ((1, p),)) for r, p in zip(rows, passages, strict=True)]
    predicted = np.array([a.label is VerdictLabel.SUPPORTED for a in verifier.assess_all(claims)])
    truth = np.array([r["label"] == "supported" for r in rows])
    return float((predicted[truth].mean() + (~predicted[~truth]).mean()) / 2)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FLOORS))
def test_dev_set_balanced_accuracy_floor(
    verifier: LocalEntailmentVerifier, embedder: object, shared_eval: Path, name: str
) -> None:
    path = shared_eval / "claims" / f"{name}.jsonl"
    assert _balanced_accuracy(verifier, embedder, path, STRIDE[name]) >= FLOORS[name]


class BrokenEncoder:
    def encode(self, texts: object) -> np.ndarray:
        raise RuntimeError("model not loaded")


async def test_encoder_failure_raises_verifier_error() -> None:
    from gateway.errors import VerifierError

    verifier = LocalEntailmentVerifier(BrokenEncoder(), VerificationPolicy())
    with pytest.raises(VerifierError, match="model not loaded"):
        await verifier.verify([ClaimToCheck("Paracetamol treats pain.", None, ((1, make_passage(LEAFLET)),))])
