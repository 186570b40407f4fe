"""The audit trail: every request, committed before its response is sent.

Backends behind one ``AuditStore`` protocol (``base.py``): SQLite embedded (the default, one process)
and PostgreSQL (``GATEWAY_AUDIT_URL``, shared by replicas, schema migrated at start-up).
``open_audit_store`` picks one from the settings.
"""

from __future__ import annotations

import structlog

from gateway.audit.crypto import Keyring
from gateway.audit.sealed import SealedStore, check_key
from gateway.audit.sqlite import AuditLog, SqliteAuditStore
from gateway.audit.store import AuditFilter, AuditRow, AuditStore
from gateway.settings import Settings

log = structlog.get_logger("gateway.audit")

__all__ = ["AuditFilter", "AuditLog", "AuditRow", "AuditStore", "SqliteAuditStore", "open_audit_store"]


def open_audit_store(settings: Settings) -> AuditStore:
    """PostgreSQL when ``audit_url`` is set, else the SQLite file under the data directory; wrapped
    in ``SealedStore`` when an audit key is configured. A configured key that cannot be read, or that
    does not decrypt the records already stored, stops start-up (ConfigurationError); no key at all
    is allowed with a warning (``audit_unencrypted``)."""
    keyring = load_keyring(settings)
    store: AuditStore
    if settings.audit_url:
        from gateway.audit.postgres import PostgresAuditStore

        store = PostgresAuditStore.open(
            settings.audit_url.reveal(), pool_size=settings.audit_pool_size, timeout=settings.audit_timeout
        )
    else:
        store = AuditLog(settings.resolved_audit_path)
    try:
        check_key(store, keyring)
    except BaseException:
        store.close()
        raise
    if keyring is None:
        log.warning(
            "audit_unencrypted",
            detail="no audit key (GATEWAY_AUDIT_KEY or GATEWAY_AUDIT_KEY_FILE): patient text is in clear",
        )
        return store
    log.info("audit_encrypted", key_id=keyring.current.key_id, keys=len(keyring.key_ids))
    return SealedStore(store, keyring)


def load_keyring(settings: Settings) -> Keyring | None:
    return Keyring.load(settings.audit_key.reveal(), settings.audit_key_file)
