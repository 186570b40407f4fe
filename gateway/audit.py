"""The audit trail: every request, stored durably in SQLite before its response is sent.

One row per request with the columns the audit list filters on, plus the whole record (question,
retrieved passages, draft, verdicts, cleanup actions, final answer, trust report) as JSON. Patient
identifiers (the request's ``user`` and ``metadata``) are kept only when the operator turns that on.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread

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

    def close(self) -> None:
        with self._lock:
            self._db.close()

    async def write(self, row: Mapping[str, Any], record: Mapping[str, Any]) -> None:
        await anyio.to_thread.run_sync(self.write_sync, row, record)

    def write_sync(self, row: Mapping[str, Any], record: Mapping[str, Any]) -> None:
        values = dict(row, record=json.dumps(record, ensure_ascii=False, default=str))
        columns = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(f"INSERT INTO requests ({columns}) VALUES ({marks})", list(values.values()))  # noqa: S608
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

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
