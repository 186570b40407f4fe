"""``/v1/chat/completions`` and ``/v1/models``: the OpenAI-compatible surface."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import anyio
import structlog
from litestar import MediaType, Request, Response, get, post
from litestar.response import Stream
from litestar.serialization import encode_json

from gateway.errors import AuditError
from gateway.pipeline.delivery import stream_answer
from gateway.pipeline.result import StreamItem, Timings
from gateway.pipeline.run import answer, open_request
from gateway.services import AnswerParts
from gateway.tool_calls import ToolCallDelta
from gateway.vocabulary import StageName
from gateway.web.chat_schema import PublishedChatBody, RequestLimits, parse_chat_request
from gateway.web.disclosure import Disclosure
from gateway.web.errors import audit_unavailable_body, error_body
from gateway.web.openapi_bodies import with_body
from gateway.web.request_ids import request_id_of
from gateway.web.serializers import TrustView, chunk_payload, completion_json, finish_reason, tool_call_delta

log = structlog.get_logger("gateway.http")

REQUEST_ID_HEADER = "x-request-id"


@dataclass(frozen=True)
class ChatParts:
    """What the chat completions, responses and models handlers use (handed through
    ``gateway.web.parts``): what ``answer`` is handed (the audit trail among it), the request's size
    limits, how the trust object is drawn, and the model name the gateway serves."""

    answer: AnswerParts
    limits: RequestLimits
    trust: TrustView
    model: str


@post(
    "/v1/chat/completions",
    status_code=200,
    summary="Create a verified chat completion",
    operation_class=with_body(
        PublishedChatBody,
        "An OpenAI chat completion request (text only; n=1; tools pass through, text is verified).",
    ),
)
async def chat_completions(
    request: Request[Any, Any, Any], chat_parts: ChatParts, disclosure: Disclosure
) -> Response[Any]:
    held = time.perf_counter()
    chat = parse_chat_request(await request.body(), chat_parts.limits)
    edge_id = request_id_of(request)  # the id the x-request-id middleware gave this request
    if chat.stream:  # verified streaming: headers go out before the result exists (no Server-Timing)
        opened = await open_request(
            chat, chat_parts.answer.ending.trail, edge_id
        )  # the provisional row first; AuditError: a 503
        request_id = opened.request_id
        return Stream(
            _events(
                stream_answer(chat, chat_parts.answer, opened),
                chat.model,
                request_id,
                chat_parts.trust,
                disclosure,
                request,
            ),
            media_type="text/event-stream",
            headers={REQUEST_ID_HEADER: request_id, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    parsed = time.perf_counter()
    # the provisional row is written alongside triage; AuditError (then or at the end): a 503, no answer
    result = await answer(chat, chat_parts.answer, edge_id)
    serialising = time.perf_counter()
    trust = chat_parts.trust.json(result)
    body = encode_json(disclosure.disclose(completion_json(result, chat.model, trust)))
    done = time.perf_counter()
    timing = server_timing(
        result.timings, parse=parsed - held, serialise=done - serialising, held=done - held
    )
    headers = {REQUEST_ID_HEADER: result.request_id, "Server-Timing": timing}
    return Response(body, media_type=MediaType.JSON, headers=headers)


SERVER_TIMING_NAMES: dict[StageName, str] = {
    StageName.TRIAGE: "triage",
    StageName.RETRIEVE: "retrieve",
    StageName.DRAFT: "upstream",  # the published name of the draft stage: the upstream's time
    StageName.VERIFY: "verify",  # cleanup's time included (``Timings.add``)
    StageName.BADGE: "badge",
    StageName.RECORD: "record",
}
"""The ``Server-Timing`` entry of each stage timed on its own, in the header's order. The names are
published (README; benches and integrators read them): a stage renamed keeps its entry's name."""

