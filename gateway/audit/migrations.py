"""Versioned schema migrations of the PostgreSQL audit store, applied at start-up.

``audit_schema_migrations`` records each applied version. ``migrate`` runs in one transaction under
a transaction-level advisory lock, so replicas starting at once apply each migration exactly once
(the others wait, then find it applied); running it again changes nothing. Migrations are additive
only (new tables, columns with defaults, indexes), so replicas still on the previous release keep
working during a rolling update; a database newer than this code is accepted with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
import structlog

log = structlog.get_logger("gateway.audit")

LOCK_KEY = 0x7472_7573_7467_7731
"""``pg_advisory_xact_lock`` key of the migration run (the bytes of "trustgw1"): one per database."""

TABLE = "audit_requests"
MIGRATION_TIMEOUT_MS = 600_000
"""A start-up migration (and the wait for another replica's) may take up to ten minutes."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "requests table",
        """
        CREATE TABLE audit_requests (
            id TEXT PRIMARY KEY,
            created_at TIMESTAMPTZ NOT NULL,
            outcome TEXT NOT NULL,
            scope TEXT NOT NULL,
            refused BOOLEAN NOT NULL,
            reason TEXT,
            claims INTEGER NOT NULL,
            rewritten INTEGER NOT NULL,
            removed INTEGER NOT NULL,
            question TEXT NOT NULL,
            answer TEXT NOT NULL,
            record TEXT NOT NULL
        );
        CREATE INDEX audit_requests_created ON audit_requests (created_at DESC);
        CREATE INDEX audit_requests_outcome ON audit_requests (outcome, created_at DESC);
        """,
    ),
    Migration(
        2,
        "written_at column",
        """
        ALTER TABLE audit_requests ADD COLUMN written_at TIMESTAMPTZ NOT NULL DEFAULT now();
        COMMENT ON COLUMN audit_requests.written_at IS
            'when the row was last committed (created_at is when the request arrived)';
        """,
    ),
)
"""Every migration, oldest first. Append only; never edit one that has shipped."""

LATEST = MIGRATIONS[-1].version

_CREATE_LEDGER = """
CREATE TABLE IF NOT EXISTS audit_schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)
"""


def migrate(conn: psycopg.Connection[tuple[object, ...]]) -> list[int]:
    """Apply the missing migrations; returns the versions this call applied (often none)."""
    applied_now: list[int] = []
    with conn.transaction():
        # a migration may outlast the per-request statement timeout; bound it generously instead
        conn.execute(f"SET LOCAL statement_timeout = {MIGRATION_TIMEOUT_MS}".encode())
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        ledger = conn.execute("SELECT to_regclass('audit_schema_migrations') IS NOT NULL").fetchone()
        if not (ledger and ledger[0]):  # no DDL when up to date: a role without CREATE can start
            conn.execute(_CREATE_LEDGER)
        rows = conn.execute("SELECT version FROM audit_schema_migrations").fetchall()
        applied = {int(str(r[0])) for r in rows}
        for migration in MIGRATIONS:
            if migration.version in applied:
                continue
            conn.execute(migration.sql.encode("utf-8"))
            conn.execute(
                "INSERT INTO audit_schema_migrations (version, name) VALUES (%s, %s)",
                (migration.version, migration.name),
            )
            applied_now.append(migration.version)
    newest = max(applied, default=0)
    if newest > LATEST:
        log.warning("audit_schema_newer", database_version=newest, code_version=LATEST)
    if applied_now:
        log.info("audit_schema_migrated", applied=applied_now, version=max(newest, *applied_now))
    return applied_now


def applied_versions(conn: psycopg.Connection[tuple[object, ...]]) -> list[int]:
    rows = conn.execute("SELECT version FROM audit_schema_migrations ORDER BY version").fetchall()
    return [int(str(r[0])) for r in rows]
