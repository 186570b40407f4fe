"""Seeded bootstrap intervals for the evaluation's metrics: ratios of sums, statistics and paired differences.

The bootstrap resamples *questions* with replacement and recomputes the pooled ratio, so the statements
of one answer stay together (a cluster bootstrap). Intervals are percentile intervals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gateway.evaluation.arguments import DEFAULT_RESAMPLES, DEFAULT_SEED

DEFAULT_LEVEL = 0.95


@dataclass(frozen=True)
class Estimate:
    """A point estimate, its bootstrap interval and what it was computed from."""

    value: float | None
    low: float | None
    high: float | None
    units: int
    """Questions that contributed (a denominator above zero)."""
    numerator: float | None = None
    denominator: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "value": round_figure(self.value),
            "low": round_figure(self.low),
            "high": round_figure(self.high),
            "units": self.units,
            "numerator": self.numerator,
            "denominator": self.denominator,
        }


def round_figure(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


@dataclass(frozen=True)
class BootstrapSpec:
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    level: float = DEFAULT_LEVEL

    def __post_init__(self) -> None:
        if self.resamples < 1:
            raise ValueError("resamples must be >= 1")
        if not 0.0 < self.level < 1.0:
            raise ValueError("level must be in (0, 1)")

    def rng(self) -> np.random.Generator:
        return np.random.default_rng(self.seed)

    @property
    def tails(self) -> tuple[float, float]:
        alpha = (1.0 - self.level) / 2.0
        return 100.0 * alpha, 100.0 * (1.0 - alpha)


FloatArray = npt.NDArray[np.float64]


def bootstrap_ratio(pairs: Sequence[tuple[float, float]], spec: BootstrapSpec) -> Estimate:
    """sum(numerators) / sum(denominators), resampling the (numerator, denominator) units."""
    units = [(n, d) for n, d in pairs if d > 0]
    if not units:
        return Estimate(None, None, None, 0, 0.0, 0.0)
    data = np.asarray(units, dtype=np.float64)
    nums, dens = data[:, 0], data[:, 1]
    value = float(nums.sum() / dens.sum())
    index = spec.rng().integers(0, len(units), size=(spec.resamples, len(units)))
    ratios = nums[index].sum(axis=1) / dens[index].sum(axis=1)
    low, high = np.percentile(ratios, spec.tails)
    return Estimate(value, float(low), float(high), len(units), float(nums.sum()), float(dens.sum()))


def bootstrap_statistic(
    values: Sequence[float], statistic: Callable[[FloatArray], FloatArray], spec: BootstrapSpec
) -> Estimate:
    """A statistic of a sample (``statistic`` reduces along axis 1 of a 2-D array of resamples)."""
    if not values:
        return Estimate(None, None, None, 0)
    data = np.asarray(values, dtype=np.float64)
    value = float(statistic(data[np.newaxis, :])[0])
    index = spec.rng().integers(0, len(data), size=(spec.resamples, len(data)))
    replicates = statistic(data[index])
    low, high = np.percentile(replicates, spec.tails)
    return Estimate(value, float(low), float(high), len(data))


def median(data: FloatArray) -> FloatArray:
    return np.asarray(np.median(data, axis=1), dtype=np.float64)


def p95(data: FloatArray) -> FloatArray:
    return np.asarray(np.percentile(data, 95.0, axis=1), dtype=np.float64)


def bootstrap_paired_difference(
    pairs_a: Sequence[tuple[float, float]], pairs_b: Sequence[tuple[float, float]], spec: BootstrapSpec
) -> Estimate:
    """ratio(a) - ratio(b) over the same questions (aligned lists), resampling questions jointly."""
    if len(pairs_a) != len(pairs_b):
        raise ValueError("paired samples must be aligned question by question")
    if not pairs_a:
        return Estimate(None, None, None, 0)
    a = np.asarray(pairs_a, dtype=np.float64)
    b = np.asarray(pairs_b, dtype=np.float64)
    if a[:, 1].sum() <= 0 or b[:, 1].sum() <= 0:
        return Estimate(None, None, None, 0)
    value = float(a[:, 0].sum() / a[:, 1].sum() - b[:, 0].sum() / b[:, 1].sum())
    index = spec.rng().integers(0, len(a), size=(spec.resamples, len(a)))
    den_a, den_b = a[:, 1][index].sum(axis=1), b[:, 1][index].sum(axis=1)
    keep = (den_a > 0) & (den_b > 0)
    diffs = a[:, 0][index].sum(axis=1)[keep] / den_a[keep] - b[:, 0][index].sum(axis=1)[keep] / den_b[keep]
    if not len(diffs):
        return Estimate(value, None, None, len(a))
    low, high = np.percentile(diffs, spec.tails)
    return Estimate(value, float(low), float(high), len(a))
