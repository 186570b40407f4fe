"""Readiness checks of the stores a request depends on: real probes, not cached flags.

``/readyz`` runs them on every call. The knowledge store must catch up with the committed index
(reopening an embedded store another process wrote to), answer a count with at least one passage and
read one committed passage record afresh, as a search reads it (``ChromaStore.probe``); when
embedded, its directory must still exist and be readable (Chroma keeps serving
from open handles after its directory is deleted, which would otherwise go unnoticed). The audit store
must pass its backend's probe (``AuditStore.check``: a committed write on SQLite).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from gateway.errors import AuditError, StoreError
from gateway.vocabulary import AuditOperation

if TYPE_CHECKING:
    from gateway.audit import AuditStore
    from gateway.knowledge.store import KnowledgeStore
    from gateway.metrics import GatewayMetrics

CHROMA_DATABASE = "chroma.sqlite3"
"""The file an embedded Chroma directory must hold."""


@dataclass(frozen=True)
class Check:
    ok: bool
    detail: str
    """What failed, for the log: may name paths, hosts and driver errors."""
    passages: int | None = None
    public: str | None = None
    """What the open ``/readyz`` endpoint may say instead of ``detail`` (no hosts, no paths)."""

    @property
    def public_detail(self) -> str:
        return self.public if self.public is not None else self.detail


def _directory_problem(path: Path) -> str | None:
    if not path.is_dir():
        return "the store directory is missing"
    database = path / CHROMA_DATABASE
    if not os.access(path, os.R_OK | os.X_OK) or not os.access(database, os.R_OK):
        return "the store directory is not readable"
    return None


async def check_knowledge_store(store: KnowledgeStore, metrics: GatewayMetrics) -> Check:
    path = getattr(store, "path", None)
    if isinstance(path, Path):
        problem = _directory_problem(path)
        if problem is not None:
            return Check(False, problem)
    probe = getattr(store, "probe", None)
    try:
        passages = await (probe() if probe is not None else store.count())
    except StoreError as err:
        return Check(False, str(err), public="the knowledge store does not answer")
    quarantined = getattr(store, "quarantined_count", None)
    if quarantined is not None:
        metrics.knowledge_quarantined.set(quarantined())
    if passages == 0:
        return Check(False, "the knowledge store is empty", 0)
    return Check(True, "ok", passages)


async def check_audit_store(audit: AuditStore, metrics: GatewayMetrics) -> Check:
    try:
        await anyio.to_thread.run_sync(audit.check)
    except AuditError as err:
        metrics.audit_errors.labels(operation=AuditOperation.CHECK).inc()
        return Check(False, str(err), public="the audit store cannot be written")
    return Check(True, "ok")
