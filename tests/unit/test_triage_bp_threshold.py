"""The blood-pressure crisis threshold (#31 item 3) is one pair of numbers an operator edits in
``vitals.yaml`` (``pressure_signs.bp_crisis``): moving it moves the decision both ways, and a bad value is
refused at start-up naming the file and the key."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from gateway.errors import ConfigurationError
from gateway.triage.policy import load_triage_policy
from tests.support.shipped_triage import POLICY, copy_policies
from tests.support.triage import flagged_rule

KEY = "pressure_signs.bp_crisis"


def _edited(tmp_path: Path, change: Any) -> Path:
    directory = copy_policies(tmp_path)
    path = directory / "vitals.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data["pressure_signs"])
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return directory


def _with_limits(tmp_path: Path, systolic: int, diastolic: int) -> Any:
    def change(signs: dict[str, Any]) -> None:
        signs["bp_crisis"].update(systolic_at_or_above=systolic, diastolic_at_or_above=diastolic)

    return dataclasses.replace(POLICY, triage=load_triage_policy(_edited(tmp_path, change)))


@pytest.mark.parametrize(
    "message",
    [
        "BP 172/100 today and I'm short of breath",
        "my bp machine says 150 over 112 and my chest feels tight",
        "top number 175 and I've got a blinding headache",
    ],
)
def test_a_lowered_threshold_makes_a_lower_reading_an_emergency(tmp_path: Path, message: str) -> None:
    assert flagged_rule(message, POLICY) is None
    assert flagged_rule(message, _with_limits(tmp_path, 170, 110)) == "hypertensive_emergency"


@pytest.mark.parametrize(
    "message",
    [
        "BP 185/122 today and I'm short of breath",
        "my blood pressure is 170/125 and I've got a blinding headache",
        "top number 190 and I've got a blinding headache",
    ],
)
def test_a_raised_threshold_makes_a_reading_under_it_no_emergency(tmp_path: Path, message: str) -> None:
    assert flagged_rule(message, POLICY) == "hypertensive_emergency"
    assert flagged_rule(message, _with_limits(tmp_path, 200, 130)) is None


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda s: s["bp_crisis"].update(systolic_at_or_above=0), f"{KEY}.systolic_at_or_above"),
        (lambda s: s["bp_crisis"].update(diastolic_at_or_above=-5), f"{KEY}.diastolic_at_or_above"),
        (lambda s: s["bp_crisis"].update(systolic_at_or_above="high"), f"{KEY}.systolic_at_or_above"),
        (lambda s: s["bp_crisis"].update(source="nowhere"), f"{KEY}.source"),
        (lambda s: s.pop("bp_crisis"), KEY),
        (lambda s: s.update(no_such_group=s["bp_crisis"]), "pressure_signs.no_such_group"),
        (lambda s: s.update(headache=s["bp_crisis"]), "pressure_signs.headache"),
    ],
)  # fmt: skip
def test_a_bad_threshold_is_refused_naming_the_file_and_key(tmp_path: Path, change: Any, key: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        load_triage_policy(_edited(tmp_path, change))
    assert info.value.source.endswith("vitals.yaml")
    assert info.value.key.startswith(key), info.value.key
