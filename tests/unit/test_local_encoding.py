"""The local checker encodes only the claims whose verdict needs a similarity."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gateway.domain import ClaimToCheck, Vector
from gateway.text import passage_from_text
from gateway.verification.candidates import encode_distinct
from gateway.verification.local import LocalEntailmentVerifier
from gateway.verification.policy import VerificationPolicy
from gateway.vocabulary import VerdictCheck

TEXT = "Adults can take 500 mg of paracetamol every 4 hours. Do not take more than 4 g in 24 hours."


class CountingEncoder:
    """Unit vectors from the text's length; records every text it was asked to encode."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> Vector:
        self.texts += texts
        rows = np.ones((len(texts), 8), dtype=np.float32)
        rows[:, 0] = [len(t) for t in texts]
        unit: Vector = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        return unit


def test_claims_with_nothing_to_compare_are_decided_without_encoding() -> None:
    encoder = CountingEncoder()
    local = LocalEntailmentVerifier(encoder, VerificationPolicy())
    leaflet = passage_from_text(TEXT, "leaflet")
    claims = [
        ClaimToCheck("Adults may take 500 mg at a time.", None, ((1, leaflet),), quote_bound=False),
        ClaimToCheck("Take 2 g at once.", None, (), quote_bound=False),
        ClaimToCheck("Take 3 g at once.", None, ((1, passage_from_text("", "empty")),), quote_bound=False),
        ClaimToCheck("Do not take more than 4 g in 24 hours.", None, ((1, leaflet),), quote_bound=False),
    ]
    assessed = local.assess_all(claims)
    assert [a.check for a in assessed[1:]] == [
        VerdictCheck.NO_SOURCE,
        VerdictCheck.NO_EVIDENCE,
        VerdictCheck.VERBATIM,
    ]
    assert assessed[0].candidate is not None
    assert "Adults may take 500 mg at a time." in encoder.texts
    assert not {"Take 2 g at once.", "Take 3 g at once."} & set(encoder.texts)


def test_each_distinct_text_is_encoded_once_with_the_verdicts_of_separate_calls() -> None:
    """A repeated claim, and the same sentences in two passages (different ids, no stored vectors),
    are encoded once; every claim gets the verdict it gets when verified alone."""
    claims = [
        ClaimToCheck("Adults may take 500 mg at a time.", None, ((1, passage_from_text(TEXT, "a")),)),
        ClaimToCheck("Adults may take 500 mg at a time.", None, ((1, passage_from_text(TEXT, "b")),)),
        ClaimToCheck("Never take over 4 g a day.", None, ((1, passage_from_text(TEXT, "b")),)),
    ]
    encoder = CountingEncoder()
    together = LocalEntailmentVerifier(encoder, VerificationPolicy()).assess_all(claims)
    assert sorted(encoder.texts) == sorted(set(encoder.texts))
    assert len(encoder.texts) == 2 + 2  # two distinct claims, the leaflet's two sentences
    for claim, assessed in zip(claims, together, strict=True):
        alone = LocalEntailmentVerifier(CountingEncoder(), VerificationPolicy()).assess_all([claim])[0]
        assert (assessed.label, assessed.score, assessed.similarity) == (
            alone.label,
            alone.score,
            alone.similarity,
        )
        assert assessed.candidate is not None
        assert alone.candidate is not None
        assert assessed.candidate.text == alone.candidate.text


def test_encode_distinct_passes_a_call_without_repeats_unchanged() -> None:
    encoder = CountingEncoder()
    vectors = encode_distinct(encoder, ["one", "two", "three"])
    assert encoder.texts == ["one", "two", "three"]
    repeated = encode_distinct(encoder, ["two", "one", "two"])
    assert encoder.texts[3:] == ["two", "one"]
    np.testing.assert_array_equal(repeated, vectors[[1, 0, 1]])
    assert encode_distinct(encoder, []).shape[0] == 0
