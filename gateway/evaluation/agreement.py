"""The harness measured against people: per-claim agreement with human support labels.

A labelled replay gives, per recorded answer, the claims a person judged and whether the cited
sources support each (``SystemAnswer.human_labels``). Each claim the harness checked is matched to the
labelled claim its characters overlap most; a labelled claim then gets the harness's call from its
statements: ``contradicted`` if any is contradicted, else ``unsupported`` if any is decided
unsupported, else ``supported`` if all are supported, else ``not_verified`` (undecided); a labelled
claim the splitter found conversational (no statement checked) is ``not_a_claim``.

What is reported, so that an aggregate cannot hide errors that cancel:

- where the harness decides (supported, contradicted or unsupported): the share of decided claims,
  agreement with the people, and balanced accuracy (the mean of the recall of supported and of
  not-supported claims among the decided ones), with the precision of each call;
- ``forced``: the same if every undecided claim counted as not supported (what a checker forced to
  answer yes or no would report);
- whether the human statement- and response-level support lie inside the ranges the harness reports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from gateway.evaluation.records import EvalRecord, HumanLabel, StatementCheck


class Call(StrEnum):
    """What the harness said about one labelled claim."""

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    UNSUPPORTED = "unsupported"
    NOT_VERIFIED = "not_verified"
    NOT_A_CLAIM = "not_a_claim"
    """The splitter found the labelled text conversational: nothing was checked."""
    NOT_CHECKED = "not_checked"
    """The answer was not scored (refused, or the checker failed)."""

    @property
    def decided(self) -> bool:
        return self in (Call.SUPPORTED, Call.CONTRADICTED, Call.UNSUPPORTED)


@dataclass(frozen=True)
class LabelledClaim:
    question_id: str
    human_supported: bool
    call: Call
    label: HumanLabel | None = None
    statements: tuple[StatementCheck, ...] = ()
    """The harness's statements matched to this claim (what its call was made from)."""


def _overlap(statement: StatementCheck, label: HumanLabel) -> int:
    if statement.start is None or statement.end is None:
        return 0
    return max(0, min(statement.end, label.end) - max(statement.start, label.start))


def _call(statements: Sequence[StatementCheck]) -> Call:
    outcomes = {s.outcome for s in statements}
    if not statements:
        return Call.NOT_A_CLAIM
    if Call.CONTRADICTED.value in outcomes:
        return Call.CONTRADICTED
    if Call.UNSUPPORTED.value in outcomes:
        return Call.UNSUPPORTED
    if outcomes == {Call.SUPPORTED.value}:
        return Call.SUPPORTED
    return Call.NOT_VERIFIED


def labelled_claims(records: Sequence[EvalRecord]) -> list[LabelledClaim]:
    """Every human-labelled claim of ``records`` with the harness's call on it."""
    found: list[LabelledClaim] = []
    for record in records:
        labels = record.answer.human_labels
        if not labels:
            continue
        if not record.check.scored:
            found.extend(LabelledClaim(record.question.id, h.supported, Call.NOT_CHECKED, h) for h in labels)
            continue
        matched: dict[int, list[StatementCheck]] = {i: [] for i in range(len(labels))}
        for statement in record.check.claims:
            overlaps = [_overlap(statement, label) for label in labels]
            best = max(range(len(labels)), key=lambda i: overlaps[i])
            if overlaps[best] > 0:
                matched[best].append(statement)
        found.extend(
            LabelledClaim(record.question.id, label.supported, _call(matched[i]), label, tuple(matched[i]))
            for i, label in enumerate(labels)
        )
    return found


