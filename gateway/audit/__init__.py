"""The audit trail: every request, committed before its response is sent.

Backends behind one ``AuditStore`` protocol (``base.py``): SQLite embedded (the default, one process)
and PostgreSQL (``GATEWAY_AUDIT_URL``, shared by replicas, schema migrated at start-up).
``open_audit_store`` picks one from the settings.
"""

from __future__ import annotations

from gateway.audit.base import AuditFilter, AuditRow, AuditStore
from gateway.audit.sqlite import AuditLog, SqliteAuditStore
from gateway.settings import Settings

__all__ = ["AuditFilter", "AuditLog", "AuditRow", "AuditStore", "SqliteAuditStore", "open_audit_store"]


def open_audit_store(settings: Settings) -> AuditStore:
    """PostgreSQL when ``audit_url`` is set, else the SQLite file under the data directory."""
    if settings.audit_url:
        from gateway.audit.postgres import PostgresAuditStore

        return PostgresAuditStore.open(
            settings.audit_url.reveal(), pool_size=settings.audit_pool_size, timeout=settings.audit_timeout
        )
    return AuditLog(settings.resolved_audit_path)
