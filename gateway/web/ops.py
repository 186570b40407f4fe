"""Operations endpoints: liveness, readiness and Prometheus metrics."""

from __future__ import annotations

from typing import Any

from litestar import MediaType, Response, get

from gateway.errors import StoreError
from gateway.services import Services


@get("/healthz", summary="Liveness: the process is up", include_in_schema=True)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/readyz", summary="Readiness: the embedding model and the knowledge store are loaded")
async def readyz(services: Services) -> Response[Any]:
    try:
        passages = await services.store.count()
    except StoreError as err:
        return Response(
            {"status": "unavailable", "reason": str(err)}, status_code=503, media_type=MediaType.JSON
        )
    if passages == 0:
        return Response(
            {"status": "unavailable", "reason": "the knowledge store is empty"},
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
        },
        media_type=MediaType.JSON,
    )


@get("/metrics", summary="Prometheus metrics", media_type=MediaType.TEXT)
async def metrics(services: Services) -> Response[bytes]:
    return Response(services.metrics.render(), media_type=services.metrics.content_type)
