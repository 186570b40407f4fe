"""The AuditStore contract, run against both backends: SQLite (embedded) and a real PostgreSQL server
started on loopback by the test session. Plus PostgreSQL's migrations and its failure modes."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path
from typing import Any

import pytest

from gateway.audit import AuditFilter, AuditLog, AuditStore
from gateway.audit.columns import ROW_COLUMNS
from gateway.errors import AuditError

NOW = dt.datetime(2026, 11, 23, 9, 0, tzinfo=dt.UTC)


def make_row(index: int, **changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": f"req-{index:03d}",
        "created_at": (NOW + dt.timedelta(minutes=index)).isoformat(),
        "outcome": "answered",
        "scope": "in_scope",
        "refused": 0,
        "reason": None,
        "claims": 3,
        "rewritten": 0,
        "removed": 0,
        "question": f"question {index}",
        "answer": f"answer {index}",
    }
    row.update(changes)
    return row


def make_record(row: dict[str, Any]) -> dict[str, Any]:
    return {"request_id": row["id"], "question": row["question"], "answer": row["answer"], "nested": [1, 2]}


def test_write_get_count_and_list_newest_first(audit_store: AuditStore) -> None:
    for index in range(3):
        row = make_row(index)
        audit_store.write_sync(row, make_record(row))
    assert audit_store.count() == 3
    rows = audit_store.list(AuditFilter())
    assert [r.id for r in rows] == ["req-002", "req-001", "req-000"]
    assert rows[0].created_at == make_row(2)["created_at"]  # the same ISO text in both backends
    assert rows[0].refused is False
    assert audit_store.get("req-001") == make_record(make_row(1))
    assert audit_store.get("no-such-id") is None
    audit_store.check()


def test_filters_select_the_same_rows_in_both_backends(audit_store: AuditStore) -> None:
    rows = [
        make_row(0),
        make_row(1, outcome="refused", refused=1, reason="out_of_scope", scope="out_of_scope", claims=0),
        make_row(2, outcome="rewritten", rewritten=2),
        make_row(3, outcome="rewritten", removed=1),
        make_row(4, outcome="emergency", refused=1, reason="emergency", scope="emergency", claims=0),
    ]
    for row in rows:
        audit_store.write_sync(row, make_record(row))

    def ids(**flt: Any) -> list[str]:
        return sorted(r.id for r in audit_store.list(AuditFilter(**flt)))

    assert ids(outcome="rewritten") == ["req-002", "req-003"]
    assert ids(refused=True) == ["req-001", "req-004"]
    assert ids(refused=False) == ["req-000", "req-002", "req-003"]
    assert ids(rewritten=True) == ["req-002"]
    assert ids(removed=True) == ["req-003"]
    assert ids(emergency=True) == ["req-004"]
    assert ids(emergency=False, removed=False) == ["req-000", "req-001", "req-002"]
    assert ids(since=NOW + dt.timedelta(minutes=2), until=NOW + dt.timedelta(minutes=3)) == [
        "req-002",
        "req-003",
    ]
    assert [r.id for r in audit_store.list(AuditFilter(limit=2, offset=1))] == ["req-003", "req-002"]


def test_write_is_an_idempotent_upsert_by_request_id(audit_store: AuditStore) -> None:
    provisional = make_row(7, outcome="error", answer="")
    audit_store.write_sync(provisional, {"request_id": "req-007", "state": "begun"})
    complete = make_row(7, outcome="answered")
    audit_store.write_sync(complete, make_record(complete))
    audit_store.write_sync(complete, make_record(complete))
    assert audit_store.count() == 1
    (row,) = audit_store.list(AuditFilter())
    assert row.outcome == "answered"
    assert row.answer == "answer 7"
    assert audit_store.get("req-007") == make_record(complete)


def test_text_is_kept_exactly_including_nul_and_non_ascii(audit_store: AuditStore) -> None:
    question = "Dose for a 5\u00a0kg child? \u0000 \u2192 \U0001f48a"
    row = make_row(1, question=question)
    record = {"question": question, "order": {"b": 1, "a": 2}}
    audit_store.write_sync(row, record)
    stored = audit_store.get("req-001")
    assert stored == record
    assert list(stored["order"]) == ["b", "a"]  # the record text is stored as written
    (listed,) = audit_store.list(AuditFilter())
    assert listed.question.replace("\ufffd", "\u0000") == question


def test_a_row_with_missing_or_extra_columns_is_refused(audit_store: AuditStore) -> None:
    row = make_row(1)
    del row["reason"]
    with pytest.raises(ValueError, match="missing \\['reason'\\]"):
        audit_store.write_sync(row, {})
    with pytest.raises(ValueError, match="unexpected \\['patient'\\]"):
        audit_store.write_sync({**make_row(2), "patient": "x"}, {})
    assert audit_store.count() == 0


async def test_async_write_is_committed_for_a_second_reader(  # type: ignore[no-untyped-def]
    audit_store: AuditStore, request
) -> None:
    row = make_row(5)
    await audit_store.write(row, make_record(row))
    if isinstance(audit_store, AuditLog):
        reader: AuditStore = AuditLog(audit_store.path)
    else:
        from gateway.audit.postgres import PostgresAuditStore

        # the audit_store fixture's database (a fixture's value is the same throughout one test)
        reader = PostgresAuditStore.open(request.getfixturevalue("audit_url"), pool_size=1, timeout=3)
    try:
        assert reader.get("req-005") == make_record(row)
    finally:
        reader.close()


# --- PostgreSQL: migrations -------------------------------------------------------------------


def test_migrations_are_recorded_and_idempotent(audit_url: str, postgres_server) -> None:  # type: ignore[no-untyped-def]
    import psycopg

    from gateway.audit.migrations import LATEST, MIGRATIONS, applied_versions, migrate
    from gateway.audit.postgres import PostgresAuditStore

    PostgresAuditStore.open(audit_url, pool_size=1).close()
    with psycopg.connect(audit_url, autocommit=True) as conn:
        assert applied_versions(conn) == [m.version for m in MIGRATIONS]
        assert migrate(conn) == []  # a second run applies nothing
        columns = {
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'audit_requests'"
            ).fetchall()
        }
    assert set(ROW_COLUMNS) | {"record", "written_at"} == columns
    assert MIGRATIONS[-1].version == LATEST


def test_an_up_to_date_schema_needs_no_ddl_rights(audit_url: str, postgres_server) -> None:  # type: ignore[no-untyped-def]
    """Replicas may run with a role that can only read and write the rows."""
    from gateway.audit.postgres import PostgresAuditStore

    PostgresAuditStore.open(audit_url, pool_size=1).close()  # the owner migrates
    database = audit_url.rsplit("/", 1)[1]
    postgres_server.sql(
        "CREATE ROLE writer LOGIN PASSWORD 'writer-password';"
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC;"
        "GRANT SELECT, INSERT, UPDATE ON audit_requests TO writer;"
        "GRANT SELECT ON audit_schema_migrations TO writer;"
        # the chain is append-only for the replicas' role: no UPDATE or DELETE on it (docs/operations.md)
        "GRANT SELECT, INSERT ON audit_chain, audit_access TO writer;"
        "GRANT SELECT ON audit_checkpoints, audit_holds TO writer;",
        database,
    )
    try:
        url = audit_url.replace("gateway:test-password", "writer:writer-password")
        audit_store = PostgresAuditStore.open(url, pool_size=1)
        try:
            row = make_row(1)
            audit_store.write_sync(row, make_record(row))
            audit_store.write_sync(row, make_record(row))  # the upsert needs UPDATE only
            assert audit_store.count() == 1
        finally:
            audit_store.close()
    finally:
        postgres_server.sql("DROP OWNED BY writer; DROP ROLE writer;", database)


def test_replicas_starting_at_once_migrate_exactly_once(audit_url: str) -> None:
    import psycopg

    from gateway.audit.migrations import MIGRATIONS, applied_versions, migrate

    results: list[list[int]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    def start() -> None:
        try:
            with psycopg.connect(audit_url, autocommit=True) as conn:
                barrier.wait()
                results.append(migrate(conn))
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=start) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    applied = sorted(v for r in results for v in r)
    assert applied == [m.version for m in MIGRATIONS]  # each migration by exactly one "replica"
    with psycopg.connect(audit_url, autocommit=True) as conn:
        assert applied_versions(conn) == [m.version for m in MIGRATIONS]


FIRST_LEDGER = """
CREATE TABLE audit_schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)
"""
"""The migrations ledger as the first release created it (a database of that release has it)."""


def test_a_database_at_the_first_version_is_brought_up_to_date(audit_url: str) -> None:
    """An older release's schema (version 1 only, with rows) is migrated without losing a row."""
    import psycopg

    from gateway.audit import migrations
    from gateway.audit.postgres import PostgresAuditStore

    with psycopg.connect(audit_url, autocommit=True) as conn:
        conn.execute(FIRST_LEDGER)
        conn.execute(migrations.MIGRATIONS[0].sql.encode())
        conn.execute("INSERT INTO audit_schema_migrations (version, name) VALUES (1, 'requests table')")
        conn.execute(
            "INSERT INTO audit_requests VALUES "
            "('old-1', now(), 'answered', 'in_scope', false, NULL, 1, 0, 0, 'q', 'a', '{\"old\": true}')"
        )
    audit_store = PostgresAuditStore.open(audit_url, pool_size=1)
    try:
        assert audit_store.get("old-1") == {"old": True}
        row = make_row(1)
        audit_store.write_sync(row, make_record(row))
        assert audit_store.count() == 2
    finally:
        audit_store.close()


