"""The chain head, exported and logged periodically so that it can be anchored outside the database.

``chain_heartbeat`` runs for the life of the serving process: at start-up and then every
``audit_chain_log_seconds`` it reads the head (one indexed query), sets
``gateway_audit_chain_head_seq`` and ``gateway_audit_chain_head_hash52`` and logs
``audit_chain_head`` with the full ``SEQ:SHA256``, which ``trust-gateway audit verify --expect-head``
takes back. A failed read is logged and counted (``gateway_audit_errors_total{operation="check"}``);
the next beat tries again.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import anyio.to_thread
import structlog

from gateway.audit.chain import ChainHead
from gateway.errors import AuditError
from gateway.metrics import GatewayMetrics
from gateway.vocabulary import AuditOperation

log = structlog.get_logger("gateway.audit")

HASH_DIGITS = 13
"""Hex digits of the head's hash in the gauge: 52 bits, exact in a float64."""


def export_head(head: ChainHead, metrics: GatewayMetrics) -> None:
    metrics.audit_chain_seq.set(head.seq)
    metrics.audit_chain_hash.set(int(head.entry_hash[:HASH_DIGITS], 16))
    log.info("audit_chain_head", head=head.text(), seq=head.seq)


async def beat(read_head: Callable[[], ChainHead], metrics: GatewayMetrics) -> None:
    """Read, export and log the head once; a failed read is logged and counted."""
    try:
        head = await anyio.to_thread.run_sync(read_head)
    except AuditError as err:
        metrics.audit_errors.labels(operation=AuditOperation.CHECK).inc()
        log.warning("audit_chain_head_unavailable", error=str(err))
        return
    export_head(head, metrics)


async def chain_heartbeat(
    read_head: Callable[[], ChainHead], metrics: GatewayMetrics, interval: float
) -> None:
    """``beat`` every ``interval`` seconds until cancelled (the lifespan beats once at start-up)."""
    while True:
        await anyio.sleep(interval)
        await beat(read_head, metrics)
