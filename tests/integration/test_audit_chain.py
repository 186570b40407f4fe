"""The tamper-evident chain, retention with signed checkpoints, legal holds and encryption at rest,
on both backends (SQLite, and a real PostgreSQL on loopback), edited the way an insider with database
access would: raw SQL on the tables, not the gateway's API."""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gateway.audit import AuditFilter, AuditLog, AuditStore
from gateway.audit.chain import ChainHead
from gateway.audit.columns import ROW_COLUMNS
from gateway.audit.crypto import Keyring, new_key_text, parse_keys
from gateway.audit.integrity import prune_store, verify_store
from gateway.audit.sealed import SealedStore, check_key
from gateway.errors import ConfigurationError

COLUMNS = ", ".join((*ROW_COLUMNS, "record"))
NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)


def make_row(index: int, *, days_ago: float = 0.0, outcome: str = "answered") -> dict[str, Any]:
    return {
        "id": f"req-{index:03d}",
        "created_at": (NOW - dt.timedelta(days=days_ago) + dt.timedelta(seconds=index)).isoformat(),
        "outcome": outcome,
        "scope": "in_scope",
        "refused": 0,
        "reason": None,
        "claims": 2,
        "rewritten": 0,
        "removed": 0,
        "question": f"question {index}",
        "answer": f"answer {index}" if outcome != "incomplete" else "",
    }


def make_record(row: dict[str, Any]) -> dict[str, Any]:
    return {"request_id": row["id"], "question": row["question"], "answer": row["answer"]}


def write_request(store: AuditStore, index: int, days_ago: float = 0.0) -> None:
    """A request's two writes: the provisional row, then the completed one (as the pipeline does)."""
    provisional = make_row(index, days_ago=days_ago, outcome="incomplete")
    store.write_sync(provisional, make_record(provisional))
    completed = make_row(index, days_ago=days_ago)
    store.write_sync(completed, make_record(completed))


@dataclass
class Backend:
    """A store and a raw SQL connection to its database (the insider's view)."""

    name: str
    open: Any
    table: str
    sql: Any


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path: Path) -> Iterator[Backend]:  # type: ignore[no-untyped-def]
    if request.param == "sqlite":
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


@pytest.fixture
def store(backend: Backend) -> Iterator[AuditStore]:
    opened: AuditStore = backend.open()
    yield opened
    opened.close()


def problems(
    store: AuditStore, keyring: Keyring | None = None, anchor: ChainHead | None = None
) -> list[tuple[str, str | None]]:
    report = verify_store(store, keyring, anchor)
    return [(p.kind, p.request_id) for p in report.problems]


def test_every_write_is_chained_and_the_chain_verifies(store: AuditStore) -> None:
    for index in range(5):
        write_request(store, index)
    report = verify_store(store, None)
    assert report.intact, report.problems
    assert (report.entries, report.rows) == (10, 5)
    assert store.chain_head() == report.head
    assert report.head.seq == 10


def test_an_edited_row_is_named(store: AuditStore, backend: Backend) -> None:
    for index in range(4):
        write_request(store, index)
    backend.sql(f"UPDATE {backend.table} SET answer = %s WHERE id = %s", ("a kinder answer", "req-002"))
    assert problems(store) == [("edited", "req-002")]
    backend.sql(f"UPDATE {backend.table} SET answer = %s WHERE id = %s", ("answer 2", "req-002"))
    assert problems(store) == []  # the same content again hashes the same


def test_a_deleted_row_and_an_inserted_row_are_named(store: AuditStore, backend: Backend) -> None:
    for index in range(4):
        write_request(store, index)
    backend.sql(f"DELETE FROM {backend.table} WHERE id = %s", ("req-001",))
    assert problems(store) == [("deleted", "req-001")]
    backend.sql(
        f"INSERT INTO {backend.table} ({COLUMNS}) SELECT 'req-forged', {COLUMNS.split(', ', 1)[1]} "
        f"FROM {backend.table} WHERE id = 'req-002'"
    )
    assert problems(store) == [("deleted", "req-001"), ("inserted", "req-forged")]


def test_deleted_reordered_and_rewritten_chain_entries_are_named(store: AuditStore, backend: Backend) -> None:
    for index in range(4):
        write_request(store, index)
    # the row and all its entries deleted together: the gap in the chain names it
    backend.sql("DELETE FROM audit_chain WHERE request_id = %s", ("req-003",))
    backend.sql(f"DELETE FROM {backend.table} WHERE id = %s", ("req-003",))
    report = verify_store(store, None)
    assert report.head.seq == 6
    assert problems(store) == []  # the tail is gone without a trace in the chain itself ...
    assert problems(store, anchor=ChainHead(8, "0" * 64)) == [("deleted", None)]  # ... but not from an anchor
    # two entries swapped (their seq exchanged): the first one out of order is named
    backend.sql("UPDATE audit_chain SET seq = 100 WHERE seq = 3")
    backend.sql("UPDATE audit_chain SET seq = 3 WHERE seq = 4")
    backend.sql("UPDATE audit_chain SET seq = 4 WHERE seq = 100")
    report = verify_store(store, None)
    assert report.problems[0].seq == 3
    assert report.problems[0].kind == "edited"