# --- PostgreSQL: failures are AuditErrors, and the audit_store recovers --------------------------------


def test_unreachable_database_fails_start_up_with_a_redacted_reason() -> None:
    from gateway.audit.postgres import PostgresAuditStore
    from gateway.testing import refused_port

    with refused_port() as port, pytest.raises(AuditError) as caught:
        PostgresAuditStore.open(
            f"postgresql://gateway:very-secret@127.0.0.1:{port}/gateway", pool_size=1, timeout=1
        )
    message = str(caught.value)
    assert "127.0.0.1" in message
    assert "very-secret" not in message


def test_wrong_password_fails_start_up(postgres_server) -> None:  # type: ignore[no-untyped-def]
    from gateway.audit.postgres import PostgresAuditStore

    url = postgres_server.url().replace("test-password", "wrong")
    with pytest.raises(AuditError, match="cannot open the audit database"):
        PostgresAuditStore.open(url, pool_size=1, timeout=2)


def test_writes_fail_as_audit_errors_while_the_server_is_down_and_resume_after(
    audit_url: str, postgres_server
) -> None:  # type: ignore[no-untyped-def]
    from gateway.audit.postgres import PostgresAuditStore

    audit_store = PostgresAuditStore.open(audit_url, pool_size=2, timeout=1)
    try:
        audit_store.write_sync(make_row(1), make_record(make_row(1)))
        postgres_server.stop()
        try:
            with pytest.raises(AuditError, match="not written"):
                audit_store.write_sync(make_row(2), make_record(make_row(2)))
            with pytest.raises(AuditError):
                audit_store.check()
        finally:
            postgres_server.start()
        audit_store.write_sync(make_row(3), make_record(make_row(3)))  # the pool reconnects
        audit_store.check()
        assert sorted(r.id for r in audit_store.list(AuditFilter())) == ["req-001", "req-003"]
    finally:
        audit_store.close()


def test_sqlite_failures_are_audit_errors(tmp_path: Path) -> None:
    audit_store = AuditLog(tmp_path / "audit.sqlite3")
    audit_store.close()
    with pytest.raises(AuditError):
        audit_store.write_sync(make_row(1), {})
    with pytest.raises(AuditError):
        audit_store.check()


def test_settings_choose_the_backend(tmp_path: Path, audit_url: str) -> None:
    from gateway.audit import open_audit_store
    from gateway.errors import ConfigurationError
    from gateway.settings import Secret, Settings

    embedded = open_audit_store(Settings(data_dir=tmp_path))
    assert embedded.backend == "sqlite"
    embedded.close()
    shared = open_audit_store(Settings(data_dir=tmp_path, audit_url=Secret(audit_url)))
    assert shared.backend == "postgres"
    shared.close()
    with pytest.raises(ConfigurationError, match="GATEWAY_AUDIT_URL"):
        Settings(audit_url=Secret("mysql://x"))
    assert "test-password" not in repr(Settings(audit_url=Secret(audit_url)))
