"""The values the harness passes around, and the append-only log that makes a run resumable.

One record per (system, question id): what the system answered (``SystemAnswer``) and how the answer
checked out (``AnswerCheck``). Records are appended to a JSONL file and fsync'd one by one, so a run
that crashes loses at most the question it was working on; on resume the keys already in the file
are skipped and a half-written last line is cut off. The log is read back by pydantic (``_RECORD``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from gateway.domain import VerdictLabel, VerificationStatus
from gateway.validation import configuration_error


class ExpectedScope(StrEnum):
    """The label a question set gives a question (ASTRID's operating contexts)."""

    IN_SCOPE = "in_scope"
    OUT_OF_SCOPE = "out_of_scope"
    NON_CLINICAL = "non_clinical"
    EMERGENCY = "emergency"

    @property
    def should_decline(self) -> bool:
        return self is not ExpectedScope.IN_SCOPE


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    scope: ExpectedScope | None = None
    """Expected scope; None when the question set does not say (no refusal accuracy then)."""
    document_id: str | None = None
    """The knowledge-base document that answers it, when known (enables the retrieval hit rate)."""
    topic: str | None = None


@dataclass(frozen=True)
class SourceRef:
    """One numbered source of an answer: a URL to resolve, a text to check against, or both."""

    number: int
    url: str | None = None
    title: str | None = None
    text: str | None = None
    document_id: str | None = None


@dataclass(frozen=True)
class SystemAnswer:
    """What one system answered to one question, before any checking."""

    system: str
    question_id: str
    answer: str
    sources: tuple[SourceRef, ...] = ()
    refused: bool = False
    refusal_reason: str | None = None
    """The gateway's refusal reason, or ``detected`` when a refusal was recognised in free text."""
    latency_seconds: float | None = None
    best_relevance: float | None = None
    """Gateway only: relevance of the best retrieved passage (None when nothing was retrieved)."""
    retrieved_documents: tuple[str, ...] = ()
    error: str | None = None
    """The system failed to answer at all (for example the raw upstream was unreachable)."""
    human_labels: tuple[HumanLabel, ...] = ()
    """Replay only: per-claim support labels a person gave (empty when the replay has none)."""


@dataclass(frozen=True)
class HumanLabel:
    """A person's support label for one claim of a recorded answer (a labelled replay): the claim's
    characters ``answer[start:end]`` and whether its cited sources support it. The harness measures
    itself against these (``gateway.evaluation.agreement``)."""

    start: int
    end: int
    supported: bool


class UrlStatus(StrEnum):
    FETCHED = "fetched"
    KNOWLEDGE_BASE = "knowledge_base"
    INVALID = "invalid"


@dataclass(frozen=True)
class UrlCheck:
    url: str
    status: UrlStatus
    reason: str = ""

    @property
    def valid(self) -> bool:
        return self.status is not UrlStatus.INVALID


@dataclass(frozen=True)
class StatementCheck:
    text: str
    kind: str
    sentence_index: int
    source_numbers: tuple[int, ...] = ()
    verdict: str | None = None
    """supported / unsupported / contradicted for claims; None for conversational statements."""
    score: float | None = None
    check: str = ""
    reason: str = ""
    status: str | None = None
    """What verification established (``VerificationStatus``): supported / contradicted / unsupported
    (decided) / not_verified (undecided). None for conversational statements, and in records written
    before the status existed (then ``outcome`` reads the verdict as decided)."""
    start: int | None = None
    """The statement's characters in the answer, ``answer[start:end]`` (None in older records)."""
    end: int | None = None

    @property
    def supported(self) -> bool:
        return self.verdict == VerdictLabel.SUPPORTED

    @property
    def outcome(self) -> str | None:
        """The status, or for older records the verdict (their checker decided every claim)."""
        return self.status if self.status is not None else self.verdict

    @property
    def undecided(self) -> bool:
        return self.outcome == VerificationStatus.NOT_VERIFIED.value

    @property
    def possibly_supported(self) -> bool:
        """Supported, or left undecided: the upper end of a support range."""
        return self.supported or self.undecided


@dataclass(frozen=True)
class AnswerCheck:
    """How one answer checked out. Refused answers and failures are not scored (``scored`` False)."""

    scored: bool
    statements: tuple[StatementCheck, ...] = ()
    urls: tuple[UrlCheck, ...] = ()
    emergency_directed: bool = False
    """The answer tells the patient to get emergency help (999/911/112, A&E, an ambulance)."""
    checker: str = ""
    error: str | None = None
    """The checker could not decide (the answer is then not scored)."""

    @property
    def claims(self) -> tuple[StatementCheck, ...]:
        return tuple(s for s in self.statements if s.verdict is not None)

    @property
    def supported_claims(self) -> int:
        return sum(1 for s in self.claims if s.supported)

    @property
    def undecided_claims(self) -> int:
        return sum(1 for s in self.claims if s.undecided)

    @property
    def response_supported(self) -> bool | None:
        """Every claim supported; None when the answer makes no claim."""
        claims = self.claims
        return None if not claims else all(c.supported for c in claims)

    @property
    def response_possibly_supported(self) -> bool | None:
        """Every claim supported or undecided (none contradicted or decided unsupported): the upper end
        of response-level support; None when the answer makes no claim."""
        claims = self.claims
        return None if not claims else all(c.possibly_supported for c in claims)

    def informative_sentences(self) -> dict[int, bool]:
        """Per informative sentence (one holding a claim): grounded when all its claims are supported."""
        grounded: dict[int, bool] = {}
        for claim in self.claims:
            grounded[claim.sentence_index] = grounded.get(claim.sentence_index, True) and claim.supported
        return grounded


@dataclass(frozen=True)
class EvalRecord:
    question: Question
    answer: SystemAnswer
    check: AnswerCheck

    @property
    def key(self) -> tuple[str, str]:
        return (self.answer.system, self.question.id)

    def to_json(self) -> dict[str, Any]:
        return {"system": self.answer.system, "question_id": self.question.id, **asdict(self)}


@dataclass
class RecordLog:
    """Append-only JSONL of EvalRecords keyed by (system, question id); every append is fsync'd."""

    path: Path
    _keys: set[tuple[str, str]] = field(default_factory=set)

    @classmethod
    def open(cls, path: Path) -> RecordLog:
        """Open (creating) the log; cuts off a half-written last line left by a crash."""
        path.parent.mkdir(parents=True, exist_ok=True)
        log = cls(path)
        if path.exists():
            _truncate_partial_tail(path)
            for record in log.read():
                log._keys.add(record.key)
        else:
            path.touch()
        return log

    def __contains__(self, key: tuple[str, str]) -> bool:
        return key in self._keys

    def append(self, record: EvalRecord) -> None:
        if record.key in self._keys:
            raise ValueError(f"record {record.key} is already in {self.path}")
        line = json.dumps(record.to_json(), ensure_ascii=False, sort_keys=True) + "\n"
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        self._keys.add(record.key)

    def read(self) -> Iterator[EvalRecord]:
        with self.path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record: EvalRecord = _RECORD.validate_json(line)
                except ValidationError as err:
                    raise configuration_error(err, EvalRecord, str(self.path), f"line {number}") from None
                yield record


_RECORD: TypeAdapter[EvalRecord] = TypeAdapter(EvalRecord)
"""A line of the log, decoded and validated by pydantic (keys it does not name, such as the line's
``system`` and ``question_id``, ignored; fields added since an older record was written take their
defaults); a line that does not fit is a ConfigurationError naming the file, the line and the field."""


def _truncate_partial_tail(path: Path) -> None:
    """A crash mid-write can leave a last line without its newline: drop it (it is recomputed)."""
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    with path.open("r+b") as handle:
        handle.truncate(cut)
        handle.flush()
        os.fsync(handle.fileno())
