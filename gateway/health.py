"""Readiness checks of the stores a request depends on: real probes, not cached flags.

``/readyz`` runs them on every call. The knowledge store must answer a count with at least one
passage and, when embedded, its directory must still exist and be readable (Chroma keeps serving
from open handles after its directory is deleted, which would otherwise go unnoticed). The audit store
must commit a probe write (``AuditLog.check``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gateway.errors import AuditError, StoreError

if TYPE_CHECKING:
    from gateway.services import Services

CHROMA_DATABASE = "chroma.sqlite3"
"""The file an embedded Chroma directory must hold."""


@dataclass(frozen=True)
class Check:
    ok: bool
    detail: str
    passages: int | None = None


def _directory_problem(path: Path) -> str | None:
    if not path.is_dir():
        return f"the store directory {path} is missing"
    database = path / CHROMA_DATABASE
    if not os.access(path, os.R_OK | os.X_OK) or not os.access(database, os.R_OK):
        return f"the store directory {path} is not readable"
    return None


async def check_knowledge_store(services: Services) -> Check:
    path = getattr(services.store, "path", None)
    if isinstance(path, Path):
        problem = _directory_problem(path)
        if problem is not None:
            return Check(False, problem)
    try:
        passages = await services.store.count()
    except StoreError as err:
        return Check(False, str(err))
    if passages == 0:
        return Check(False, "the knowledge store is empty", 0)
    return Check(True, "ok", passages)


async def check_audit_store(services: Services) -> Check:
    try:
        await services.audit.check()
    except AuditError as err:
        services.metrics.audit_errors.labels(operation="check").inc()
        return Check(False, str(err))
    return Check(True, "ok")
