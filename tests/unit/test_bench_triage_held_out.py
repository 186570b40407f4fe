"""The triage bench never prints the rows of an untouched split (#31): the probes' held parts, the
project's test and probe splits, and the shared sets' held-out split; their training split and the
probes' tune parts are printed, since rules are tuned on them."""

from __future__ import annotations

import pytest

from bench.bench_triage import SHARED_HELD, held_out


@pytest.mark.parametrize(
    ("source", "untouched"),
    [
        (f"shared suicide_risk.jsonl {SHARED_HELD}", True),
        (f"shared clinical.jsonl {SHARED_HELD}", True),
        ("shared suicide_risk.jsonl (training split)", False),
        ("crisis held (probe_crisis.jsonl)", True),
        ("crisis tune (probe_crisis.jsonl)", False),
        ("project test (bench/data/triage/test.jsonl)", True),
        ("project tune (bench/data/triage/tune.jsonl)", False),
    ],
)
def test_only_tune_and_training_splits_have_their_errors_printed(source: str, untouched: bool) -> None:
    assert held_out(source) is untouched
