"""Published vital-sign limits triage reads messages against: ``policies/triage/vitals.yaml``.

Early-warning limits (NEWS2 for adults, NICE NG143 for fever in under 5s, ...) by age, each naming its
source, the red flag it raises and how a patient is told about it; signs read with their duration; blood
pressures that are signs. Validated at start-up (a problem names the file and the dotted key).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, PositiveInt, with_config

from gateway.triage.pressure import DIASTOLIC_READ, SYSTOLIC_READ
from gateway.validation import FILE_CONFIG, compile_all, field_error, read_yaml, validate

Vital = Literal[
    "temperature_c",
    "heart_rate",
    "breathing_rate",
    "systolic_bp",
    "spo2",
    "glucose_mmol",
    "fever_days",
    "gcs",
    "seizure_minutes",
]
"""``fever_days``: how many days a fever stated in the same sentence has lasted ("a fever for 5 days");
``seizure_minutes`` (and any vital named in ``VitalsPolicy.sign_durations``): how long a sign told
beside a duration has lasted ("fitting for 6 minutes");
``gcs``: the Glasgow Coma Scale (3-15) a clinician states ("GCS 13", "GCS 14/15")."""


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class VitalLimit:
    """One published limit: a value of ``vital`` outside it, at an age in [min, max), is a red flag."""

    vital: Vital
    category: str
    """The red flag it raises (an emergency category, or a name of its own: ``label`` says it)."""
    label: str
    """How the patient and the clinician are told ("a temperature of 38 °C or more under 3 months")."""
    source: str
    """A key of ``sources``."""
    below: float | None = None
    at_or_above: float | None = None
    min_age_years: float = 0.0
    max_age_years: float = 200.0

    def __post_init__(self) -> None:
        if self.below is None and self.at_or_above is None:
            raise field_error(self, "below", "set below, at_or_above or both")
        if not 0.0 <= self.min_age_years < self.max_age_years:
            raise field_error(self, "min_age_years", "must be at least 0 and below max_age_years")
        if not self.label.strip():
            raise field_error(self, "label", "must not be empty")

    @property
    def any_age(self) -> bool:
        return self.min_age_years == 0.0 and self.max_age_years >= 120.0

    def covers(self, age: float) -> bool:
        return self.min_age_years <= age < self.max_age_years

    def outside(self, value: float) -> bool:
        return (self.below is not None and value < self.below) or (
            self.at_or_above is not None and value >= self.at_or_above
        )


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class SignDuration:
    """A sign whose duration published guidance reads against a limit ("a seizure lasting more than
    5 minutes": NHS, call 999): a duration beside one of ``words`` in its sentence is a reading."""

    words: tuple[str, ...]
    """Patterns naming the sign ("fitting", "seizure")."""
    unit: Literal["minutes", "hours", "days"]
    """The unit of the reading (and of its limits)."""
    habitual: tuple[str, ...] = ()
    """Patterns of a known pattern told as history ("his fits usually last 10 minutes"): such a
    sentence gives no reading."""
    longest: float | None = None
    """A duration above this (in ``unit``) is a span of illness with the sign, not one episode ("fits
    for 3 days"): no reading."""

    def __post_init__(self) -> None:
        if not self.words:
            raise field_error(self, "words", "must not be empty")
        compile_all(self, self.words, "words")
        compile_all(self, self.habitual, "habitual")

    @cached_property
    def word_patterns(self) -> tuple[re.Pattern[str], ...]:
        """``words`` compiled (any case), once per policy."""
        return _any_case(self.words)

    @cached_property
    def habit_patterns(self) -> tuple[re.Pattern[str], ...]:
        """``habitual`` compiled (any case), once per policy."""
        return _any_case(self.habitual)


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class PressureSign:
    """A blood pressure that is a sign (``evidence.yaml`` term group of the same name, ``reads:
    blood_pressure``): a reading counts when either number is at or above its limit (a number the reading
    does not give is not compared)."""

    systolic_at_or_above: PositiveInt
    diastolic_at_or_above: PositiveInt
    source: str
    """A key of ``sources``."""

    def met(self, systolic: int | None, diastolic: int | None) -> bool:
        """Whether a reading's top or bottom number is at or above its limit."""
        return (systolic is not None and systolic >= self.systolic_at_or_above) or (
            diastolic is not None and diastolic >= self.diastolic_at_or_above
        )


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class VitalsPolicy:
    sources: dict[str, str]
    """Citations of the tables the limits come from."""
    limits: tuple[VitalLimit, ...]
    adult_age_years: float = 16.0
    """A message that gives no age and names no child is read against the limits covering this age."""
    child_words: tuple[str, ...] = ()
    """Patterns naming a child without an age ("my baby", "toddler"): only limits for every age apply."""
    ages: dict[str, float] = field(default_factory=dict)
    """Ages (years) implied by words with no number ("newborn": 0.05)."""
    exertion: tuple[str, ...] = ()
    """Patterns of exercise: heart and breathing rates in such a message are not read against resting
    limits."""
    durations: dict[str, Annotated[float, Field(gt=0)]] = field(default_factory=dict)
    """Spans of time named without a count, read as durations (pattern -> days at least): "since last
    night" (1), "over the weekend" (2), "since Monday" (1: the weekday's distance depends on today)."""
    sign_durations: dict[Vital, SignDuration] = field(default_factory=dict)
    """Signs read with how long they have lasted, each as the vital it names (``seizure_minutes``)."""
    pressure_signs: dict[str, PressureSign] = field(default_factory=dict)
    """Term groups of ``evidence.yaml`` read as a blood pressure against these limits (``bp_crisis``)."""

    def __post_init__(self) -> None:
        compile_all(self, self.child_words, "child_words")
        for pattern in self.durations:
            compile_all(self, (pattern,), f"durations.{pattern}")
        compile_all(self, self.exertion, "exertion")
        for i, limit in enumerate(self.limits):
            if limit.source not in self.sources:
                raise field_error(self, f"limits[{i}].source", f"unknown source {limit.source!r}")
        for word in self.ages:
            compile_all(self, (word,), f"ages.{word}")
        for name, sign in self.pressure_signs.items():
            if sign.source not in self.sources:
                raise field_error(self, f"pressure_signs.{name}.source", f"unknown source {sign.source!r}")
            _readable(
                self, f"pressure_signs.{name}.systolic_at_or_above", sign.systolic_at_or_above, SYSTOLIC_READ
            )
            _readable(
                self,
                f"pressure_signs.{name}.diastolic_at_or_above",
                sign.diastolic_at_or_above,
                DIASTOLIC_READ,
            )
        for i, limit in enumerate(self.limits):
            for key in ("below", "at_or_above"):
                if limit.vital == "systolic_bp" and (value := getattr(limit, key)) is not None:
                    _readable(self, f"limits[{i}].{key}", value, SYSTOLIC_READ)

    @cached_property
    def child_patterns(self) -> tuple[re.Pattern[str], ...]:
        """``child_words`` compiled (any case), once per policy."""
        return _any_case(self.child_words)

    @cached_property
    def exertion_patterns(self) -> tuple[re.Pattern[str], ...]:
        """``exertion`` compiled (any case), once per policy."""
        return _any_case(self.exertion)


def _any_case(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


def _readable(policy: VitalsPolicy, key: str, value: float, read: tuple[int, int]) -> None:
    """A blood-pressure limit of ``policy`` lies inside the numbers the reader reads (``pressure.py``):
    one outside them could never be met, or would be met by every reading."""
    if not read[0] < value <= read[1]:
        reason = f"must lie inside the numbers the reader reads ({read[0] + 1}-{read[1]} mmHg), got {value:g}"
        raise field_error(policy, key, reason)


def load_vitals_policy(path: Path) -> VitalsPolicy:
    return validate(VitalsPolicy, read_yaml(path), str(path))
