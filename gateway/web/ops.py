"""Operations endpoints: liveness, readiness and Prometheus metrics."""

from __future__ import annotations

from typing import Any

from litestar import MediaType, Response, get

from gateway.health import check_audit_store, check_knowledge_store
from gateway.services import Services


@get("/healthz", summary="Liveness: the process is up", include_in_schema=True)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/readyz", summary="Readiness: the knowledge store and the audit store pass a real check")
async def readyz(services: Services) -> Response[Any]:
    store = await check_knowledge_store(services)
    audit = await check_audit_store(services)
    checks = {
        "knowledge_store": {"ok": store.ok, "detail": store.detail},
        "audit_store": {"ok": audit.ok, "detail": audit.detail},
    }
    ready = store.ok and audit.ok
    services.metrics.ready.set(1 if ready else 0)
    if store.passages is not None:
        services.metrics.knowledge_passages.set(store.passages)
    if not ready:
        reason = "; ".join(c.detail for c in (store, audit) if not c.ok)
        return Response(
            {"status": "unavailable", "reason": reason, "checks": checks},
            status_code=503,
            media_type=MediaType.JSON,
        )
    return Response(
        {
            "status": "ready",
            "passages": store.passages,
            "checks": checks,
            "upstream": services.upstream.name,
            "verifier": services.verifier.name,
            "context": services.policy.context.name,
        },
        media_type=MediaType.JSON,
    )


@get("/metrics", summary="Prometheus metrics", media_type=MediaType.TEXT)
async def metrics(services: Services) -> Response[bytes]:
    return Response(services.metrics.render(), media_type=services.metrics.content_type)
