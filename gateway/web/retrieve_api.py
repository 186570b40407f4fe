"""``POST /v1/retrieve``: the knowledge base's hybrid search, for integrators and evaluation.

Request: ``{"query": "...", "k": 10, "tiers": [...], "orgs": [...]}`` (k, tiers and orgs optional).
Response: ``{"passages": [{"id", "document_id", "score", "title", "url", "org", "tier", "text"}]}``,
best first; ``score`` is the relevance in [0, 1] the relevance gate uses (docs/knowledge.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import msgspec
from litestar import MediaType, Request, Response, post

from gateway.body_errors import convert
from gateway.domain import Passage
from gateway.errors import RequestError
from gateway.knowledge.search_options import SearchFilters
from gateway.knowledge.store import KnowledgeStore
from gateway.metrics import GatewayMetrics
from gateway.pipeline.stages import Stage, StageRunner
from gateway.vocabulary import StageName
from gateway.web.chat_schema import parse_json_object
from gateway.web.openapi_bodies import with_body

DEFAULT_K = 10

NonBlank = Annotated[str, msgspec.Meta(pattern=r"\S")]
"""A string with a character other than whitespace (one ``str.strip`` leaves something of)."""


class RetrieveBody(msgspec.Struct, forbid_unknown_fields=True):
    """The body of ``POST /v1/retrieve``; any other field is refused (code ``unknown_field``). Each field
    is converted when it is checked, in this order, whatever the order of the body's keys."""

    query: NonBlank
    """At most ``max_message_chars`` characters; searched stripped."""
    k: Annotated[int, msgspec.Meta(ge=1)] = DEFAULT_K
    """At most ``retrieve_max_k``."""
    tiers: list[NonBlank] | None = None
    orgs: list[NonBlank] | None = None


_FIELDS = {field.name: field for field in msgspec.structs.fields(RetrieveBody)}


@dataclass(frozen=True)
class RetrieveRequest:
    query: str
    k: int
    filters: SearchFilters


def parse_retrieve_request(body: bytes, max_k: int, max_chars: int) -> RetrieveRequest:
    """Validate the body; every error is a RequestError naming the field."""
    data = parse_json_object(body)
    unknown = sorted(set(data) - _FIELDS.keys())
    if unknown:
        raise RequestError(f"Unknown field '{unknown[0]}'.", param=unknown[0], code="unknown_field")
    query = _field(data, "query", "'query' must be a non-empty string.", "invalid_value")
    if len(query) > max_chars:
        raise RequestError(
            f"'query' is longer than {max_chars} characters.", param="query", code="string_above_max_length"
        )
    k_rule = f"'k' must be an integer in 1..{max_k}."
    k = _field(data, "k", k_rule, "invalid_value")
    if k > max_k:
        raise RequestError(k_rule, param="k", code="invalid_value")
    tiers, orgs = (
        tuple(v.strip() for v in _field(data, name, f"'{name}' must be a list of non-empty strings.") or ())
        for name in ("tiers", "orgs")
    )
    return RetrieveRequest(query.strip(), k, SearchFilters(tiers, orgs))


def _field(data: dict[str, Any], name: str, rule: str, code: str = "invalid_type") -> Any:
    """``data[name]`` (its default when absent) as its ``RetrieveBody`` type, or the RequestError ``rule``."""
    field = _FIELDS[name]
    value = data.get(name, None if field.required else field.default)
    return convert(value, field.type, name, lambda _: RequestError(rule, param=name, code=code))


async def _search(store: KnowledgeStore, parsed: RetrieveRequest) -> list[Passage]:
    return await store.search(parsed.query, parsed.k, parsed.filters)


SEARCH = Stage(StageName.RETRIEVE, _search)


@dataclass(frozen=True)
class Search:
    """What ``POST /v1/retrieve`` uses (handed through ``gateway.web.parts``): the knowledge store, the
    metrics, and its limits (``GATEWAY_RETRIEVE_MAX_K``, ``GATEWAY_MAX_MESSAGE_CHARS``)."""

    store: KnowledgeStore
    metrics: GatewayMetrics
    max_k: int
    max_chars: int


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
    operation_class=with_body(RetrieveBody, "A search of the vetted knowledge base."),
)
async def retrieve_passages(request: Request[Any, Any, Any], search: Search) -> Response[Any]:
    parsed = parse_retrieve_request(await request.body(), search.max_k, search.max_chars)
    run = StageRunner(search.metrics)  # a failure: counted, then a 503 store_error (web/errors.py)
    passages = await run(SEARCH, search.store, parsed)
    return Response({"passages": [passage_json(p) for p in passages]}, media_type=MediaType.JSON)
