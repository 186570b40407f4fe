"""What the records features cost an audit write, and how long ``audit verify`` takes.

Run::

    PYTHONPATH=. .venv/bin/python bench/bench_audit_chain.py [--requests 500]

On a fresh SQLite file (in a temporary directory): each request's two writes (provisional, then
completed, with a record of about 6 KB like a real one) through the chained store, then through the
same store wrapped in encryption (``SealedStore``, AES-256-GCM); the per-request time median and p95,
and the ratio to the chained store. The baseline without a chain is the store's own upsert, timed
alone through the same connection (the chain adds one indexed read and one insert to the same
transaction). Then one ``verify`` of the whole trail. Asserts nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.audit import AuditLog
from gateway.audit.columns import ROW_COLUMNS
from gateway.audit.crypto import Keyring, new_key_text, parse_keys
from gateway.audit.integrity import verify_store
from gateway.audit.sealed import SealedStore
from gateway.audit.store import AuditStore

PASSAGE = "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours, up to 4 g in 24 hours. " * 8


def request(index: int, done: bool) -> tuple[dict[str, Any], bytes]:
    row = {
        "id": f"req_{index:08d}",
        "created_at": (dt.datetime(2026, 11, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=index)).isoformat(),
        "outcome": "answered" if done else "incomplete",
        "scope": "in_scope" if done else "pending",
        "refused": 0,
        "reason": None,
        "claims": 2 if done else 0,
        "rewritten": 0,
        "removed": 0,
        "question": "How much paracetamol can an adult take in one day?",
        "answer": PASSAGE[:160] if done else "",
    }
    record: dict[str, Any] = {"request_id": row["id"], "question": row["question"], "answer": row["answer"]}
    if done:
        record["passages"] = [
            {"id": f"p{i}", "document_id": "d", "text": PASSAGE, "score": 0.8} for i in range(8)
        ]
        record["verdicts"] = [{"label": "supported", "score": 0.93, "method": "anchor", "check": "quote"}] * 2
    return row, json.dumps(record).encode()


def timed(store: AuditStore, start: int, count: int) -> list[float]:
    seconds = []
    for index in range(start, start + count):
        began = time.perf_counter()
        store.write_sync(*request(index, done=False))
        store.write_sync(*request(index, done=True))
        seconds.append(time.perf_counter() - began)
    return seconds


def plain_upserts(path: Path, start: int, count: int) -> list[float]:
    """The same two upserts per request without the chain (the pre-#33 write), same pragmas."""
    db = sqlite3.connect(str(path), isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    columns = ", ".join((*ROW_COLUMNS, "record"))
    marks = ", ".join("?" for _ in range(len(ROW_COLUMNS) + 1))
    sql = f"INSERT OR REPLACE INTO requests ({columns}) VALUES ({marks})"
    seconds = []
    for index in range(start, start + count):
        began = time.perf_counter()
        for done in (False, True):
            row, record = request(index, done)
            db.execute("BEGIN IMMEDIATE")
            db.execute(sql, [*(row[c] for c in ROW_COLUMNS), record.decode()])
            db.execute("COMMIT")
        seconds.append(time.perf_counter() - began)
    db.close()
    return seconds


def line(name: str, seconds: list[float], baseline: float | None) -> str:
    median = statistics.median(seconds) * 1000
    p95 = statistics.quantiles(seconds, n=20)[-1] * 1000
    ratio = f"{median / baseline:5.2f}x" if baseline else "  1.00x"
    return f"{name:<28} median {median:7.3f} ms  p95 {p95:7.3f} ms  {ratio}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=500)
    n = parser.parse_args().requests
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "audit.sqlite3"
        store = AuditLog(path)
        plain = plain_upserts(path, 10 * n, n)  # the table exists now; these rows are outside the chain
        chained = timed(store, 0, n)
        sealed = timed(SealedStore(store, Keyring(parse_keys(new_key_text("bench"), "bench"))), n, n)
        with sqlite3.connect(path) as db:  # the unchained rows would be reported as inserted
            db.execute("DELETE FROM requests WHERE id >= ?", (f"req_{10 * n:08d}",))
        began = time.perf_counter()
        report = verify_store(store, None)
        verify_seconds = time.perf_counter() - began
        store.close()
    base = statistics.median(plain) * 1000
    print(f"SQLite, {n} requests per variant, two writes per request (provisional, completed)")
    print(line("upsert only (no chain)", plain, None))
    print(line("chained", chained, base))
    print(line("chained + encrypted", sealed, base))
    print(
        f"verify: {report.entries} entries, {report.rows} rows, "
        f"intact={report.intact}: {verify_seconds:.3f} s"
    )


if __name__ == "__main__":
    main()
