"""The tamper-evident chain, retention with signed checkpoints, legal holds and encryption at rest,
on both backends (SQLite, and a real PostgreSQL on loopback), edited the way an insider with database
access would: raw SQL on the tables, not the gateway's API."""

from __future__ import annotations

import datetime as dt
import threading
from typing import Any

import pytest

from gateway.audit import AuditFilter, AuditStore
from gateway.audit.chain import ChainHead
from gateway.audit.columns import ROW_COLUMNS
from gateway.audit.crypto import Keyring, new_key_text, parse_keys
from gateway.audit.integrity import prune_store, verify_store
from gateway.audit.sealed import SealedStore, check_key
from gateway.errors import ConfigurationError
from tests.support.audit import Backend

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


def write_request(audit_store: AuditStore, index: int, days_ago: float = 0.0) -> None:
    """A request's two writes: the provisional row, then the completed one (as the pipeline does)."""
    provisional = make_row(index, days_ago=days_ago, outcome="incomplete")
    audit_store.write_sync(provisional, make_record(provisional))
    completed = make_row(index, days_ago=days_ago)
    audit_store.write_sync(completed, make_record(completed))


def problems(
    audit_store: AuditStore, keyring: Keyring | None = None, anchor: ChainHead | None = None
) -> list[tuple[str, str | None]]:
    report = verify_store(audit_store, keyring, anchor)
    return [(p.kind, p.request_id) for p in report.problems]


def test_every_write_is_chained_and_the_chain_verifies(audit_store: AuditStore) -> None:
    for index in range(5):
        write_request(audit_store, index)
    report = verify_store(audit_store, None)
    assert report.intact, report.problems
    assert (report.entries, report.rows) == (10, 5)
    assert audit_store.chain_head() == report.head
    assert report.head.seq == 10


def test_an_edited_row_is_named(audit_store: AuditStore, audit_backend: Backend) -> None:
    for index in range(4):
        write_request(audit_store, index)
    audit_backend.sql(
        f"UPDATE {audit_backend.table} SET answer = %s WHERE id = %s", ("a kinder answer", "req-002")
    )
    assert problems(audit_store) == [("edited", "req-002")]
    audit_backend.sql(f"UPDATE {audit_backend.table} SET answer = %s WHERE id = %s", ("answer 2", "req-002"))
    assert problems(audit_store) == []  # the same content again hashes the same


def test_a_deleted_row_and_an_inserted_row_are_named(audit_store: AuditStore, audit_backend: Backend) -> None:
    for index in range(4):
        write_request(audit_store, index)
    audit_backend.sql(f"DELETE FROM {audit_backend.table} WHERE id = %s", ("req-001",))
    assert problems(audit_store) == [("deleted", "req-001")]
    audit_backend.sql(
        f"INSERT INTO {audit_backend.table} ({COLUMNS}) SELECT 'req-forged', {COLUMNS.split(', ', 1)[1]} "
        f"FROM {audit_backend.table} WHERE id = 'req-002'"
    )
    assert problems(audit_store) == [("deleted", "req-001"), ("inserted", "req-forged")]


def test_deleted_reordered_and_rewritten_chain_entries_are_named(
    audit_store: AuditStore, audit_backend: Backend
) -> None:
    for index in range(4):
        write_request(audit_store, index)
    # the row and all its entries deleted together: the gap in the chain names it
    audit_backend.sql("DELETE FROM audit_chain WHERE request_id = %s", ("req-003",))
    audit_backend.sql(f"DELETE FROM {audit_backend.table} WHERE id = %s", ("req-003",))
    report = verify_store(audit_store, None)
    assert report.head.seq == 6
    assert problems(audit_store) == []  # the tail is gone without a trace in the chain itself ...
    assert problems(audit_store, anchor=ChainHead(8, "0" * 64)) == [
        ("deleted", None)
    ]  # ... but not from an anchor
    # two entries swapped (their seq exchanged): the first one out of order is named
    audit_backend.sql("UPDATE audit_chain SET seq = 100 WHERE seq = 3")
    audit_backend.sql("UPDATE audit_chain SET seq = 3 WHERE seq = 4")
    audit_backend.sql("UPDATE audit_chain SET seq = 4 WHERE seq = 100")
    report = verify_store(audit_store, None)
    assert report.problems[0].seq == 3
    assert report.problems[0].kind == "edited"


def test_a_rewritten_entry_breaks_the_link_of_the_next(
    audit_store: AuditStore, audit_backend: Backend
) -> None:
    """An insider who edits a row and recomputes its entry's hashes is caught by the next entry."""
    from gateway.audit.chain import canonical_content, entry_hash

    for index in range(3):
        write_request(audit_store, index)
    audit_backend.sql(f"UPDATE {audit_backend.table} SET answer = %s WHERE id = %s", ("edited", "req-001"))
    (values,) = audit_backend.sql(f"SELECT {COLUMNS} FROM {audit_backend.table} WHERE id = %s", ("req-001",))
    content = canonical_content(values)
    (entry,) = audit_backend.sql(
        "SELECT seq, request_id, written_at, prev_hash FROM audit_chain WHERE seq = 4"
    )
    forged = entry_hash(int(entry[0]), entry[1], entry[2], content, entry[3])
    audit_backend.sql(
        "UPDATE audit_chain SET content_hash = %s, entry_hash = %s WHERE seq = 4", (content, forged)
    )
    report = verify_store(audit_store, None)
    assert [(p.kind, p.seq) for p in report.problems] == [("reordered", 5)]