def test_a_rewritten_entry_breaks_the_link_of_the_next(store: AuditStore, backend: Backend) -> None:
    """An insider who edits a row and recomputes its entry's hashes is caught by the next entry."""
    from gateway.audit.chain import canonical_content, entry_hash

    for index in range(3):
        write_request(store, index)
    backend.sql(f"UPDATE {backend.table} SET answer = %s WHERE id = %s", ("edited", "req-001"))
    (values,) = backend.sql(f"SELECT {COLUMNS} FROM {backend.table} WHERE id = %s", ("req-001",))
    content = canonical_content(values)
    (entry,) = backend.sql("SELECT seq, request_id, written_at, prev_hash FROM audit_chain WHERE seq = 4")
    forged = entry_hash(int(entry[0]), entry[1], entry[2], content, entry[3])
    backend.sql("UPDATE audit_chain SET content_hash = %s, entry_hash = %s WHERE seq = 4", (content, forged))
    report = verify_store(store, None)
    assert [(p.kind, p.seq) for p in report.problems] == [("reordered", 5)]


def test_two_replicas_writing_at_once_form_one_chain(backend: Backend) -> None:
    first, second = backend.open(), backend.open()
    try:
        barrier = threading.Barrier(2)

        def writer(store: AuditStore, offset: int) -> None:
            barrier.wait()
            for index in range(offset, offset + 25):
                write_request(store, index)

        threads = [threading.Thread(target=writer, args=(s, o)) for s, o in ((first, 0), (second, 100))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        report = verify_store(first, None)
        assert report.intact, report.problems
        assert (report.entries, report.rows) == (100, 50)
        seqs = [int(r[0]) for r in backend.sql("SELECT seq FROM audit_chain ORDER BY seq")]
        assert seqs == list(range(1, 101))
    finally:
        first.close()
        second.close()


def test_prune_deletes_old_records_keeps_holds_and_leaves_a_signed_checkpoint(
    store: AuditStore, backend: Backend
) -> None:
    keyring = Keyring(parse_keys(new_key_text("k1"), "test"))
    for index in range(3):
        write_request(store, index, days_ago=400)
    for index in range(3, 6):
        write_request(store, index)
    store.hold("req-001", "matter 2026-17", "test")
    result = prune_store(store, keyring, NOW - dt.timedelta(days=365))
    assert result.pruned == 2
    assert result.checkpoint is not None
    assert result.checkpoint.key_id == "k1"
    ids = sorted(r[0] for r in backend.sql(f"SELECT id FROM {backend.table}"))
    assert ids == ["req-001", "req-003", "req-004", "req-005"]
    report = verify_store(store, keyring)
    assert report.intact, report.problems
    # the held record is still protected by the checkpoint
    backend.sql(f"UPDATE {backend.table} SET answer = %s WHERE id = %s", ("edited", "req-001"))
    assert problems(store, keyring) == [("edited", "req-001")]
    backend.sql(f"UPDATE {backend.table} SET answer = %s WHERE id = %s", ("answer 1", "req-001"))
    # writes after a prune link to the checkpoint; a second prune carries the hold forward
    write_request(store, 6)
    assert prune_store(store, keyring, NOW - dt.timedelta(days=365)).pruned == 0
    assert verify_store(store, keyring).intact
    # a forged checkpoint (claims more was pruned) does not verify without the key
    backend.sql("UPDATE audit_checkpoints SET body = replace(body, '\"pruned\":2', '\"pruned\":3')")
    assert problems(store, keyring)[0][0] == "checkpoint"


def test_patient_text_is_encrypted_at_rest_and_read_back(backend: Backend) -> None:
    keyring = Keyring(parse_keys(new_key_text("k1"), "test"))
    store = SealedStore(backend.open(), keyring)
    try:
        row = make_row(1)
        row["question"] = "I am Ada Lovelace, NHS number 943 476 5919, can I take ibuprofen?"
        record = {**make_record(row), "messages": [{"role": "user", "content": row["question"]}]}
        record["verdicts"] = [{"label": "supported", "score": 0.9, "method": "anchor", "check": "quote"}]
        store.write_sync(row, record)
        assert store.get("req-001") == record
        (listed,) = store.list(AuditFilter())
        assert listed.question == row["question"]
        raw = " ".join(str(v) for r in backend.sql(f"SELECT * FROM {backend.table}") for v in r)
        assert "Lovelace" not in raw
        assert "943 476 5919" not in raw
        assert '"label":"supported"' in raw  # verdicts stay queryable in clear
        assert verify_store(store, None).intact  # the chain verifies without the key
    finally:
        store.close()


def test_keys_rotate_by_id_and_a_wrong_or_missing_key_stops_start_up(backend: Backend) -> None:
    old, new = new_key_text("k1"), new_key_text("k2")
    first = SealedStore(backend.open(), Keyring(parse_keys(old, "test")))
    write_request(first, 1)
    first.close()
    rotated = SealedStore(backend.open(), Keyring(parse_keys(f"{old},{new}", "test")))
    write_request(rotated, 2)
    assert rotated.get("req-001") is not None
    assert rotated.get("req-002") is not None
    assert rotated.keyring.current.key_id == "k2"
    rotated.close()
    inner = backend.open()
    try:
        with pytest.raises(ConfigurationError, match="k2"):
            check_key(inner, Keyring(parse_keys(new_key_text("k2"), "test")))  # same id, wrong key
        with pytest.raises(ConfigurationError, match="k2"):
            check_key(inner, None)  # encrypted records, no key configured
        check_key(inner, Keyring(parse_keys(f"{old},{new}", "test")))
    finally:
        inner.close()
