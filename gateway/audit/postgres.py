"""The PostgreSQL audit backend: one audit trail shared by every replica (``GATEWAY_AUDIT_URL``).

A psycopg 3 connection pool (autocommit: each upsert is its own transaction, committed when
``execute`` returns; PostgreSQL's default ``synchronous_commit=on`` makes that durable). Connections
are checked when taken from the pool, so a database restart costs the next request a reconnection,
not an error. The schema is migrated at start-up (``gateway.audit.migrations``).

Failures are ``AuditError``: the pool timing out (database down or saturated), a statement
timing out, or the connection breaking. The record text is stored exactly as the SQLite backend
stores it (JSON text, not JSONB, so no key order or ``\\u0000`` is lost); PostgreSQL text columns
cannot hold NUL characters, so in the question and answer summary columns NUL is shown as U+FFFD
(the record keeps the original).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import anyio.to_thread
import psycopg
import structlog
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

import gateway.audit.ledger as ledger
from gateway.audit.chain import canonical_content
from gateway.audit.columns import ROW_COLUMNS
from gateway.audit.ledger_store import LedgerStore
from gateway.audit.migrations import TABLE, migrate
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

log = structlog.get_logger("gateway.audit")
T = TypeVar("T")

_UPSERT = (
    f"INSERT INTO {TABLE} ({', '.join(ROW_COLUMNS)}, record) "  # noqa: S608 (fixed names only)
    f"VALUES ({', '.join('%s' for _ in ROW_COLUMNS)}, %s) "
    "ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in (*ROW_COLUMNS[1:], "record"))
    + ", written_at = now()"
)
"""Idempotent by request id: writing the same id again replaces its row (begin/complete pairs)."""


def describe(url: str) -> str:
    """``postgresql://user@host:port/dbname`` without the password, for logs and errors."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(unparseable URL)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname') or ''}"


def _text(value: str) -> str:
    return value.replace("\x00", "\ufffd")