def test_two_replicas_writing_at_once_form_one_chain(audit_backend: Backend) -> None:
    first, second = audit_backend.open(), audit_backend.open()
    try:
        barrier = threading.Barrier(2)

        def writer(audit_store: AuditStore, offset: int) -> None:
            barrier.wait()
            for index in range(offset, offset + 25):
                write_request(audit_store, index)

        threads = [threading.Thread(target=writer, args=(s, o)) for s, o in ((first, 0), (second, 100))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        report = verify_store(first, None)
        assert report.intact, report.problems
        assert (report.entries, report.rows) == (100, 50)
        seqs = [int(r[0]) for r in audit_backend.sql("SELECT seq FROM audit_chain ORDER BY seq")]
        assert seqs == list(range(1, 101))
    finally:
        first.close()
        second.close()


def test_prune_deletes_old_records_keeps_holds_and_leaves_a_signed_checkpoint(
    audit_store: AuditStore, audit_backend: Backend
) -> None:
    keyring = Keyring(parse_keys(new_key_text("k1"), "test"))
    for index in range(3):
        write_request(audit_store, index, days_ago=400)
    for index in range(3, 6):
        write_request(audit_store, index)
    audit_store.hold("req-001", "matter 2026-17", "test")
    result = prune_store(audit_store, keyring, NOW - dt.timedelta(days=365))
    assert result.pruned == 2
    assert result.checkpoint is not None
    assert result.checkpoint.key_id == "k1"
    ids = sorted(r[0] for r in audit_backend.sql(f"SELECT id FROM {audit_backend.table}"))
    assert ids == ["req-001", "req-003", "req-004", "req-005"]
    report = verify_store(audit_store, keyring)
    assert report.intact, report.problems
    # the held record is still protected by the checkpoint
    audit_backend.sql(f"UPDATE {audit_backend.table} SET answer = %s WHERE id = %s", ("edited", "req-001"))
    assert problems(audit_store, keyring) == [("edited", "req-001")]
    audit_backend.sql(f"UPDATE {audit_backend.table} SET answer = %s WHERE id = %s", ("answer 1", "req-001"))
    # writes after a prune link to the checkpoint; a second prune carries the hold forward
    write_request(audit_store, 6)
    assert prune_store(audit_store, keyring, NOW - dt.timedelta(days=365)).pruned == 0
    assert verify_store(audit_store, keyring).intact
    # a forged checkpoint (claims more was pruned) does not verify without the key
    audit_backend.sql("UPDATE audit_checkpoints SET body = replace(body, '\"pruned\":2', '\"pruned\":3')")
    assert problems(audit_store, keyring)[0][0] == "checkpoint"


def test_patient_text_is_encrypted_at_rest_and_read_back(audit_backend: Backend) -> None:
    keyring = Keyring(parse_keys(new_key_text("k1"), "test"))
    audit_store = SealedStore(audit_backend.open(), keyring)
    try:
        row = make_row(1)
        row["question"] = "I am Ada Lovelace, NHS number 943 476 5919, can I take ibuprofen?"
        record = {**make_record(row), "messages": [{"role": "user", "content": row["question"]}]}
        record["verdicts"] = [{"label": "supported", "score": 0.9, "method": "anchor", "check": "quote"}]
        audit_store.write_sync(row, record)
        assert audit_store.get("req-001") == record
        (listed,) = audit_store.list(AuditFilter())
        assert listed.question == row["question"]
        raw = " ".join(str(v) for r in audit_backend.sql(f"SELECT * FROM {audit_backend.table}") for v in r)
        assert "Lovelace" not in raw
        assert "943 476 5919" not in raw
        assert '"label":"supported"' in raw  # verdicts stay queryable in clear
        assert verify_store(audit_store, None).intact  # the chain verifies without the key
    finally:
        audit_store.close()


def test_keys_rotate_by_id_and_a_wrong_or_missing_key_stops_start_up(audit_backend: Backend) -> None:
    old, new = new_key_text("k1"), new_key_text("k2")
    first = SealedStore(audit_backend.open(), Keyring(parse_keys(old, "test")))
    write_request(first, 1)
    first.close()
    rotated = SealedStore(audit_backend.open(), Keyring(parse_keys(f"{old},{new}", "test")))
    write_request(rotated, 2)
    assert rotated.get("req-001") is not None
    assert rotated.get("req-002") is not None
    assert rotated.keyring.current.key_id == "k2"
    rotated.close()
    inner = audit_backend.open()
    try:
        with pytest.raises(ConfigurationError, match="k2"):
            check_key(inner, Keyring(parse_keys(new_key_text("k2"), "test")))  # same id, wrong key
        with pytest.raises(ConfigurationError, match="k2"):
            check_key(inner, None)  # encrypted records, no key configured
        check_key(inner, Keyring(parse_keys(f"{old},{new}", "test")))
    finally:
        inner.close()
