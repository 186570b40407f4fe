"""What a check returns: a typed ``CheckResult`` (pass, missing or clash) naming the check."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gateway.domain import Conflict, ConflictKind
from gateway.vocabulary import VerdictCheck


class CheckOutcome(StrEnum):
    PASS = "pass"  # noqa: S105 (an outcome, not a password)
    MISSING = "missing"
    CLASH = "clash"


class CheckName(StrEnum):
    """The explicit checks; a verdict names one by the same value (``CheckResult.verdict_check``)."""

    NUMBER = "number_mismatch"
    NEGATION = "negation"
    ANTONYM = "antonym"
    QUANTIFIER = "quantifier"
    ENTITY = "entity_missing"
    ROLE = "role_order"
    FORM = "incomplete_claim"


@dataclass(frozen=True)
class CheckResult:
    name: CheckName
    outcome: CheckOutcome
    detail: str = ""
    conflict: Conflict | None = None
    """Clashes: what the claim says and what the evidence says instead (the verdict's ``conflict``)."""

    @property
    def passed(self) -> bool:
        return self.outcome is CheckOutcome.PASS

    @property
    def clash(self) -> bool:
        return self.outcome is CheckOutcome.CLASH

    @property
    def verdict_check(self) -> VerdictCheck:
        """The check as a verdict names it (``VerdictCheck`` has every ``CheckName`` value)."""
        return VerdictCheck(self.name.value)


def pass_result(name: CheckName) -> CheckResult:
    return CheckResult(name, CheckOutcome.PASS)


def clash(name: CheckName, kind: ConflictKind, detail: str, claim: str = "", source: str = "") -> CheckResult:
    """A CLASH naming its conflict: ``kind``, the claim's part and the evidence's part."""
    return CheckResult(name, CheckOutcome.CLASH, detail, Conflict(kind, detail, claim, source))
