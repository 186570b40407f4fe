"""The embedded audit backend: every request, stored durably in SQLite before its response is sent.

The default for one process (``GATEWAY_AUDIT_URL`` empty): a WAL database file under the data
directory, ``synchronous=FULL``, one write transaction per request. Patient identifiers (the
request's ``user`` and ``metadata``) are kept only when the operator turns that on. For several
replicas use the PostgreSQL backend (``gateway.audit.postgres``): a SQLite file cannot be shared.

SQLite keeps writing into a deleted or replaced file through its open handle, so every write and the
readiness probe first check that the path still names the file that was opened (device and inode) and
is writable. ``check`` is a real committed write to a one-row health table.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread

import gateway.audit.ledger as ledger
from gateway.audit.chain import ChainEntry, canonical_content
from gateway.audit.columns import ROW_COLUMNS
from gateway.audit.ledger_store import LedgerStore
from gateway.audit.store import (
    AuditFilter,
    AuditRow,
    RecordJson,
    check_row,
    filter_clauses,
    record_json,
    record_text,
    to_row,
)
from gateway.errors import AuditError

T = TypeVar("T")
_TABLE = "requests"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    outcome TEXT NOT NULL,
    scope TEXT NOT NULL,
    refused INTEGER NOT NULL,
    reason TEXT,
    claims INTEGER NOT NULL,
    rewritten INTEGER NOT NULL,
    removed INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS requests_created ON requests(created_at);
CREATE INDEX IF NOT EXISTS requests_outcome ON requests(outcome);
CREATE TABLE IF NOT EXISTS health (id INTEGER PRIMARY KEY CHECK (id = 1), checked_at TEXT NOT NULL);
"""

CHECK_BUSY_TIMEOUT_MS = 500
"""How long the readiness probe waits for a lock held by another writer before reporting not ready."""

_DEFAULT_BUSY_TIMEOUT_MS = 5000
"""sqlite3.connect's default timeout (5 s), restored after the shorter readiness probe."""


