"""The audit record's schema, stated once: what ``pipeline.recording`` writes and the pages read back.

One ``AuditRecord`` per request, stored as JSON text by the ``AuditStore`` (``base.py``), encoded with
``msgspec.json.encode`` and decoded with ``load_record`` into these frozen types, so readers use typed
attributes instead of ``dict.get``. The JSON is the one the gateway always wrote (field names, order
and shapes; ``tests/fixtures/audit/`` holds records written before this schema existed, and a test
decodes them):

- the nested values are the pipeline's own frozen dataclasses (``Triage``, ``Draft``, ``Statement``,
  ``Verdict``, ``ClaimResult``, ``ClaimReport``, ``TrustSummary``), except a passage, whose embedding
  vectors are never stored (``PassageRecord``: ``sentence_vectors`` is always null);
- the provisional row (``status: "incomplete"``) has only the request's fields; the fields it lacks
  are ``UNSET``, which msgspec leaves out of the JSON, and ``status`` / ``stream`` are ``UNSET`` (so
  absent) in a completed record, as before;
- a streamed answer's row says ``status: "delivering"`` while it is sent: first the provisional
  fields with ``sent`` (the text committed before each piece left), then the whole record; the final
  write leaves ``status`` out again;
- ``trust.source_tiers`` (each source's tier as resolved at badge time) is new: a record written
  before it decodes with ``()``, and readers fall back to ``tiers.source_tier``;
- ``trust.operating_point`` (the verifier and thresholds that checked the claims, as ``/v1/verify``
  names them; ``TrustReport.operating_point``) is new too: a record written before it decodes with
  ``""``, which the pages show as not recorded.

A stored record that does not match decodes to an ``UnreadableRecord`` naming where and why, which the
pages show for that request instead of failing.

A verdict's ``method``, ``check`` and ``failure`` are enums of ``gateway.vocabulary`` now; they were any
string before, so a stored value no member names (a test double's verifier, a retired check) still
decodes, as an *unlisted* value keeping the stored string (``tolerant_decoding``), and encodes back to
what was written (``tests/fixtures/audit/vocabulary_values.json``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from gateway.audit.provenance import RecordProvenance
from gateway.domain import (
    ClaimReport,
    ClaimResult,
    Draft,
    Message,
    Passage,
    SourceTier,
    Span,
    Statement,
    Triage,
    TrustReport,
    TrustSummary,
    Verdict,
)
from gateway.tool_calls import ToolCall
from gateway.vocabulary import tolerant_decoding

INCOMPLETE = "incomplete"
"""``status`` of the provisional record, until the request completes it: nothing was sent."""
DELIVERING = "delivering"
"""``status`` (and outcome) of a streamed answer's record while it is being sent: the row holds, in
``sent``, every piece committed before it left (write-ahead; the last may not have arrived) and, once
the answer is complete, the whole record; the final outcome replaces it only after the last chunk and
``[DONE]`` were written to the connection (``gateway.pipeline.recording.Delivery``)."""
UNFINISHED = (INCOMPLETE, DELIVERING)
"""Outcomes of a row whose request never finished (the process died, or the audit store failed)."""


class PassageRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A retrieved passage as stored: ``Passage`` without its vectors (always null here)."""

    id: str
    document_id: str
    text: str
    title: str
    url: str
    org: str
    tier: str
    """The tier the knowledge manifest names (may be empty); the resolved one is in ``source_tiers``."""
    reviewed_on: dt.date | None
    score: float
    doc_type: str = "article"
    sentence_spans: tuple[Span, ...] = ()
    sentence_vectors: None = None

    @classmethod
    def of(cls, passage: Passage) -> PassageRecord:
        """The passage's fields by name, its vectors dropped; its score is a Python float already
        (the knowledge store's boundary, ``knowledge.records.record_passage``, makes it one)."""
        return cls(
            id=passage.id,
            document_id=passage.document_id,
            text=passage.text,
            title=passage.title,
            url=passage.url,
            org=passage.org,
            tier=passage.tier,
            reviewed_on=passage.reviewed_on,
            score=passage.score,
            doc_type=passage.doc_type,
            sentence_spans=passage.sentence_spans,
        )

    def passage(self) -> Passage:
        return msgspec.convert(self, type=Passage, from_attributes=True)


class TrustRecord(msgspec.Struct, frozen=True, kw_only=True):
    """The trust report as stored: per-claim reports with badges, the summary, the sources."""

    claims: tuple[ClaimReport, ...]
    summary: TrustSummary
    sources: tuple[PassageRecord, ...]
    source_tiers: tuple[SourceTier, ...] = ()
    """Each source's tier as resolved at badge time; ``()`` in records written before it existed and
    for reports built without badging (a failed stage's refusal)."""
    operating_point: str = ""
    """The operating point of the verifier that checked the claims (``TrustReport.operating_point``);
    ``""`` in records written before it existed."""

    @classmethod
    def of(cls, report: TrustReport) -> TrustRecord:
        return cls(
            claims=report.claims,
            summary=report.summary,
            sources=tuple(PassageRecord.of(p) for p in report.sources),
            source_tiers=report.source_tiers,
            operating_point=report.operating_point,
        )

    def source_tier(self, number: int) -> SourceTier | None:
        """The resolved tier of source ``number`` (1-based), when the record carries one."""
        return self.source_tiers[number - 1] if 1 <= number <= len(self.source_tiers) else None


