"""Calibrated check-only scores: the local rule score mapped to a probability of support.

``/v1/verify`` answers carry no quotes, so the quote-binding guarantee of the chat path does not
apply; there the decision is a threshold on a calibrated score. The map is an isotonic regression
(piecewise linear between its knots, monotone) of "the claim is supported" on the raw local rule
score, fitted on the seven development sets pooled with equal weight per set
(``bench/calibrate_verifier.py``; figures in docs/verification.md). The default threshold
``check_support_probability`` is chosen on the *worst* set, with margin, so that at most 2% of
not-supported claims pass on every set.

The knots live in ``data/check_calibration.json`` (reviewable data, validated on load: a bad file
stops start-up with an error naming the file and the key).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import AfterValidator, ConfigDict, Field, Strict, model_validator, with_config

from gateway.validation import field_error, load_file

DEFAULT_PATH = Path(__file__).with_name("data") / "check_calibration.json"


def _non_decreasing(series: tuple[float, ...]) -> tuple[float, ...]:
    if any(b < a for a, b in itertools.pairwise(series)):
        raise ValueError("must be non-decreasing")
    return series


Series = Annotated[
    tuple[Annotated[float, Strict(), Field(ge=0.0, le=1.0)], ...],
    Field(min_length=2),
    AfterValidator(_non_decreasing),
]
"""At least two numbers in [0, 1], non-decreasing."""


@with_config(ConfigDict(extra="ignore"))
@dataclass(frozen=True)
class _CalibrationFile:
    """``check_calibration.json`` as written (its ``method`` note is for the reader)."""

    knots: Series
    values: Series

    @model_validator(mode="after")
    def _paired(self) -> _CalibrationFile:
        if len(self.knots) != len(self.values):
            raise field_error("ScoreCalibration", "values", "must have one value per knot")
        return self


@dataclass(frozen=True)
class ScoreCalibration:
    """Monotone piecewise-linear map from raw local score (0..1) to probability of support (0..1)."""

    knots: tuple[float, ...]
    values: tuple[float, ...]

    def probability(self, raw: float) -> float:
        return float(np.interp(raw, self.knots, self.values))

    @classmethod
    def load(cls, path: Path = DEFAULT_PATH) -> ScoreCalibration:
        data = load_file(path, _CalibrationFile)
        return cls(data.knots, data.values)
