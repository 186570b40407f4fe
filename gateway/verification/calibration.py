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
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gateway.errors import ConfigurationError

DEFAULT_PATH = Path(__file__).with_name("data") / "check_calibration.json"


@dataclass(frozen=True)
class ScoreCalibration:
    """Monotone piecewise-linear map from raw local score (0..1) to probability of support (0..1)."""

    knots: tuple[float, ...]
    values: tuple[float, ...]

    def probability(self, raw: float) -> float:
        return float(np.interp(raw, self.knots, self.values))

    @classmethod
    def load(cls, path: Path = DEFAULT_PATH) -> ScoreCalibration:
        source = str(path)
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as err:
            raise ConfigurationError(source, "(file)", f"cannot read the calibration: {err}") from err
        if not isinstance(data, dict):
            raise ConfigurationError(source, "(file)", "must be a JSON object")
        knots, values = data.get("knots"), data.get("values")
        for key, series in (("knots", knots), ("values", values)):
            if not isinstance(series, list) or len(series) < 2:
                raise ConfigurationError(source, key, "must be a list of at least two numbers")
            if not all(isinstance(v, int | float) and 0.0 <= v <= 1.0 for v in series):
                raise ConfigurationError(source, key, "every entry must be a number in [0, 1]")
            if any(b < a for a, b in itertools.pairwise(series)):
                raise ConfigurationError(source, key, "must be non-decreasing")
        assert isinstance(knots, list)
        assert isinstance(values, list)
        if len(knots) != len(values):
            raise ConfigurationError(source, "values", "must have one value per knot")
        return cls(tuple(float(k) for k in knots), tuple(float(v) for v in values))
