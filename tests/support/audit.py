"""The audit store backends the audit tests run on: SQLite in a temporary directory, and a real
PostgreSQL on loopback, each with a raw SQL connection to its database (the insider's view)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gateway.audit import AuditLog, AuditStore

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
