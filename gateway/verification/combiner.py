"""The learned combiner: a logistic regression over frozen features of one (claim, evidence) pair.

The features are the signals the rule combiner of ``local.py`` mixes by hand (MiniLM cosines,
content-word coverage, the outcomes of the checks of the ``checks`` package, lengths), and the weights come
from ``combiner_weights.json``, written by ``bench/train_combiner.py`` from pairs it
generates out of the bundled corpus (never from the evaluation sets). Inference is one dot product.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field, Strict, with_config

from gateway.validation import load_file
from gateway.verification.checks.analysis import AnalysedText
from gateway.verification.checks.results import CheckName, CheckOutcome, CheckResult
from gateway.verification.checks.words import bigram_coverage, coverage

WEIGHTS_FILE = Path(__file__).with_name("combiner_weights.json")

FEATURES: tuple[str, ...] = (
    "cosine",
    "best_sentence_cosine",
    "coverage",
    "bigram_coverage",
    "long_word_coverage",
    "number_missing",
    "number_clash",
    "negation_clash",
    "antonym_clash",
    "quantifier_missing",
    "quantifier_clash",
    "entity_missing",
    "entity_clash",
    "log_length_ratio",
    "log_claim_words",
)
_LONG_WORD = 7
"""Claim words at least this long are the specific ones (drug, condition, mechanism names)."""


def _flags(results: Sequence[CheckResult]) -> dict[str, float]:
    flags = dict.fromkeys(FEATURES[5:13], 0.0)
    names = {
        CheckName.NUMBER: "number",
        CheckName.NEGATION: "negation",
        CheckName.ANTONYM: "antonym",
        CheckName.QUANTIFIER: "quantifier",
        CheckName.ENTITY: "entity",
    }
    for result in results:
        if result.outcome is CheckOutcome.PASS:
            continue
        if result.name not in names:
            continue
        key = f"{names[result.name]}_{result.outcome.value}"
        if key in flags:
            flags[key] = 1.0
    return flags


def features(
    claim: AnalysedText,
    evidence: AnalysedText,
    cosine: float,
    best_sentence_cosine: float,
    results: Sequence[CheckResult],
) -> list[float]:
    """The feature vector, in ``FEATURES`` order."""
    claim_words = claim.content_words
    evidence_words = evidence.content_words
    long_words = [w for w in claim_words if len(w) >= _LONG_WORD]
    evidence_stems = evidence.content_stems
    stem = claim.data.words.stem
    values = {
        "cosine": cosine,
        "best_sentence_cosine": best_sentence_cosine,
        "coverage": coverage(claim, evidence),
        "bigram_coverage": bigram_coverage(claim, evidence),
        "long_word_coverage": (
            sum(stem(w) in evidence_stems for w in long_words) / len(long_words) if long_words else 1.0
        ),
        "log_length_ratio": math.log((len(claim_words) + 1) / (len(evidence_words) + 1)),
        "log_claim_words": math.log(len(claim_words) + 1),
        **_flags(results),
    }
    return [float(values[name]) for name in FEATURES]


def _trained_for_these_features(value: tuple[str, ...]) -> tuple[str, ...]:
    if value != FEATURES:  # weights trained for other features: stale, not usable
        raise ValueError(f"{list(value)} differ from {list(FEATURES)}; retrain with bench/train_combiner.py")
    return value


def _one_per_feature(value: tuple[float, ...]) -> tuple[float, ...]:
    if len(value) != len(FEATURES):
        raise ValueError(f"expected {len(FEATURES)} numbers (one per feature), got {len(value)}")
    return value


_Finite = Annotated[float, Strict(), Field(allow_inf_nan=False)]
_PerFeature = Annotated[tuple[_Finite, ...], AfterValidator(_one_per_feature)]


@with_config(ConfigDict(extra="ignore"))
@dataclass(frozen=True)
class _WeightsFile:
    """``combiner_weights.json`` as ``bench/train_combiner.py`` writes it (``trained_on`` is a note)."""

    features: Annotated[tuple[str, ...], AfterValidator(_trained_for_these_features)]
    weights: _PerFeature
    bias: _Finite
    mean: _PerFeature
    scale: _PerFeature


@dataclass(frozen=True)
class LogisticCombiner:
    """P(supported | features) = sigmoid(w . standardised(x) + b)."""

    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]

    def probability(self, values: Sequence[float]) -> float:
        z = self.bias + sum(
            w * (x - m) / s for w, x, m, s in zip(self.weights, values, self.mean, self.scale, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))

    @classmethod
    def load(cls, path: Path = WEIGHTS_FILE) -> LogisticCombiner:
        data = load_file(path, _WeightsFile, hint=" (train it with: python bench/train_combiner.py)")
        return cls(data.weights, data.bias, data.mean, data.scale)
