"""Operations endpoints: liveness, readiness and Prometheus metrics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import structlog
from litestar import MediaType, Response, get

from gateway.audit import AuditStore
from gateway.errors import RateLimiterUnavailable
from gateway.health import Check, check_audit_store, check_knowledge_store
from gateway.knowledge.store import KnowledgeStore
from gateway.metrics import GatewayMetrics
from gateway.vocabulary import Dependency
from gateway.web.rate_limits import LimiterHandle

log = structlog.get_logger("gateway.http")


@dataclass(frozen=True)
class Readiness:
    """What ``/readyz`` probes and reports (``gateway.web.parts``): the two stores, the metrics its
    gauges are set on, and the names a ready answer shows."""

    store: KnowledgeStore
    audit: AuditStore
    metrics: GatewayMetrics
    upstream: str
    verifier: str
    context: str
    rate_limits: str
    """``redis`` when the limits are shared (``GATEWAY_REDIS_URL``), else ``process``."""


@get("/healthz", summary="Liveness: the process is up", include_in_schema=True)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get(
    "/readyz",
    summary="Readiness: the knowledge store, the audit store and the rate limiter pass a real check",
)
async def readyz(readiness: Readiness, limiter: LimiterHandle) -> Response[Any]:
    """Ready only when every shared service a request needs answers now: the knowledge store (and
    holds passages, its embedded directory intact), the audit store (a committed probe write on
    SQLite, a query on PostgreSQL), and the rate limiter (Redis PING when shared). Each result is
    exported as ``gateway_dependency_up{dependency}``; a 503 names every failed dependency so an
    orchestrator takes this replica out of the Service. Driver details (they name hosts) go to the log."""
    results = {
        Dependency.KNOWLEDGE_STORE: await check_knowledge_store(readiness.store, readiness.metrics),
        Dependency.AUDIT_STORE: await check_audit_store(readiness.audit, readiness.metrics),
        Dependency.RATE_LIMITER: await _check_limiter(limiter),
    }
    failed = sorted(name for name, check in results.items() if not check.ok)
    for dependency, check in results.items():
        readiness.metrics.dependency_up.labels(dependency=dependency).set(1 if check.ok else 0)
    readiness.metrics.ready.set(0 if failed else 1)
    store = results[Dependency.KNOWLEDGE_STORE]
    if store.passages is not None:
        readiness.metrics.knowledge_passages.set(store.passages)
    checks = {name: {"ok": c.ok, "detail": c.public_detail} for name, c in results.items()}
    if failed:
        for name in failed:
            log.warning("readiness_failed", dependency=name, detail=results[name].detail)
        reason = "; ".join(f"{name}: {results[name].public_detail}" for name in failed)
        return Response(
            {"status": "unavailable", "reason": reason, "failed": failed, "checks": checks},
            status_code=503,
            media_type=MediaType.JSON,
        )
    return Response(
        {
            "status": "ready",
            "passages": store.passages,
            "checks": checks,
            "upstream": readiness.upstream,
            "verifier": readiness.verifier,
            "context": readiness.context,
            "audit": readiness.audit.backend,
            "rate_limits": readiness.rate_limits,
        },
        media_type=MediaType.JSON,
    )


async def _check_limiter(limiter: LimiterHandle) -> Check:
    try:
        await anyio.to_thread.run_sync(limiter.limiter.check)
    except RateLimiterUnavailable as err:
        return Check(False, f"{type(err).__name__}: {err}", public="the rate limiter does not answer")
    return Check(True, "ok")


@get("/metrics", summary="Prometheus metrics", media_type=MediaType.TEXT)
async def metrics(gauges: GatewayMetrics) -> Response[bytes]:
    return Response(gauges.render(), media_type=gauges.content_type)
