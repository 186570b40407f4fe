"""``/v1/chat/completions`` and ``/v1/models``: the OpenAI-compatible surface."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from litestar import MediaType, Request, Response, get, post
from litestar.response import Stream

from gateway.pipeline.run import PipelineResult, answer
from gateway.services import Services
from gateway.text import sentence_spans
from gateway.web.chat_schema import parse_chat_request
from gateway.web.serializers import chunk_json, completion_json, trust_json

REQUEST_ID_HEADER = "x-request-id"


@post("/v1/chat/completions", status_code=200, summary="Create a verified chat completion")
async def chat_completions(request: Request[Any, Any, Any], services: Services) -> Response[Any]:
    chat = parse_chat_request(await request.body())
    result = await answer(chat, services)
    trust = trust_json(result, services.policy.tiers, services.today())
    headers = {REQUEST_ID_HEADER: result.request_id, "Server-Timing": server_timing(result)}
    if chat.stream:
        return Stream(
            _events(result, chat.model, trust),
            media_type="text/event-stream",
            headers={**headers, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    return Response(completion_json(result, chat.model, trust), media_type=MediaType.JSON, headers=headers)


def server_timing(result: PipelineResult) -> str:
    """Stage durations in the standard Server-Timing header, so clients can see what the gateway adds."""
    t = result.timings
    stages = {"retrieve": t.retrieval, "upstream": t.upstream, "verify": t.verification, "total": t.total}
    return ", ".join(f"{name};dur={seconds * 1000:.1f}" for name, seconds in stages.items())


def _sse(payload: dict[str, Any] | str) -> str:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n"


async def _events(result: PipelineResult, model: str, trust: dict[str, Any]) -> AsyncIterator[str]:
    """The verified answer as chat.completion.chunk events, one per sentence; ``trust`` rides on the last."""
    yield _sse(chunk_json(result, model, {"role": "assistant", "content": ""}, None))
    text = result.answer
    previous = 0
    for span in sentence_spans(text):
        yield _sse(chunk_json(result, model, {"content": text[previous : span.end]}, None))
        previous = span.end
    if previous < len(text):
        yield _sse(chunk_json(result, model, {"content": text[previous:]}, None))
    final = chunk_json(result, model, {}, "stop")
    final["trust"] = trust
    yield _sse(final)
    yield _sse("[DONE]")


@get("/v1/models", summary="List the models the gateway serves")
async def list_models(services: Services) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {
                "id": services.settings.model_name,
                "object": "model",
                "created": int(time.time()),
                "owned_by": "trust-gateway",
            }
        ],
    }