class PostgresAuditStore(LedgerStore):
    """The PostgreSQL ``AuditStore``. Build it with ``open``."""

    backend = "postgres"
    _mark = "%s"
    _table = TABLE

    def __init__(self, pool: ConnectionPool[Any], where: str, timeout: float) -> None:
        self._pool = pool
        self.where = where
        self._timeout = timeout

    @classmethod
    def open(cls, url: str, *, pool_size: int = 10, timeout: float = 5.0) -> PostgresAuditStore:
        """Connect, migrate the schema, and return the store; AuditError when that fails."""
        where = describe(url)
        statement_ms = math.ceil(timeout * 1000)

        def configure(conn: psycopg.Connection[Any]) -> None:
            conn.execute(f"SET statement_timeout = {statement_ms}".encode())

        pool: ConnectionPool[Any] = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            timeout=timeout,
            open=False,
            name="gateway-audit",
            configure=configure,
            check=ConnectionPool.check_connection,
            kwargs={"autocommit": True, "connect_timeout": max(2, math.ceil(timeout))},
        )
        try:
            pool.open(wait=True, timeout=timeout)
            with pool.connection() as conn:
                migrate(conn)
                with conn.transaction():
                    _lock_chain(conn)
                    adopted = ledger.adopt_unchained(_runner(conn), "%s", TABLE)
            if adopted:
                log.info("audit_chain_adopted", rows=adopted)
        except psycopg.Error as err:
            pool.close(timeout=1)
            raise AuditError(f"cannot open the audit database {where}: {type(err).__name__}: {err}") from err
        log.info("audit_store_open", backend="postgres", where=where, pool_size=pool_size)
        return cls(pool, where, timeout)

    def close(self) -> None:
        self._pool.close(timeout=5)

    async def write(self, row: Mapping[str, Any], record: RecordJson) -> None:
        await anyio.to_thread.run_sync(self.write_sync, row, record)

    def write_sync(self, row: Mapping[str, Any], record: RecordJson) -> None:
        check_row(row)
        values = dict(row)
        values["created_at"] = dt.datetime.fromisoformat(str(row["created_at"]))
        values["refused"] = bool(row["refused"])
        values["question"] = _text(str(row["question"]))
        values["answer"] = _text(str(row["answer"]))
        params = [*(values[c] for c in ROW_COLUMNS), record_text(record)]
        content = canonical_content(params)
        try:
            with self._pool.connection() as conn, conn.transaction():
                _lock_chain(conn)  # one order of chain entries across replicas, held to the commit
                conn.execute(_UPSERT.encode(), params)
                ledger.append(_runner(conn), "%s", str(row["id"]), content)
        except psycopg.Error as err:
            raise AuditError(
                f"the audit record was not written to {self.where}: {type(err).__name__}: {err}"
            ) from err

    def check(self) -> None:
        """Raise AuditError unless a pooled connection answers a query on the audit table now."""
        self._read(f"SELECT 1 FROM {TABLE} LIMIT 1", [])  # noqa: S608

    def list(self, flt: AuditFilter) -> list[AuditRow]:
        where, params = filter_clauses(flt, "%s", when=lambda moment: moment, truth=bool)
        columns = ", ".join(ROW_COLUMNS)
        # only fixed clause strings are interpolated; every value is a bound parameter
        sql = f"SELECT {columns} FROM {TABLE} {where} ORDER BY created_at DESC LIMIT %s OFFSET %s"  # noqa: S608
        rows = self._read(sql, [*params, flt.limit, flt.offset])
        return [to_row((r[0], _iso(r[1]), *r[2:])) for r in rows]

    def get(self, request_id: str) -> dict[str, Any] | None:
        return record_json(self.get_text(request_id))

    def get_text(self, request_id: str) -> str | None:
        rows = self._read(f"SELECT record FROM {TABLE} WHERE id = %s", [request_id])  # noqa: S608
        return str(rows[0][0]) if rows else None

    def count(self) -> int:
        return int(self._read(f"SELECT COUNT(*) FROM {TABLE}", [])[0][0])  # noqa: S608

    # --- the chain, retention, holds and the access log: ``LedgerStore`` over these runners ------

    def read_chain(self, consume: Callable[[ledger.ChainSnapshot], T]) -> T:
        """``consume`` one REPEATABLE READ snapshot of the chain, its rows and its newest checkpoint."""

        def snapshot(conn: psycopg.Connection[Any]) -> T:
            with conn.transaction():
                conn.execute(b"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                return consume(self._snapshot(_runner(conn)))

        return self._on_connection(snapshot)

    def _reading(self, work: Callable[[ledger.Run], T]) -> T:
        return self._on_connection(lambda conn: work(_runner(conn)))

    _logging = _reading
    """Autocommit: an access is logged in its own statement, without the chain lock."""

    def _changing(self, work: Callable[[ledger.Run], T]) -> T:
        def locked(conn: psycopg.Connection[Any]) -> T:
            with conn.transaction():
                _lock_chain(conn)
                return work(_runner(conn))

        return self._on_connection(locked)

    def _on_connection(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        try:
            with self._pool.connection() as conn:
                return work(conn)
        except psycopg.Error as err:
            raise AuditError(f"the audit database {self.where} failed: {type(err).__name__}: {err}") from err

    def _read(self, sql: str, params: Sequence[Any]) -> Sequence[tuple[Any, ...]]:
        try:
            with self._pool.connection() as conn:
                rows: list[tuple[Any, ...]] = conn.execute(sql.encode(), params).fetchall()
                return rows
        except psycopg.Error as err:
            raise AuditError(
                f"the audit database {self.where} cannot be read: {type(err).__name__}: {err}"
            ) from err


def _lock_chain(conn: psycopg.Connection[Any]) -> None:
    conn.execute(b"SELECT pg_advisory_xact_lock(%s)", (ledger.CHAIN_LOCK_KEY,))


def _runner(conn: psycopg.Connection[Any]) -> ledger.Run:
    def run(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        cursor = conn.execute(sql.encode(), params)
        return cursor.fetchall() if cursor.description else []

    return run


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat()
