"""``SealedStore``: an ``AuditStore`` that encrypts patient text before the backend sees it.

With an audit key configured, ``open_audit_store`` wraps the backend in this. On ``write``:

- the row's ``question`` and ``answer`` columns are sealed (``gateway.audit.crypto``);
- the record (the patient's messages, the question, the model's draft, statements, claims, quotes,
  the answer, the user and metadata: everything) is sealed whole, and stored as an envelope
  ``{"sealed": TOKEN, "clear": {...}}`` whose ``clear`` part keeps what must stay queryable without
  the key: ids, times, status, model, triage scope and layer, each claim's verdict, score, method,
  check, reason and evidence passage id, each claim's outcome, the trust summary, the passages' ids
  and scores, timings, the error's type and stage, the upstream, verifier (and the operating point it
  checked at) and operating context.

Reads (``get``, ``get_text``, ``list``) decrypt, so the pages and the export see plaintext; a value
under a key that is not configured raises ``KeyUnavailable`` naming the key id. The chain hashes what
is stored (the ciphertext), so ``audit verify`` needs no key. Records written before a key was
configured stay as they were and read as before.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

import anyio.to_thread

import gateway.audit.ledger as ledger
from gateway.audit.chain import ChainHead, Checkpoint
from gateway.audit.crypto import Keyring, KeyUnavailable, is_sealed
from gateway.audit.store import AuditFilter, AuditRow, AuditStore, RecordJson, record_json, record_text
from gateway.validation import refuse

T = TypeVar("T")

_CLEAR_TOP = ("request_id", "created_at", "status", "model", "stream", "interruption", "upstream", "verifier")
_CLEAR_VERDICT = ("label", "score", "method", "check", "reason", "failure")


def clear_part(record: Mapping[str, Any]) -> dict[str, Any]:
    """What stays readable without the key (see the module docstring); never patient or model text."""
    clear: dict[str, Any] = {k: record[k] for k in _CLEAR_TOP if k in record}
    if "context" in record:
        clear["context"] = record["context"]
    triage = record.get("triage")
    if isinstance(triage, Mapping):
        clear["triage"] = {k: triage.get(k) for k in ("scope", "layer", "rule")}
    verdicts = record.get("verdicts") or []
    clear["verdicts"] = [
        {
            **{k: v.get(k) for k in _CLEAR_VERDICT},
            "passage_id": (v.get("evidence") or {}).get("passage_id"),
        }
        for v in verdicts
        if isinstance(v, Mapping)
    ]
    clear["cleanup"] = [
        {"outcome": c.get("outcome")} for c in record.get("cleanup") or [] if isinstance(c, Mapping)
    ]
    trust = record.get("trust")
    if isinstance(trust, Mapping):
        summary = trust.get("summary")
        if isinstance(summary, Mapping):
            clear["summary"] = {k: v for k, v in summary.items() if k != "detail"}
        if "operating_point" in trust:
            clear["operating_point"] = trust["operating_point"]
    clear["passages"] = [
        {k: p.get(k) for k in ("id", "document_id", "score")}
        for p in record.get("passages") or []
        if isinstance(p, Mapping)
    ]
    if isinstance(record.get("timings"), Mapping):
        clear["timings"] = record["timings"]
    error = record.get("error")
    if isinstance(error, Mapping):
        clear["error"] = {k: error.get(k) for k in ("type", "stage")}
    return clear


class SealedStore:
    """Encrypts patient text on the way in and decrypts it on the way out (see the module docstring)."""

    def __init__(self, inner: AuditStore, keyring: Keyring) -> None:
        self.inner = inner
        self.keyring = keyring
        self.backend = inner.backend

    # --- writing --------------------------------------------------------------------------------

    def seal(self, row: Mapping[str, Any], record: RecordJson) -> tuple[dict[str, Any], bytes]:
        request_id = str(row["id"])
        text = record_text(record)
        plain = json.loads(text)
        envelope = {"sealed": self.keyring.seal(text.encode("utf-8"), request_id), "clear": clear_part(plain)}
        sealed_row = dict(row)
        for column in ("question", "answer"):
            sealed_row[column] = self.keyring.seal(str(row[column]).encode("utf-8"), f"{request_id}/{column}")
        return sealed_row, json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    async def write(self, row: Mapping[str, Any], record: RecordJson) -> None:
        await anyio.to_thread.run_sync(self.write_sync, row, record)

    def write_sync(self, row: Mapping[str, Any], record: RecordJson) -> None:
        self.inner.write_sync(*self.seal(row, record))

    # --- reading --------------------------------------------------------------------------------

    def unseal_text(self, request_id: str, text: str) -> str:
        """A stored record's plaintext JSON (an unsealed record as it is)."""
        if not text.startswith('{"sealed":'):
            return text
        envelope = json.loads(text)
        token = envelope.get("sealed") if isinstance(envelope, dict) else None
        if not isinstance(token, str) or not is_sealed(token):
            return text
        return self.keyring.open(token, request_id).decode("utf-8")

    def _column(self, request_id: str, column: str, value: str) -> str:
        return (
            self.keyring.open(value, f"{request_id}/{column}").decode("utf-8") if is_sealed(value) else value
        )

    def list(self, flt: AuditFilter) -> list[AuditRow]:
        return [
            replace(
                row,
                question=self._column(row.id, "question", row.question),
                answer=self._column(row.id, "answer", row.answer),
            )
            for row in self.inner.list(flt)
        ]

    def get_text(self, request_id: str) -> str | None:
        text = self.inner.get_text(request_id)
        return None if text is None else self.unseal_text(request_id, text)

    def get(self, request_id: str) -> dict[str, Any] | None:
        return record_json(self.get_text(request_id))

    def count(self) -> int:
        return self.inner.count()

    def check(self) -> None:
        self.inner.check()

    def close(self) -> None:
        self.inner.close()

    # --- the ledger: stored values as they are (the chain hashes the ciphertext) ---------------

    def chain_head(self) -> ChainHead:
        return self.inner.chain_head()

    def read_chain(self, consume: Callable[[ledger.ChainSnapshot], T]) -> T:
        return self.inner.read_chain(consume)

    def records_between(self, since: dt.datetime, until: dt.datetime) -> ledger.RecordTexts:
        return [(rid, self.unseal_text(rid, text)) for rid, text in self.inner.records_between(since, until)]

    def prune(
        self, cutoff: dt.datetime, sign: Callable[[Checkpoint], tuple[Checkpoint, str]]
    ) -> ledger.PruneResult:
        return self.inner.prune(cutoff, sign)

    def hold(self, request_id: str, reason: str, held_by: str) -> None:
        self.inner.hold(request_id, reason, held_by)

    def release(self, request_id: str) -> bool:
        return self.inner.release(request_id)

    def holds(self) -> ledger.Holds:
        return self.inner.holds()

    def log_access(self, entry: ledger.AccessEntry) -> None:
        self.inner.log_access(entry)

    def access_log(self, limit: int, offset: int = 0) -> ledger.AccessEntries:
        return self.inner.access_log(limit, offset)


KEY_CHECK_ROWS = 20
"""How many of the newest rows start-up decrypts to prove the configured key is the right one."""


def check_key(store: AuditStore, keyring: Keyring | None) -> None:
    """Stop start-up (ConfigurationError) when the newest stored rows are sealed under a key that is
    not configured or does not decrypt them, or are sealed while no key is configured."""
    for row in store.list(AuditFilter(limit=KEY_CHECK_ROWS)):
        if not is_sealed(row.question):
            continue
        key_id = row.question.removeprefix("gwenc1:").partition(":")[0]
        if keyring is None:
            refuse(
                "GATEWAY_AUDIT_KEY",
                key_id,
                "the audit trail holds records encrypted with this key; configure it "
                "(GATEWAY_AUDIT_KEY or GATEWAY_AUDIT_KEY_FILE)",
            )
        try:
            keyring.open(row.question, f"{row.id}/question")
        except KeyUnavailable as err:
            source = "GATEWAY_AUDIT_KEY"
            refuse(source, key_id, f"{err} (request {row.id}); is it the right key?")
