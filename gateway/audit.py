"""The audit trail: every request, stored durably in SQLite before its response is sent.

One row per request with the columns the audit list filters on, plus the whole record (question,
retrieved passages, draft, verdicts, cleanup actions, final answer, trust report) as JSON. Patient
identifiers (the request's ``user`` and ``metadata``) are kept only when the operator turns that on.

``write`` is an upsert keyed by the request id: the pipeline writes a provisional row when a request
starts and completes it at the end (when to write is decided in ``gateway.pipeline``, not here). Every
failure to write is an ``AuditError``; so is a database file deleted or replaced under the open
connection (SQLite would otherwise keep writing into the unlinked file). ``check`` is the readiness
probe: a real committed write to a one-row health table.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread

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
CREATE TABLE IF NOT EXISTS health (id INTEGER PRIMARY KEY CHECK (id = 1), checked_at TEXT NOT NULL);
"""

CHECK_BUSY_TIMEOUT_MS = 500
"""How long the readiness probe waits for a lock held by another writer before reporting not ready."""


_DEFAULT_BUSY_TIMEOUT_MS = 5000
"""sqlite3.connect's default timeout (5 s), restored after the shorter readiness probe."""


def _file_identity(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_dev, stat.st_ino


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


class AuditLog:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)
        self._identity = _file_identity(path)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    async def write(self, row: Mapping[str, Any], record: Mapping[str, Any]) -> None:
        """Insert or replace the request's row (keyed by ``row["id"]``); AuditError when it fails."""
        await anyio.to_thread.run_sync(self.write_sync, row, record)

    def write_sync(self, row: Mapping[str, Any], record: Mapping[str, Any]) -> None:
        try:
            values = dict(row, record=json.dumps(record, ensure_ascii=False, default=str))
            columns = ", ".join(values)
            marks = ", ".join("?" for _ in values)
            updates = ", ".join(f"{c} = excluded.{c}" for c in values if c != "id")
            # only the fixed column names are interpolated; every value is a bound parameter
            sql = (
                f"INSERT INTO requests ({columns}) VALUES ({marks}) "  # noqa: S608
                f"ON CONFLICT(id) DO UPDATE SET {updates}"
            )
            with self._lock:
                self._ensure_same_file()
                self._transaction(sql, list(values.values()))
        except AuditError:
            raise
        except (sqlite3.Error, OSError, ValueError) as err:
            raise AuditError(f"cannot write the audit record: {type(err).__name__}: {err}") from err

    async def check(self) -> None:
        """Readiness probe: the file is the one opened and a write commits; AuditError otherwise."""
        await anyio.to_thread.run_sync(self.check_sync)

    def check_sync(self) -> None:
        try:
            with self._lock:
                self._ensure_same_file()
                self._db.execute(f"PRAGMA busy_timeout = {CHECK_BUSY_TIMEOUT_MS}")
                try:
                    sql = "INSERT OR REPLACE INTO health (id, checked_at) VALUES (1, ?)"
                    self._transaction(sql, [dt.datetime.now(dt.UTC).isoformat()])
                finally:
                    self._db.execute(f"PRAGMA busy_timeout = {_DEFAULT_BUSY_TIMEOUT_MS}")
        except AuditError:
            raise
        except (sqlite3.Error, OSError) as err:
            raise AuditError(f"the audit database cannot be written: {type(err).__name__}: {err}") from err

    def _transaction(self, sql: str, params: list[Any]) -> None:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.execute(sql, params)
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    def _ensure_same_file(self) -> None:
        """SQLite keeps writing into a deleted file through its open handle: refuse instead."""
        try:
            identity = _file_identity(self.path)
        except OSError as err:
            raise AuditError(f"the audit database {self.path} is gone: {err.strerror}") from err
        if identity != self._identity:
            raise AuditError(f"the audit database {self.path} was replaced while the gateway ran")
        if not os.access(self.path, os.W_OK):
            raise AuditError(f"the audit database {self.path} is not writable")

    def list(self, flt: AuditFilter) -> list[AuditRow]:
        clauses: list[str] = []
        params: list[Any] = []
        if flt.outcome:
            clauses.append("outcome = ?")
            params.append(flt.outcome)
        if flt.refused is not None:
            clauses.append("refused = ?")
            params.append(int(flt.refused))
        if flt.rewritten is not None:
            clauses.append("rewritten > 0" if flt.rewritten else "rewritten = 0")
        if flt.removed is not None:
            clauses.append("removed > 0" if flt.removed else "removed = 0")
        if flt.emergency is not None:
            clauses.append("scope = 'emergency'" if flt.emergency else "scope != 'emergency'")
        if flt.since:
            clauses.append("created_at >= ?")
            params.append(flt.since.isoformat())
        if flt.until:
            clauses.append("created_at <= ?")
            params.append(flt.until.isoformat())
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        columns = (
            "id, created_at, outcome, scope, refused, reason, claims, rewritten, removed, question, answer"
        )
        # only fixed clause strings are interpolated; every value is a bound parameter
        sql = f"SELECT {columns} FROM requests {where} ORDER BY created_at DESC LIMIT ? OFFSET ?"  # noqa: S608
        with self._lock:
            rows = self._db.execute(sql, [*params, flt.limit, flt.offset]).fetchall()
        return [
            AuditRow(
                id=r[0],
                created_at=r[1],
                outcome=r[2],
                scope=r[3],
                refused=bool(r[4]),
                reason=r[5],
                claims=r[6],
                rewritten=r[7],
                removed=r[8],
                question=r[9],
                answer=r[10],
            )
            for r in rows
        ]

    def get(self, request_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT record FROM requests WHERE id = ?", (request_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM requests").fetchone()[0])
