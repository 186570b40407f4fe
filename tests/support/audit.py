"""The audit store backends the audit tests run on: SQLite in a temporary directory, and a real
PostgreSQL on loopback, each with a raw SQL connection to its database (the insider's view); and
``FailingAuditStore``, a store that goes down, for the tests of what a failing audit does."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gateway.audit import AuditLog, AuditStore
from gateway.audit.store import RecordJson
from gateway.errors import AuditError

Sql = Callable[..., list[tuple[Any, ...]]]


@dataclass
class Backend:
    """A store and a raw SQL connection to its database (the insider's view)."""

    name: str
    open: Callable[[], AuditStore]
    table: str
    sql: Sql


@contextmanager
def audit_backend_of(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """``kind`` "sqlite" (a file under ``tmp_path``) or "postgres" (a fresh database: ``audit_url``)."""
    if kind == "sqlite":
        path = tmp_path / "audit.sqlite3"

        def sql(statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
            with sqlite3.connect(path) as conn:
                return conn.execute(statement.replace("%s", "?"), params).fetchall()

        yield Backend("sqlite", lambda: AuditLog(path), "requests", sql)
        return
    import psycopg

    from gateway.audit.postgres import PostgresAuditStore

    url = request.getfixturevalue("audit_url")

    def pg_sql(statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with psycopg.connect(url, autocommit=True) as conn:
            cursor = conn.execute(statement.encode(), params)
            return cursor.fetchall() if cursor.description else []

    yield Backend(
        "postgres", lambda: PostgresAuditStore.open(url, pool_size=4, timeout=5), "audit_requests", pg_sql
    )


class FailingAuditStore:
    """An audit store that goes down (a disk that fills): its first ``writes_ok`` writes reach ``store``;
    after them every write, and every readiness ``check``, raises ``error`` ("the audit disk is full").
    Every other call (reads, the chain, ``count``, ``close``) reaches ``store``.

    A test builds the services with it (``tests.support.components.with_components(services,
    audit=...)``) instead of patching the running store's methods.
    """

    def __init__(self, store: AuditStore, writes_ok: int = 0, error: type[Exception] = AuditError) -> None:
        self.store = store
        self.writes_ok = writes_ok
        self.error = error
        self.written = 0
        """Writes that reached ``store``."""
        self.backend = store.backend

    def _refuse_when_down(self) -> None:
        if self.written >= self.writes_ok:
            raise self.error("the audit disk is full")

    async def write(self, row: Mapping[str, Any], record: RecordJson) -> None:
        self._refuse_when_down()
        self.written += 1
        await self.store.write(row, record)

    def write_sync(self, row: Mapping[str, Any], record: RecordJson) -> None:
        self._refuse_when_down()
        self.written += 1
        self.store.write_sync(row, record)

    def check(self) -> None:
        self._refuse_when_down()
        self.store.check()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)
