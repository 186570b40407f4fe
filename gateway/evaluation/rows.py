"""The rows an operator gives ``trust-gateway eval``: a question set's lines and a replay file's lines.

Each JSON line is validated by pydantic into one of these dataclasses (keys they do not name are
ignored, as they always were); a row that does not fit is a ConfigurationError naming the file, the
line and the field (``q.jsonl: line 3.scope: must be one of ...``), through
``gateway.validation.configuration_error``. Checks across fields (a source needs a url or a text; a
labelled claim must be in the answer) are ``__post_init__`` checks, named at their field the same way.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import BeforeValidator, StrictBool, StrictInt, StringConstraints, TypeAdapter, ValidationError

from gateway.evaluation.records import ExpectedScope, HumanLabel, Question, SourceRef
from gateway.validation import configuration_error, field_error

T = TypeVar("T")

_SCOPE_ALIASES = {"out-of-scope": "out_of_scope", "non-clinical": "non_clinical", "in-scope": "in_scope"}


def question_id(text: str) -> str:
    return "q-" + hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:12]


def _scope(value: Any) -> ExpectedScope | None:
    """A scope label, its hyphenated aliases and any case accepted; empty is no label."""
    if value in (None, ""):
        return None
    normalised = _SCOPE_ALIASES.get(str(value).strip().lower(), str(value).strip().lower())
    try:
        return ExpectedScope(normalised)
    except ValueError:
        allowed = ", ".join(s.value for s in ExpectedScope)
        raise ValueError(f"must be one of {allowed}, got {value!r}") from None


def _optional_str(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _number_or_none(value: Any) -> float | None:
    """A recorded latency: any JSON number; anything else is no latency (as it always was)."""
    return float(value) if isinstance(value, int | float) else None


Scope = Annotated[ExpectedScope | None, BeforeValidator(_scope)]
OptionalText = Annotated[str | None, BeforeValidator(_optional_str)]


@dataclass(frozen=True, kw_only=True)
class QuestionRow:
    """One line of a question set; only ``question`` is required."""

    question: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
    id: OptionalText = None
    """Defaults to a hash of the question text, so resumed runs key the same question the same way."""
    scope: Scope = None
    expected_scope: Scope = None
    """Another name for ``scope`` (read when ``scope`` is not given)."""
    document_id: OptionalText = None
    topic: OptionalText = None

    def to_question(self) -> Question:
        return Question(
            id=self.id or question_id(self.question),
            question=self.question,
            scope=self.scope if self.scope is not None else self.expected_scope,
            document_id=self.document_id,
            topic=self.topic,
        )


def _source_object(value: Any) -> Any:
    """A source given as a string: a URL (``http(s)://``) or a text to check against."""
    if isinstance(value, str):
        is_url = value.strip().lower().startswith(("http://", "https://"))
        return {"url": value.strip()} if is_url else {"text": value}
    return value


@dataclass(frozen=True, kw_only=True)
class ReplaySource:
    """A numbered source of a recorded answer: its number (``id``; default: its position), a URL to
    resolve, a text to check against, or both."""

    id: StrictInt | None = None
    url: str | None = None
    title: str | None = None
    text: str | None = None

    def __post_init__(self) -> None:
        if not self.url and not self.text:
            raise field_error(self, "", "needs a url or a text")


@dataclass(frozen=True, kw_only=True)
class LabelRow:
    """A person's support label for one claim of the recorded answer."""

    claim: str
    """The claim's text as it stands in the answer, after the previous labelled claim."""
    supported: StrictBool

    def __post_init__(self) -> None:
        if not self.claim.strip():
            raise field_error(self, "claim", "must be a non-empty string")


@dataclass(frozen=True, kw_only=True)
class ReplayRow(QuestionRow):
    """One line of a replay file: a question with the answer a system gave it."""

    answer: str
    """The recorded answer text."""
    sources: tuple[Annotated[ReplaySource, BeforeValidator(_source_object)], ...] = ()
    refused: StrictBool | None = None
    """Whether the system refused; when absent, a refusal is recognised in the text."""
    latency_seconds: Annotated[float | None, BeforeValidator(_number_or_none)] = None
    human_labels: tuple[LabelRow, ...] = ()
    """Per-claim support labels, in answer order (``gateway.evaluation.agreement``)."""

    def __post_init__(self) -> None:
        self.labels()

    def source_refs(self) -> tuple[SourceRef, ...]:
        return tuple(
            SourceRef(s.id if s.id is not None else position, s.url, s.title, s.text)
            for position, s in enumerate(self.sources, start=1)
        )

    def labels(self) -> tuple[HumanLabel, ...]:
        """Each labelled claim's characters in the answer, found after the previous one."""
        labels: list[HumanLabel] = []
        cursor = 0
        for position, label in enumerate(self.human_labels):
            start = self.answer.find(label.claim, cursor)
            if start < 0:
                where = f"human_labels[{position}].claim"
                raise field_error(self, where, "is not in the answer (after the previous labelled claim)")
            cursor = start + len(label.claim)
            labels.append(HumanLabel(start, cursor, label.supported))
        return tuple(labels)


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {
    QuestionRow: TypeAdapter(QuestionRow),
    ReplayRow: TypeAdapter(ReplayRow),
}


def read_row(cls: type[T], data: Any, source: str, line: int) -> T:
    """``data`` (a parsed JSON line) as a ``cls`` row; a ConfigurationError naming ``source``, the line
    and the field otherwise."""
    try:
        row: T = _ADAPTERS[cls].validate_python(data)
    except ValidationError as err:
        raise configuration_error(err, cls, source, f"line {line}") from None
    return row
