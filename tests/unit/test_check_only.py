"""Check-only verification (/v1/verify): restatement binding plus the calibrated score and threshold."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gateway.domain import ClaimToCheck, VerdictLabel
from gateway.errors import ConfigurationError
from gateway.settings import Settings
from gateway.text import passage_from_text
from gateway.verification.calibration import DEFAULT_PATH, ScoreCalibration
from gateway.verification.cascade import build_verifier
from gateway.verification.combiner import FEATURES, WEIGHTS_FILE, LogisticCombiner
from gateway.verification.policy import VerificationPolicy

TEXT = (
    "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours. "
    "Do not take more than 4 g of paracetamol in 24 hours."
)


def check(text: str) -> ClaimToCheck:
    return ClaimToCheck(text, None, ((1, passage_from_text(TEXT)),), quote_bound=False)


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_only_a_restated_claim_passes_and_the_score_is_a_probability(embedder) -> None:  # type: ignore[no-untyped-def]
    policy = VerificationPolicy()
    verifier = build_verifier(Settings(), policy, embedder)
    verbatim, restated, added, changed = await verifier.verify(
        [
            check("Do not take more than 4 g of paracetamol in 24 hours."),
            check("Do not take more than 4 g of paracetamol in 24 hours"),
            check("Do not take more than 4 g of paracetamol in 24 hours, even with food."),
            check("Do not take more than 8 g of paracetamol in 24 hours."),
        ]
    )
    assert verbatim.label is VerdictLabel.SUPPORTED
    assert verbatim.score >= policy.check_support_probability
    assert restated.label is VerdictLabel.SUPPORTED
    assert added.label is VerdictLabel.UNSUPPORTED
    assert added.check == "quote_binding"
    assert "'food'" in added.reason
    assert added.score < policy.check_support_probability
    assert changed.label is not VerdictLabel.SUPPORTED
    for verdict in (verbatim, restated, added, changed):
        assert 0.0 <= verdict.score <= 1.0


def test_the_shipped_calibration_is_monotone_and_reaches_the_default_threshold() -> None:
    calibration = ScoreCalibration.load()
    grid = [i / 100 for i in range(101)]
    values = [calibration.probability(x) for x in grid]
    assert values == sorted(values)
    assert values[-1] >= VerificationPolicy().check_support_probability > values[0]
    assert calibration.probability(0.49) < VerificationPolicy().check_support_probability


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"knots": [0.0, 1.0]}, "values"),
        ({"knots": [0.0, 1.0], "values": [0.5, 0.2]}, "values"),
        ({"knots": [0.0, 0.5, 1.0], "values": [0.0, 1.0]}, "values"),
        ({"knots": [0.0, 1.5], "values": [0.0, 1.0]}, "knots[1]"),
    ],
)
def test_a_bad_calibration_file_names_the_file_and_key(
    tmp_path: Path, data: dict[str, object], key: str
) -> None:
    path = tmp_path / "check_calibration.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigurationError) as raised:
        ScoreCalibration.load(path)
    assert raised.value.source == str(path)
    assert raised.value.key == key
    assert DEFAULT_PATH.is_file()


@pytest.mark.parametrize(
    ("change", "key", "reason"),
    [
        (lambda d: d["features"].reverse(), "features", "retrain with bench/train_combiner.py"),
        (lambda d: d["mean"].pop(), "mean", "one per feature"),
        (lambda d: d.pop("bias"), "bias", "missing required key"),
        (lambda d: d["scale"].__setitem__(0, "wide"), "scale[0]", "expected a number"),
    ],
)
def test_stale_or_broken_combiner_weights_name_the_file_and_key(
    tmp_path: Path, change: Callable[[dict[str, Any]], object], key: str, reason: str
) -> None:
    shipped = LogisticCombiner.load()
    assert len(shipped.weights) == len(FEATURES)
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "combiner_weights.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigurationError) as raised:
        LogisticCombiner.load(path)
    assert (raised.value.source, raised.value.key) == (str(path), key)
    assert reason in raised.value.reason
