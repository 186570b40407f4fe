"""What a check returns: a typed ``CheckResult`` (pass, missing or clash) naming the check."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class CheckOutcome(StrEnum):
    PASS = "pass"  # noqa: S105 (an outcome, not a password)
    MISSING = "missing"
    CLASH = "clash"


class CheckName(StrEnum):
    NUMBER = "number_mismatch"
    NEGATION = "negation"
    ANTONYM = "antonym"
    QUANTIFIER = "quantifier"
    ENTITY = "entity_missing"


@dataclass(frozen=True)
class CheckResult:
    name: CheckName
    outcome: CheckOutcome
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.outcome is CheckOutcome.PASS

    @property
    def clash(self) -> bool:
        return self.outcome is CheckOutcome.CLASH


def pass_result(name: CheckName) -> CheckResult:
    return CheckResult(name, CheckOutcome.PASS)