def _file_identity(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_dev, stat.st_ino


_UPSERT = (
    f"INSERT INTO requests ({', '.join(ROW_COLUMNS)}, record) "  # noqa: S608 (fixed names only)
    f"VALUES ({', '.join('?' for _ in ROW_COLUMNS)}, ?) "
    "ON CONFLICT(id) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in (*ROW_COLUMNS[1:], "record"))
)
"""Idempotent by request id: writing the same id again replaces its row (begin/complete pairs)."""


class AuditLog(LedgerStore):
    """The SQLite ``AuditStore``."""

    backend = "sqlite"
    _mark = "?"
    _table = _TABLE

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
            self._identity = _file_identity(path)
        except (sqlite3.Error, OSError) as err:
            raise AuditError(f"cannot open the audit database {path}: {err}") from err

        try:
            with self._lock:
                self._db.executescript(ledger.schema_sql("INTEGER PRIMARY KEY"))
                self._in_transaction(lambda run: ledger.adopt_unchained(run, "?", _TABLE))
        except sqlite3.Error as err:
            raise AuditError(f"cannot open the audit chain in {path}: {err}") from err

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _run(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self._db.execute(sql, params).fetchall()

    def _in_transaction(self, work: Callable[[ledger.Run], T]) -> T:
        """``work`` inside one write transaction (``BEGIN IMMEDIATE``: the file's write lock, which
        also orders chain appends of other processes on the same file)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            result = work(self._run)
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        return result

    async def write(self, row: Mapping[str, Any], record: RecordJson) -> None:
        await anyio.to_thread.run_sync(self.write_sync, row, record)

    def write_sync(self, row: Mapping[str, Any], record: RecordJson) -> None:
        check_row(row)
        try:
            values = [*(row[c] for c in ROW_COLUMNS), record_text(record)]
            content = canonical_content(values)

            def upsert_and_chain(run: ledger.Run) -> ChainEntry:
                run(_UPSERT, values)
                return ledger.append(run, "?", str(row["id"]), content)

            with self._lock:
                self._ensure_same_file()
                self._in_transaction(upsert_and_chain)
        except AuditError:
            raise
        except (sqlite3.Error, OSError, ValueError) as err:
            raise AuditError(f"the audit record was not written: {type(err).__name__}: {err}") from err

    def check(self) -> None:
        """Readiness probe: the file is the one opened and a write commits; AuditError otherwise."""
        try:
            with self._lock:
                self._ensure_same_file()
                self._db.execute(f"PRAGMA busy_timeout = {CHECK_BUSY_TIMEOUT_MS}")
                try:
                    sql = "INSERT OR REPLACE INTO health (id, checked_at) VALUES (1, ?)"
                    now = [dt.datetime.now(dt.UTC).isoformat()]
                    self._in_transaction(lambda run: run(sql, now))
                finally:
                    self._db.execute(f"PRAGMA busy_timeout = {_DEFAULT_BUSY_TIMEOUT_MS}")
        except AuditError:
            raise
        except (sqlite3.Error, OSError) as err:
            raise AuditError(f"the audit database cannot be written: {type(err).__name__}: {err}") from err

    def _ensure_same_file(self) -> None:
        try:
            identity = _file_identity(self.path)
        except OSError as err:
            raise AuditError(f"the audit database {self.path} is gone: {err.strerror}") from err
        if identity != self._identity:
            raise AuditError(f"the audit database {self.path} was replaced while the gateway ran")
        if not os.access(self.path, os.W_OK):
            raise AuditError(f"the audit database {self.path} is not writable")

    def list(self, flt: AuditFilter) -> list[AuditRow]:
        where, params = filter_clauses(flt, "?")
        columns = ", ".join(ROW_COLUMNS)
        # only fixed clause strings are interpolated; every value is a bound parameter
        sql = f"SELECT {columns} FROM requests {where} ORDER BY created_at DESC LIMIT ? OFFSET ?"  # noqa: S608
        return [to_row(r) for r in self._read(sql, [*params, flt.limit, flt.offset])]

    def get(self, request_id: str) -> dict[str, Any] | None:
        return record_json(self.get_text(request_id))

    def get_text(self, request_id: str) -> str | None:
        rows = self._read("SELECT record FROM requests WHERE id = ?", [request_id])
        return str(rows[0][0]) if rows else None

    def count(self) -> int:
        return int(self._read("SELECT COUNT(*) FROM requests", [])[0][0])

    # --- the chain, retention, holds and the access log: ``LedgerStore`` over these runners ------

    def read_chain(self, consume: Callable[[ledger.ChainSnapshot], T]) -> T:
        """``consume`` a consistent snapshot of the chain, its rows and its newest checkpoint."""
        with self._lock:
            self._db.execute("BEGIN")  # a read transaction: one snapshot of the WAL
            try:
                return self._catching(lambda run: consume(self._snapshot(run)))
            finally:
                self._db.execute("COMMIT")

    def _moment(self, when: dt.datetime) -> str:
        return when.isoformat()

    def _reading(self, work: Callable[[ledger.Run], T]) -> T:
        with self._lock:
            return self._catching(work)

    def _changing(self, work: Callable[[ledger.Run], T]) -> T:
        with self._lock:
            self._ensure_same_file()
            return self._catching(lambda _: self._in_transaction(work))

    _logging = _changing
    """Every write takes the file's write lock (``BEGIN IMMEDIATE``)."""

    def _catching(self, work: Callable[[ledger.Run], T]) -> T:
        try:
            return work(self._run)
        except sqlite3.Error as err:
            raise AuditError(f"the audit database failed: {type(err).__name__}: {err}") from err

    def _read(self, sql: str, params: Sequence[Any]) -> Sequence[Any]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as err:
                raise AuditError(f"the audit database cannot be read: {err}") from err


SqliteAuditStore = AuditLog
"""The backend's descriptive name; ``AuditLog`` is kept for existing imports."""
