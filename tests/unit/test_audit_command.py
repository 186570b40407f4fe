"""``trust-gateway audit ...`` on an SQLite audit file: exit codes and what the operator reads."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gateway.audit import AuditLog
from gateway.audit.crypto import parse_keys
from gateway.cli import main


@pytest.fixture
def audit_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "audit.sqlite3"
    for name in (
        "GATEWAY_AUDIT_KEY",
        "GATEWAY_AUDIT_KEY_FILE",
        "GATEWAY_AUDIT_URL",
        "GATEWAY_AUDIT_RETENTION_DAYS",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GATEWAY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("GATEWAY_AUDIT_PATH", str(path))
    store = AuditLog(path)
    for index in range(3):
        row = {
            "id": f"req-{index}",
            "created_at": f"2026-11-2{index}T09:00:00+00:00",
            "outcome": "answered",
            "scope": "in_scope",
            "refused": 0,
            "reason": None,
            "claims": 1,
            "rewritten": 0,
            "removed": 0,
            "question": "q",
            "answer": "a",
        }
        store.write_sync(row, {"request_id": row["id"]})
    store.close()
    return path


def test_verify_says_intact_then_names_the_edited_record(
    audit_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", "verify"]) == 0
    assert "intact: 3 chain entries, 3 records" in capsys.readouterr().out
    with sqlite3.connect(audit_path) as conn:
        conn.execute("UPDATE requests SET outcome = 'refused' WHERE id = 'req-1'")
    assert main(["audit", "verify"]) == 1
    assert "NOT INTACT: first problem: edited: request req-1" in capsys.readouterr().out


def test_head_is_what_verify_takes_back(audit_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "head"]) == 0
    head = capsys.readouterr().out.strip()
    assert head.startswith("3:")
    assert main(["audit", "verify", "--expect-head", head]) == 0
    assert main(["audit", "verify", "--expect-head", "9:" + "0" * 64]) == 1
    assert "newest entries were deleted" in capsys.readouterr().out
    assert main(["audit", "verify", "--expect-head", "nonsense"]) == 2


def test_keygen_prints_a_key_the_keyring_reads(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "keygen", "--id", "ward7-2026"]) == 0
    (key,) = parse_keys(capsys.readouterr().out.strip(), "test")
    assert key.key_id == "ward7-2026"
    assert len(key.secret) == 32


def test_prune_needs_a_retention_limit_and_holds_need_a_known_request(
    audit_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", "prune"]) == 2
    assert "retention is off" in capsys.readouterr().err
    assert main(["audit", "hold", "no-such", "--reason", "case 1"]) == 2
    assert main(["audit", "hold", "req-0", "--reason", "case 1"]) == 0
    assert main(["audit", "holds"]) == 0
    assert "req-0" in capsys.readouterr().out
    assert main(["audit", "prune", "--days", "1"]) == 0  # all three are older than a day; one is held
    out = capsys.readouterr()
    assert "pruned 2 records" in out.out
    assert "below the six months" in out.err
    assert main(["audit", "verify"]) == 0
    assert main(["audit", "release", "req-0"]) == 0
    assert main(["audit", "release", "req-0"]) == 2


def test_a_configured_key_file_that_is_missing_stops_with_a_clear_error(
    audit_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GATEWAY_AUDIT_KEY_FILE", str(audit_path.parent / "missing.key"))
    assert main(["audit", "verify"]) == 2
    err = capsys.readouterr().err
    assert "GATEWAY_AUDIT_KEY_FILE" in err
    assert "cannot read the audit key file" in err
