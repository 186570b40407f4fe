"""``POST /v1/retrieve``: the knowledge base's hybrid search, for integrators and evaluation.

Request: ``{"query": "...", "k": 10, "tiers": [...], "orgs": [...]}`` (k, tiers and orgs optional).
Response: ``{"passages": [{"id", "document_id", "score", "title", "url", "org", "tier", "text"}]}``,
best first; ``score`` is the relevance in [0, 1] the relevance gate uses (docs/knowledge.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import MediaType, Request, Response, post

from gateway.domain import Passage
from gateway.errors import RequestError
from gateway.knowledge.store import KnowledgeStore, SearchFilters
from gateway.pipeline.stages import Stage, StageRunner
from gateway.services import Services
from gateway.web.chat_schema import parse_json_object
from gateway.web.openapi_bodies import RETRIEVE_BODY, with_body

DEFAULT_K = 10
_FIELDS = frozenset({"query", "k", "tiers", "orgs"})


@dataclass(frozen=True)
class RetrieveRequest:
    query: str
    k: int
    filters: SearchFilters


def _strings(data: dict[str, Any], name: str) -> tuple[str, ...]:
    value = data.get(name)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise RequestError(f"'{name}' must be a list of non-empty strings.", param=name, code="invalid_type")
    return tuple(v.strip() for v in value)


def parse_retrieve_request(body: bytes, max_k: int, max_chars: int) -> RetrieveRequest:
    """Validate the body; every error is a RequestError naming the field."""
    data = parse_json_object(body)
    unknown = sorted(set(data) - _FIELDS)
    if unknown:
        raise RequestError(f"Unknown field '{unknown[0]}'.", param=unknown[0], code="unknown_field")
    query = data.get("query")
    if not isinstance(query, str) or not query.strip():
        raise RequestError("'query' must be a non-empty string.", param="query", code="invalid_value")
    if len(query) > max_chars:
        raise RequestError(
            f"'query' is longer than {max_chars} characters.", param="query", code="string_above_max_length"
        )
    k = data.get("k", DEFAULT_K)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= max_k:
        raise RequestError(f"'k' must be an integer in 1..{max_k}.", param="k", code="invalid_value")
    return RetrieveRequest(query.strip(), k, SearchFilters(_strings(data, "tiers"), _strings(data, "orgs")))


async def _search(store: KnowledgeStore, parsed: RetrieveRequest) -> list[Passage]:
    return await store.search(parsed.query, parsed.k, parsed.filters)


SEARCH = Stage("retrieve", _search)


def passage_json(passage: Passage) -> dict[str, Any]:
    return {
        "id": passage.id,
        "document_id": passage.document_id,
        "score": round(passage.score, 4),
        "title": passage.title,
        "url": passage.url,
        "org": passage.org,
        "tier": passage.tier,
        "text": passage.text,
    }


@post(
    "/v1/retrieve",
    status_code=200,
    summary="Search the vetted knowledge base (hybrid dense + BM25)",
    operation_class=with_body(RETRIEVE_BODY, "A search of the vetted knowledge base."),
)
async def retrieve_passages(request: Request[Any, Any, Any], services: Services) -> Response[Any]:
    settings = services.settings
    parsed = parse_retrieve_request(await request.body(), settings.retrieve_max_k, settings.max_message_chars)
    run = StageRunner(services.metrics)  # a failure: counted, then a 503 store_error (web/errors.py)
    passages = await run(SEARCH, services.store, parsed)
    return Response({"passages": [passage_json(p) for p in passages]}, media_type=MediaType.JSON)