@dataclass(frozen=True)
class Confusion:
    """Human-supported / not-supported claims against the harness's yes / no."""

    supported_yes: int = 0
    supported_no: int = 0
    unsupported_yes: int = 0
    unsupported_no: int = 0

    @property
    def total(self) -> int:
        return self.supported_yes + self.supported_no + self.unsupported_yes + self.unsupported_no

    @property
    def agreement(self) -> float | None:
        return _share(self.supported_yes + self.unsupported_no, self.total)

    @property
    def supported_recall(self) -> float | None:
        return _share(self.supported_yes, self.supported_yes + self.supported_no)

    @property
    def not_supported_recall(self) -> float | None:
        return _share(self.unsupported_no, self.unsupported_yes + self.unsupported_no)

    @property
    def balanced_accuracy(self) -> float | None:
        """Mean of both recalls; None unless both classes are present."""
        a, b = self.supported_recall, self.not_supported_recall
        return None if a is None or b is None else round((a + b) / 2, 4)

    def to_json(self) -> dict[str, Any]:
        return {
            "claims": self.total,
            "agreement": self.agreement,
            "balanced_accuracy": self.balanced_accuracy,
            "supported_recall": self.supported_recall,
            "not_supported_recall": self.not_supported_recall,
            "confusion": {
                "human_supported": {"harness_yes": self.supported_yes, "harness_no": self.supported_no},
                "human_not_supported": {
                    "harness_yes": self.unsupported_yes,
                    "harness_no": self.unsupported_no,
                },
            },
        }


def _share(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def confusion(claims: Sequence[LabelledClaim], *, undecided_as_no: bool) -> Confusion:
    """Decided claims only, or (``undecided_as_no``) every checked claim with undecided read as no."""
    counts = [0, 0, 0, 0]
    for claim in claims:
        if claim.call in (Call.NOT_A_CLAIM, Call.NOT_CHECKED):
            continue
        if not claim.call.decided and not undecided_as_no:
            continue
        yes = claim.call is Call.SUPPORTED
        counts[(0 if claim.human_supported else 2) + (0 if yes else 1)] += 1
    return Confusion(*counts)


def _inside(value: float | None, low: float | None, high: float | None) -> bool | None:
    if value is None or low is None or high is None:
        return None
    return low <= value <= high


def agreement_report(
    records: Sequence[EvalRecord], ranges: Mapping[str, Mapping[str, float | None]]
) -> dict[str, Any] | None:
    """The harness against the human labels of ``records`` (None when no record carries labels).

    ``ranges`` is the system's reported ``support_ranges`` (``metrics.support_ranges``)."""
    claims = labelled_claims(records)
    if not claims:
        return None
    calls = {call.value: 0 for call in Call}
    for claim in claims:
        calls[claim.call.value] += 1
    checked = [c for c in claims if c.call not in (Call.NOT_A_CLAIM, Call.NOT_CHECKED)]
    decided = [c for c in checked if c.call.decided]
    precision = {
        call.value: _share(
            sum(1 for c in claims if c.call is call and c.human_supported == (call is Call.SUPPORTED)),
            calls[call.value],
        )
        for call in (Call.SUPPORTED, Call.CONTRADICTED, Call.UNSUPPORTED)
    }
    human_statement = _share(sum(c.human_supported for c in claims), len(claims))
    answers: dict[str, bool] = {}
    for claim in claims:
        answers[claim.question_id] = answers.get(claim.question_id, True) and claim.human_supported
    human_response = _share(sum(answers.values()), len(answers))
    statement, response = ranges.get("statement_support", {}), ranges.get("response_support", {})
    return {
        "labelled_claims": len(claims),
        "labelled_answers": len(answers),
        "calls": calls,
        "decided_share": _share(len(decided), len(checked)),
        "where_decided": confusion(claims, undecided_as_no=False).to_json(),
        "precision": precision,
        "forced": confusion(claims, undecided_as_no=True).to_json(),
        "human_statement_support": human_statement,
        "human_response_support": human_response,
        "statement_support_inside_range": _inside(
            human_statement, statement.get("low"), statement.get("high")
        ),
        "response_support_inside_range": _inside(human_response, response.get("low"), response.get("high")),
    }
