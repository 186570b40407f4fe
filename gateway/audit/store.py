"""The audit store's contract, shared by every backend (SQLite embedded, PostgreSQL for replicas).

A backend keeps one row per request: the columns the audit list filters on, plus the whole record
(question, passages, draft, verdicts, cleanup actions, answer, trust report) as JSON text, exactly as
written: the pipeline hands it encoded (``gateway.audit.record``: the schema and its decoder); a
mapping is encoded by the backend. The store itself never interprets the record. ``write`` is an
idempotent upsert keyed by the request id, committed durably before it returns; every driver
failure is raised as ``AuditError`` (never the driver's own exception), so the pipeline
can refuse to answer without a trace. *When* to record is the pipeline's decision
(``gateway.pipeline.recording``), not the store's.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from gateway.audit.columns import ROW_COLUMNS

if TYPE_CHECKING:
    import gateway.audit.ledger as ledger
    from gateway.audit.chain import ChainHead, Checkpoint

T = TypeVar("T")

RecordJson = Mapping[str, Any] | bytes
"""A record as a backend takes it: UTF-8 JSON (``record.encode_record``), or a mapping to encode."""


@dataclass(frozen=True)
class AuditRow:
    id: str
    created_at: str
    outcome: str
    scope: str
    refused: bool
    reason: str | None
    claims: int
    rewritten: int
    removed: int
    question: str
    answer: str


@dataclass(frozen=True)
class AuditFilter:
    outcome: str | None = None
    refused: bool | None = None
    rewritten: bool | None = None
    removed: bool | None = None
    emergency: bool | None = None
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    limit: int = 100
    offset: int = 0


class AuditStore(Protocol):
    """One audit trail. Sync methods may block (run them off the event loop); ``write`` does that."""

    backend: str
    """Bounded label of the backend: ``sqlite`` or ``postgres``."""

    async def write(self, row: Mapping[str, Any], record: RecordJson) -> None:
        """Upsert the request's row and record, committed when this returns; AuditError otherwise."""
        ...

    def write_sync(self, row: Mapping[str, Any], record: RecordJson) -> None: ...

    def list(self, flt: AuditFilter) -> list[AuditRow]:
        """Rows matching ``flt``, newest first."""
        ...

    def get(self, request_id: str) -> dict[str, Any] | None:
        """The stored record of one request as plain JSON values, or None (the export, scripts)."""
        ...

    def get_text(self, request_id: str) -> str | None:
        """The stored record's text exactly as written, or None (``record.load_record`` types it)."""
        ...

    def count(self) -> int: ...

    def check(self) -> None:
        """Raise AuditError when the store cannot be read and written now (used by ``/readyz``)."""
        ...

    def close(self) -> None: ...

    # --- the tamper-evident chain, retention, legal holds and the access log (``ledger``) -------

    def chain_head(self) -> ChainHead:
        """The newest chain entry's ``seq`` and hash."""
        ...

    def read_chain(self, consume: Callable[[ledger.ChainSnapshot], T]) -> T:
        """``consume`` one consistent snapshot of the chain entries, the rows' hashes and the checkpoint."""
        ...

    def records_between(self, since: dt.datetime, until: dt.datetime) -> ledger.RecordTexts:
        """``(request_id, record text)`` of the rows created in ``[since, until)``, oldest first."""
        ...

    def prune(
        self, cutoff: dt.datetime, sign: Callable[[Checkpoint], tuple[Checkpoint, str]]
    ) -> ledger.PruneResult:
        """Delete rows created before ``cutoff`` (not on hold) and leave a checkpoint ``sign`` signs."""
        ...

    def hold(self, request_id: str, reason: str, held_by: str) -> None: ...

    def release(self, request_id: str) -> bool: ...

    def holds(self) -> ledger.Holds: ...

    def log_access(self, entry: ledger.AccessEntry) -> None:
        """Record one view of a record, or one export (committed when this returns)."""
        ...

    def access_log(self, limit: int, offset: int = 0) -> ledger.AccessEntries:
        """The newest access entries first."""
        ...


def record_text(record: RecordJson) -> str:
    """The record's JSON text: encoded bytes as they are, a mapping through ``json.dumps``."""
    if isinstance(record, bytes):
        return record.decode("utf-8")
    return json.dumps(record, ensure_ascii=False, default=str)


def record_json(text: str | None) -> dict[str, Any] | None:
    """A stored record's text as plain JSON values (every backend's ``get``), None for no record."""
    if text is None:
        return None
    record: dict[str, Any] = json.loads(text)
    return record


def check_row(row: Mapping[str, Any]) -> None:
    """A row must carry exactly the summary columns: a programming error otherwise, caught in tests."""
    if set(row) != set(ROW_COLUMNS):
        missing = sorted(set(ROW_COLUMNS) - set(row))
        extra = sorted(set(row) - set(ROW_COLUMNS))
        raise ValueError(f"audit row columns: missing {missing}, unexpected {extra}")


def filter_clauses(
    flt: AuditFilter,
    mark: str,
    when: Callable[[dt.datetime], Any] = dt.datetime.isoformat,
    truth: Callable[[bool], Any] = int,
) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause (or "") and its bound values for ``flt``.

    ``mark`` is the driver's placeholder (``?`` or ``%s``); ``when`` and ``truth`` turn a datetime
    and a flag into the values the backend compares ``created_at`` and ``refused`` with. Only fixed
    clause strings are produced; every value is a bound parameter.
    """
    clauses: list[str] = []
    params: list[Any] = []
    if flt.outcome:
        clauses.append(f"outcome = {mark}")
        params.append(flt.outcome)
    if flt.refused is not None:
        clauses.append(f"refused = {mark}")
        params.append(truth(flt.refused))
    if flt.rewritten is not None:
        clauses.append("rewritten > 0" if flt.rewritten else "rewritten = 0")
    if flt.removed is not None:
        clauses.append("removed > 0" if flt.removed else "removed = 0")
    if flt.emergency is not None:
        clauses.append("scope = 'emergency'" if flt.emergency else "scope != 'emergency'")
    if flt.since:
        clauses.append(f"created_at >= {mark}")
        params.append(when(flt.since))
    if flt.until:
        clauses.append(f"created_at <= {mark}")
        params.append(when(flt.until))
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), params


def to_row(values: tuple[Any, ...] | list[Any]) -> AuditRow:
    """An AuditRow from the ``ROW_COLUMNS`` values of one result row."""
    r = values
    return AuditRow(
        id=r[0],
        created_at=r[1],
        outcome=r[2],
        scope=r[3],
        refused=bool(r[4]),
        reason=r[5],
        claims=int(r[6]),
        rewritten=int(r[7]),
        removed=int(r[8]),
        question=r[9],
        answer=r[10],
    )