class TimingsRecord(msgspec.Struct, frozen=True, kw_only=True):
    """Seconds per part of the request (see ``pipeline.result.Timings``)."""

    total: float
    upstream: float
    retrieval: float
    verification: float


class ErrorRecord(msgspec.Struct, frozen=True, kw_only=True):
    """The failed stage's error: its class name, message and the stage it failed in."""

    type: str
    message: str
    stage: str


class ToolCallsRecord(msgspec.Struct, frozen=True, kw_only=True):
    """The tool calls the model made (names and arguments as written: they may hold patient data, and
    are sealed with the rest of the record when a key is set), and whether the client was handed them."""

    calls: tuple[ToolCall, ...]
    returned: bool


class AuditRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One request's audit record. Fields after ``metadata`` are ``UNSET`` in a provisional record."""

    request_id: str
    created_at: str
    status: str | UnsetType = UNSET
    """``incomplete`` in the provisional record, ``delivering`` while a streamed answer is sent; absent
    once the request completed."""
    question: str
    messages: tuple[Message, ...]
    model: str
    stream: bool | UnsetType = UNSET
    """Provisional record only."""
    user: str | None
    """Kept only when ``store_patient_identifiers`` is on."""
    metadata: dict[str, str] | None
    triage: Triage | UnsetType = UNSET
    passages: tuple[PassageRecord, ...] | UnsetType = UNSET
    best_relevance: float | UnsetType | None = UNSET
    draft: Draft | UnsetType | None = UNSET
    statements: tuple[Statement, ...] | UnsetType = UNSET
    verdicts: tuple[Verdict, ...] | UnsetType = UNSET
    cleanup: tuple[ClaimResult, ...] | UnsetType = UNSET
    answer: str | UnsetType = UNSET
    trust: TrustRecord | UnsetType = UNSET
    timings: TimingsRecord | UnsetType = UNSET
    error: ErrorRecord | UnsetType | None = UNSET
    interruption: str | UnsetType | None = UNSET
    """``client_disconnected`` or ``cancelled`` when the run was stopped before it finished."""
    sent: str | UnsetType = UNSET
    """The text handed to the connection (streamed answers; for a ``delivering`` row, every piece
    committed before it left)."""
    upstream: str | UnsetType = UNSET
    verifier: str | UnsetType = UNSET
    context: str | UnsetType = UNSET
    provenance: RecordProvenance | UnsetType = UNSET
    """Gateway version, policy files' hash, passages' versions (``gateway.audit.provenance``); absent in
    provisional records and in records written before it existed."""
    trace_id: str | UnsetType = UNSET
    """The OpenTelemetry trace id of the request, when it was traced (absent otherwise)."""
    tool_calls: ToolCallsRecord | UnsetType = UNSET
    """The model's tool calls (absent when it made none; docs/integrator.md, "Tools")."""

    @property
    def complete(self) -> bool:
        """False for the provisional record (the request never completed it)."""
        return self.status is UNSET

    @property
    def operating_point(self) -> str:
        """The operating point of the verifier that checked its claims (``TrustRecord.operating_point``);
        empty when it names none (a provisional record, or one written before it was recorded)."""
        return self.trust.operating_point if self.trust is not UNSET else ""


@dataclass(frozen=True)
class UnreadableRecord:
    """A stored record that is not JSON or does not match ``AuditRecord``: shown as such, per request."""

    request_id: str
    reason: str
    """msgspec's message, naming the path of the offending field (``$.trust.claims[0].text``)."""
    text: str
    """The stored text, as written."""


def encode_record(record: AuditRecord) -> bytes:
    """The record as UTF-8 JSON. Text the gateway did not write (a model's draft, a client's ``user``)
    may carry an unpaired UTF-16 surrogate, which is replaced by U+FFFD so that it can be stored."""
    try:
        return _ENCODER.encode(record)
    except UnicodeEncodeError:
        return _ENCODER.encode(scrub(msgspec.to_builtins(record, enc_hook=_enc_hook)))


def _enc_hook(value: Any) -> Any:
    """numpy scalars (scores) as numbers; anything else unforeseen as its ``str``, as ever."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return None
    return str(value)


_ENCODER = msgspec.json.Encoder(enc_hook=_enc_hook)


def load_record(request_id: str, text: str | bytes) -> AuditRecord | UnreadableRecord:
    """The stored record, typed; an ``UnreadableRecord`` when it does not match the schema. A value of a
    vocabulary that no member names decodes as written (see the module docstring)."""
    try:
        with tolerant_decoding():
            return _DECODER.decode(text)
    except msgspec.DecodeError as err:  # ValidationError included
        raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        return UnreadableRecord(request_id, str(err), raw)


_DECODER = msgspec.json.Decoder(AuditRecord)


def scrub(value: Any) -> Any:
    """The value with every unpaired UTF-16 surrogate replaced by U+FFFD, so it can be stored as UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return value
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    return value


def builtins(value: object) -> Any:
    """Plain JSON values of a part of the record (``None`` for an ``UNSET`` part), for display."""
    return None if value is UNSET else msgspec.to_builtins(value)


def unset_to(value: Any, default: Any) -> Any:
    """``default`` for an ``UNSET`` field of a provisional record, else the value."""
    return default if value is UNSET else value


def tuple_or_empty(value: Sequence[Any] | UnsetType) -> tuple[Any, ...]:
    return () if isinstance(value, UnsetType) else tuple(value)
