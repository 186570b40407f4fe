"""One reader of blood-pressure wording (#31 item 3, ``gateway/triage/pressure.py``): NEWS2's limits and
the crisis sign (``bp_crisis``) read the same readings, as numbers compared with ``vitals.yaml``; a limit
the reader could never meet is refused at start-up. No model is loaded: only the rule layers decide."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gateway.errors import ConfigurationError
from gateway.triage.policy import load_triage_policy
from gateway.triage.pressure import read_pressures
from gateway.triage.vitals import read_vitals
from tests.support.shipped_triage import POLICY, copy_policies
from tests.support.triage import flagged_rule, sign_groups


@pytest.mark.parametrize(
    ("text", "systolic", "diastolic"),
    [
        ("BP 82/50", 82, 50),
        ("b/p 150/95", 150, 95),
        ("190/120 mmHg", 190, 120),
        ("my bp machine says 210 over 125", 210, 125),
        ("the cuff reading was 200/118", 200, 118),
        ("top number 218 bottom 128", 218, 128),
        ("the top number was 190 and the bottom was 125", 190, 125),
        ("190/125", 190, 125),
        ("systolic 85", 85, None),
        ("top number 230", 230, None),
        ("bottom number 125", None, 125),
        ("diastolic 130", None, 130),
        ("BP 220/110/95", 220, 110),  # a clinician's third number (pulse, mean pressure)
        ("bp 190/120/ and a headache", 190, 120),
    ],
)
def test_a_reading_gives_its_numbers(text: str, systolic: int | None, diastolic: int | None) -> None:
    assert [(p.systolic, p.diastolic) for p in read_pressures(text)] == [(systolic, diastolic)]


@pytest.mark.parametrize(
    "text",
    [
        "on 12/10 I saw the GP",
        "bp check on 12/8 was fine",
        "bp checked on 12/10/2024",
        "blood pressure 01/05/2024",  # a date after a blood-pressure word: "8" is no bottom number
        "bp 12/80",  # a top number under 40 is no reading
        "it was 22/10",
        "it's a 60/40 chance",  # two-digit top numbers need a blood-pressure word or a unit
        "scored 150/200 on a test",
        "BP 60/80",  # a top number not above the bottom one
    ],
)
def test_what_is_not_a_reading_is_not_read(text: str) -> None:
    assert read_pressures(text) == []


@pytest.mark.parametrize(
    ("text", "news2", "crisis"),
    [
        ("my bp machine says 230 over 125", True, True),
        ("systolic 85 and dizzy", True, False),
        ("top number 225, I feel fine", True, True),
        ("BP 185/100", False, True),
        ("bottom number 125", False, True),
        ("BP 150/95", False, False),
    ],
)
def test_news2_and_the_crisis_sign_read_the_same_readings(text: str, news2: bool, crisis: bool) -> None:
    """A wording one of them reads, the other reads too (before #31 item 3's one reader, NEWS2 read no
    "machine says", no "top number" alone and no "systolic")."""
    triage = POLICY.triage
    outside = [r for r in read_vitals(text) if r.vital == "systolic_bp" and not 91 <= r.value < 220]
    assert bool(outside) == news2
    assert ("bp_crisis" in sign_groups(text, triage)) == crisis


@pytest.mark.parametrize(
    ("message", "rule"),
    [
        ("my bp machine says 230 over 125", "very_high_blood_pressure"),
        ("systolic 82, feeling faint", "low_blood_pressure"),
        ("the cuff says 200/125 and I've got a blinding headache", "hypertensive_emergency"),
        ("bp check on 12/8 was fine, mild headache today", None),
        ("BP 150/95 and a headache", None),
    ],
)
def test_decisions(message: str, rule: str | None) -> None:
    assert flagged_rule(message, POLICY) == rule


def _edited(tmp_path: Path, name: str, change: Any) -> Path:
    directory = copy_policies(tmp_path)
    path = directory / name
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return directory


def _crisis(**limits: int) -> Any:
    return lambda data: data["pressure_signs"]["bp_crisis"].update(**limits)


def _low_limit(data: dict[str, Any]) -> None:
    next(x for x in data["limits"] if x["vital"] == "systolic_bp" and "below" in x)["below"] = 35


def _high_limit(data: dict[str, Any]) -> None:
    next(x for x in data["limits"] if x["vital"] == "systolic_bp" and "at_or_above" in x)["at_or_above"] = 320


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (_crisis(systolic_at_or_above=35), "systolic_at_or_above"),
        (_crisis(systolic_at_or_above=300), "systolic_at_or_above"),
        (_crisis(diastolic_at_or_above=20), "diastolic_at_or_above"),
        (_crisis(diastolic_at_or_above=200), "diastolic_at_or_above"),
        (_low_limit, ".below"),
        (_high_limit, ".at_or_above"),
    ],
)  # fmt: skip
def test_a_limit_the_reader_cannot_reach_is_refused(tmp_path: Path, change: Any, key: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        load_triage_policy(_edited(tmp_path, "vitals.yaml", change))
    assert info.value.source.endswith("vitals.yaml")
    assert info.value.key.endswith(key), info.value.key
    assert "the reader reads" in str(info.value)


def test_limits_at_the_edges_of_what_is_read_are_accepted(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        data["pressure_signs"]["bp_crisis"].update(systolic_at_or_above=299, diastolic_at_or_above=21)

    signs = load_triage_policy(_edited(tmp_path, "vitals.yaml", change)).vitals.pressure_signs
    assert (signs["bp_crisis"].systolic_at_or_above, signs["bp_crisis"].diastolic_at_or_above) == (299, 21)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda d: d["terms"]["bp_crisis"].update(patterns=[r"\d+/\d+"]), "reads"),
        (lambda d: d["terms"]["bp_crisis"].pop("reads"), "words"),
    ],
)
def test_a_pressure_group_is_read_by_the_reader_only(tmp_path: Path, change: Any, key: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        load_triage_policy(_edited(tmp_path, "evidence.yaml", change))
    assert info.value.source.endswith("evidence.yaml")
    assert key in info.value.key, info.value.key
