"""The embedded audit backend: every request, stored durably in SQLite before its response is sent.

The default for one process (``GATEWAY_AUDIT_URL`` empty): a WAL database file under the data
directory, ``synchronous=FULL``, one write transaction per request. Patient identifiers (the
request's ``user`` and ``metadata``) are kept only when the operator turns that on. For several
replicas use the PostgreSQL backend (``gateway.audit.postgres``): a SQLite file cannot be shared.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread

from gateway.audit.base import ROW_COLUMNS, AuditFilter, AuditRow, check_row, filter_clauses, to_row
from gateway.errors import AuditError

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
"""


_UPSERT = (
    f"INSERT INTO requests ({', '.join(ROW_COLUMNS)}, record) "  # noqa: S608 (fixed names only)
    f"VALUES ({', '.join('?' for _ in ROW_COLUMNS)}, ?) "
    "ON CONFLICT(id) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in (*ROW_COLUMNS[1:], "record"))
)
"""Idempotent by request id: writing the same id again replaces its row (begin/complete pairs)."""


class AuditLog:
    """The SQLite ``AuditStore``."""

    backend = "sqlite"

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as err:
            raise AuditError(f"cannot open the audit database {path}: {err}") from err

    def close(self) -> None:
        with self._lock:
            self._db.close()

    async def write(self, row: Mapping[str, Any], record: Mapping[str, Any]) -> None:
        await anyio.to_thread.run_sync(self.write_sync, row, record)

    def write_sync(self, row: Mapping[str, Any], record: Mapping[str, Any]) -> None:
        check_row(row)
        values = [*(row[c] for c in ROW_COLUMNS), json.dumps(record, ensure_ascii=False, default=str)]
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    self._db.execute(_UPSERT, values)
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
            except sqlite3.Error as err:
                raise AuditError(f"the audit record was not written: {err}") from err

    def check(self) -> None:
        """Raise AuditError when the database cannot be read (locked file, deleted volume, closed)."""
        with self._lock:
            try:
                self._db.execute("SELECT 1 FROM requests LIMIT 1").fetchall()
            except sqlite3.Error as err:
                raise AuditError(f"the audit database cannot be read: {err}") from err

    def list(self, flt: AuditFilter) -> list[AuditRow]:
        where, params = filter_clauses(flt, "?")
        columns = ", ".join(ROW_COLUMNS)
        # only fixed clause strings are interpolated; every value is a bound parameter
        sql = f"SELECT {columns} FROM requests {where} ORDER BY created_at DESC LIMIT ? OFFSET ?"  # noqa: S608
        return [to_row(r) for r in self._read(sql, [*params, flt.limit, flt.offset])]

    def get(self, request_id: str) -> dict[str, Any] | None:
        rows = self._read("SELECT record FROM requests WHERE id = ?", [request_id])
        if not rows:
            return None
        record: dict[str, Any] = json.loads(rows[0][0])
        return record

    def count(self) -> int:
        return int(self._read("SELECT COUNT(*) FROM requests", [])[0][0])

    def _read(self, sql: str, params: Sequence[Any]) -> Sequence[Any]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as err:
                raise AuditError(f"the audit database cannot be read: {err}") from err


SqliteAuditStore = AuditLog
"""The backend's descriptive name; ``AuditLog`` is kept for existing imports."""
