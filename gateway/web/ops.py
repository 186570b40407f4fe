"""Operations endpoints: liveness, readiness and Prometheus metrics."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
import structlog
from litestar import MediaType, Response, get

from gateway.errors import AuditError, RateLimiterUnavailable, StoreError
from gateway.services import Services
from gateway.web.auth import LimiterHandle

log = structlog.get_logger("gateway.http")


@get("/healthz", summary="Liveness: the process is up", include_in_schema=True)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get(
    "/readyz",
    summary="Readiness: the knowledge store, the audit store and the rate limiter answer",
)
async def readyz(services: Services, limiter: LimiterHandle) -> Response[Any]:
    """Ready only when every shared service a request needs answers now: the knowledge store (and
    holds passages), the audit store (a read on its table), and the rate limiter (Redis PING when
    shared). Each result is exported as ``gateway_dependency_up{dependency}``; a 503 names every
    failed dependency so an orchestrator takes this replica out of the Service."""
    failures: dict[str, str] = {}
    passages = 0
    try:
        passages = await services.store.count()
        if passages == 0:
            failures["knowledge_store"] = "the knowledge store is empty"
    except StoreError as err:
        failures["knowledge_store"] = _failed("knowledge_store", err)
    try:
        await anyio.to_thread.run_sync(services.audit.check)
    except AuditError as err:
        failures["audit_store"] = _failed("audit_store", err)
    try:
        await anyio.to_thread.run_sync(limiter.limiter.check)
    except RateLimiterUnavailable as err:
        failures["rate_limiter"] = _failed("rate_limiter", err)
    for dependency in ("knowledge_store", "audit_store", "rate_limiter"):
        services.metrics.dependency_up.labels(dependency=dependency).set(0 if dependency in failures else 1)
    if failures:
        reason = "; ".join(f"{name}: {why}" for name, why in failures.items())
        return Response(
            {"status": "unavailable", "reason": reason, "failed": sorted(failures)},
            status_code=503,
            media_type=MediaType.JSON,
        )
    services.metrics.knowledge_passages.set(passages)
    return Response(
        {
            "status": "ready",
            "passages": passages,
            "upstream": services.upstream.name,
            "verifier": services.verifier.name,
            "context": services.policy.context.name,
            "audit": services.audit.backend,
            "rate_limits": "redis" if services.settings.redis_url else "process",
        },
        media_type=MediaType.JSON,
    )


def _failed(dependency: str, error: Exception) -> str:
    """Log the detail (it names hosts); the open endpoint only says which dependency failed."""
    log.warning("readiness_failed", dependency=dependency, error_type=type(error).__name__, detail=str(error))
    return f"the {dependency.replace('_', ' ')} does not answer"


@get("/metrics", summary="Prometheus metrics", media_type=MediaType.TEXT)
async def metrics(services: Services) -> Response[bytes]:
    return Response(services.metrics.render(), media_type=services.metrics.content_type)
