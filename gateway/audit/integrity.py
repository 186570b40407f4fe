"""Verify a store's chain, and prune it by the retention limit leaving a signed checkpoint.

A checkpoint is signed with HMAC-SHA256 under the newest audit key (``Keyring.sign``) when a key is
configured; without one it is a plain hash checkpoint (``sha256:`` of its body), which shows that the
checkpoint is whole but not who wrote it: ``verify`` says so as a warning.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator
from dataclasses import replace

import gateway.audit.ledger as ledger
from gateway.audit.chain import ChainHead, ChainReport, Checkpoint, verify_chain
from gateway.audit.crypto import Keyring
from gateway.audit.record import UNFINISHED
from gateway.audit.store import AuditStore

HASH_PREFIX = "sha256:"


def sign_checkpoint(keyring: Keyring | None, checkpoint: Checkpoint) -> tuple[Checkpoint, str]:
    """The checkpoint with the signing key's id, and its signature (a plain hash without a key)."""
    if keyring is None:
        body = checkpoint.body()
        return checkpoint, HASH_PREFIX + hashlib.sha256(body.encode("utf-8")).hexdigest()
    signed = replace(checkpoint, key_id=keyring.current.key_id)
    return signed, keyring.sign(signed.body())


def checkpoint_problem(
    stored: ledger.StoredCheckpoint | None, keyring: Keyring | None
) -> tuple[str | None, str | None]:
    """``(problem, warning)`` about the newest checkpoint's signature."""
    if stored is None:
        return None, None
    key_id = stored.checkpoint.key_id
    if key_id is None:
        expected = HASH_PREFIX + hashlib.sha256(stored.body.encode("utf-8")).hexdigest()
        if stored.signature != expected:
            return "the retention checkpoint does not match its hash (it was edited)", None
        return None, None
    if keyring is None:
        return (
            None,
            f"the retention checkpoint is signed with audit key {key_id!r}; not checked without the key",
        )
    if key_id not in keyring.key_ids:
        return f"the retention checkpoint is signed with audit key {key_id!r}, which is not configured", None
    if not keyring.verify(stored.body, key_id, stored.signature):
        return "the retention checkpoint's signature does not verify (it was edited or forged)", None
    return None, None


def verify_store(
    store: AuditStore, keyring: Keyring | None, expect_head: ChainHead | None = None
) -> ChainReport:
    """Walk one consistent snapshot of the store's chain and rows (see ``chain.verify_chain``)."""

    def consume(snapshot: ledger.ChainSnapshot) -> ChainReport:
        stored = snapshot.checkpoint
        problem, warning = checkpoint_problem(stored, keyring)
        unfinished: list[tuple[str, str]] = []

        def rows() -> Iterator[tuple[str, str]]:
            for request_id, content, outcome in snapshot.contents:
                if outcome in UNFINISHED:
                    unfinished.append((request_id, outcome))
                yield request_id, content

        report = verify_chain(
            snapshot.entries,
            rows(),
            stored.checkpoint if stored else None,
            checkpoint_problem=problem,
            expect_head=expect_head,
        )
        warnings = (*report.warnings, *([warning] if warning else []))
        return replace(report, warnings=warnings, unfinished=tuple(unfinished))

    return store.read_chain(consume)


def retention_cutoff(days: int, now: dt.datetime | None = None) -> dt.datetime:
    """The moment before which records are older than ``days`` days."""
    return (now or dt.datetime.now(dt.UTC)) - dt.timedelta(days=days)


def prune_store(store: AuditStore, keyring: Keyring | None, cutoff: dt.datetime) -> ledger.PruneResult:
    """Delete the records created before ``cutoff`` that are not on legal hold; leave a checkpoint."""
    return store.prune(cutoff, lambda checkpoint: sign_checkpoint(keyring, checkpoint))