UNTIMED_STAGES = frozenset({StageName.SPLIT, StageName.CLEANUP, StageName.REWRITE})
"""Stages deliberately without an entry: splitting is not timed on its own, cleanup is counted in
``verify``, and a rewrite is part of cleanup. Every ``StageName`` is in one of the two (a unit test)."""


def server_timing(timings: Timings, *, parse: float, serialise: float, held: float) -> str:
    """Stage durations in the standard Server-Timing header, so clients can see what the gateway adds.

    ``total`` is the whole time the handler held the request: parsing, the pipeline (the provisional
    audit row, written alongside triage; badges and the committed audit record included) and JSON
    serialisation; only the socket write comes after it.
    """
    stages = {name: timings.of(stage) for stage, name in SERVER_TIMING_NAMES.items()}
    entries = {"parse": parse, **stages, "serialise": serialise, "total": held}
    return ", ".join(f"{name};dur={seconds * 1000:.1f}" for name, seconds in entries.items())


def _sse(payload: dict[str, Any] | str) -> str:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n"


async def client_gone(request: Request[Any, Any, Any]) -> bool:
    """True when the server already knows the client went away (an ASGI ``receive`` then answers
    ``http.disconnect`` at once; while connected it would wait, and the cancelled scope says no).
    A write after a disconnect is dropped silently by the server, so a stream checks this after its
    last event before recording it as delivered."""
    with anyio.CancelScope() as scope:
        scope.cancel()
        message = await request.receive()
        return bool(message["type"] == "http.disconnect")
    return False


async def _events(
    pipeline: AsyncGenerator[StreamItem, None],
    model: str,
    request_id: str,
    trust: TrustView,
    disclosure: Disclosure,
    request: Request[Any, Any, Any],
) -> AsyncIterator[str]:
    """Verified text as chat.completion.chunk events as the pipeline releases it; ``trust`` rides on
    the last chunk, then ``[DONE]``. Only translation happens here: what is sent is decided upstream.

    The pipeline commits each piece to the audit row before yielding it. Asking it for more after
    ``[DONE]`` was written tells it the answer was delivered (``stream_answer``); leaving without
    asking (the client went away) closes it, which records ``client_disconnected``."""
    created = int(time.time())
    yield _sse(chunk_payload(request_id, created, model, {"role": "assistant", "content": ""}, None))
    async with aclosing(pipeline):
        try:
            async for item in pipeline:
                if isinstance(item, str):
                    yield _sse(chunk_payload(request_id, created, model, {"content": item}, None))
                    continue
                if isinstance(
                    item, ToolCallDelta
                ):  # after the verified text, in the order the model sent them
                    yield _sse(chunk_payload(request_id, created, model, tool_call_delta(item), None))
                    continue
                if disclosure.enabled:  # the AI disclosure, the last piece of text (gateway.web.disclosure)
                    notice = {"content": disclosure.suffix}
                    yield _sse(chunk_payload(request_id, created, model, notice, None))
                final = chunk_payload(request_id, created, model, {}, finish_reason(item))
                final["trust"] = trust.json(item)
                final["trust"]["ai_disclosure"] = disclosure.trust_json()
                yield _sse(final)
                yield _sse("[DONE]")
                if await client_gone(request):
                    return  # never confirmed: the pipeline, closed, records client_disconnected
        except AuditError:  # a write-ahead or the final record failed: an error event, no trust, no [DONE]
            yield _sse(audit_unavailable_body())
        except Exception as exc:  # a bug after text went out: say so on the stream, never [DONE]
            log.error("stream_failed", request_id=request_id, error_type=type(exc).__name__, exc_info=exc)
            message = "The gateway failed while answering; the answer is incomplete."
            yield _sse(error_body(message, "api_error", None, "internal_error"))


@get("/v1/models", summary="List the models the gateway serves")
async def list_models(chat_parts: ChatParts) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {
                "id": chat_parts.model,
                "object": "model",
                "created": int(time.time()),
                "owned_by": "trust-gateway",
            }
        ],
    }
