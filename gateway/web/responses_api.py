"""``POST /v1/responses``: the Responses API over the same verified pipeline as chat completions.

The request is translated into the gateway's ``ChatRequest`` (``responses_schema``) and answered by
``gateway.pipeline.run.answer`` / ``stream_answer``: the same triage, retrieval, verification, cleanup,
badges, limits and one audit record per request. Only the shapes differ:

- not streamed: one ``response`` object whose ``output`` is one assistant message with one
  ``output_text`` part, plus the ``trust`` object as an extra top-level field (as on a chat completion);
- streamed: the typed events the openai SDK parses, in order: ``response.created``,
  ``response.in_progress``, ``response.output_item.added``, ``response.content_part.added``, a
  ``response.output_text.delta`` per verified piece, ``response.output_text.done``,
  ``response.content_part.done``, ``response.output_item.done``, then ``response.completed`` whose
  ``response`` carries ``trust``. A failure after the headers went out ends the stream with an
  ``error`` event and ``response.failed`` (never ``response.completed``).

A refusal is the assistant's text, as on chat completions; ``trust.summary.refused`` says so. The gateway
keeps no conversation state: responses are not stored, and ``previous_response_id`` is refused.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

import structlog
from litestar import MediaType, Request, Response, post
from litestar.response import Stream
from litestar.serialization import encode_json

from gateway.errors import AuditError
from gateway.pipeline.delivery import stream_answer
from gateway.pipeline.result import PipelineResult, StreamItem
from gateway.pipeline.run import answer, open_request
from gateway.web.chat import REQUEST_ID_HEADER, ChatParts, client_gone, server_timing
from gateway.web.errors import audit_unavailable_body
from gateway.web.openapi_bodies import with_body
from gateway.web.responses_schema import ResponsesBody, ResponsesRequest, parse_responses_request
from gateway.web.serializers import TrustView

log = structlog.get_logger("gateway.http")

STREAM_FAILED = "The gateway failed while answering; the answer is incomplete."


@post(
    "/v1/responses",
    status_code=200,
    summary="Create a verified response (Responses API)",
    operation_class=with_body(
        ResponsesBody,
        "An OpenAI Responses API request (text only; no tools; no stored conversation state).",
    ),
)
async def create_response(request: Request[Any, Any, Any], chat_parts: ChatParts) -> Response[Any]:
    held = time.perf_counter()
    parsed = parse_responses_request(await request.body(), chat_parts.limits)
    chat = parsed.chat
    if chat.stream:  # headers go out before the result exists: the provisional row first (AuditError: 503)
        opened = await open_request(chat, chat_parts.answer.ending.trail)
        ids = ResponseIds(opened.request_id)
        events = _events(
            stream_answer(chat, chat_parts.answer, opened),
            parsed,
            ids,
            int(time.time()),
            chat_parts.trust,
            request,
        )
        return Stream(
            events,
            media_type="text/event-stream",
            headers={
                REQUEST_ID_HEADER: ids.request_id,
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            },
        )
    parsing_done = time.perf_counter()
    result = await answer(chat, chat_parts.answer)  # AuditError (now or at the end): a 503, no answer
    serialising = time.perf_counter()
    ids = ResponseIds(result.request_id)
    created = int(result.created_at.timestamp())
    body = response_json(ids, parsed, created, "completed", result.answer)
    body["trust"] = chat_parts.trust.json(result)
    encoded = encode_json(body)
    done = time.perf_counter()
    timing = server_timing(
        result.timings, parse=parsing_done - held, serialise=done - serialising, held=done - held
    )
    headers = {REQUEST_ID_HEADER: result.request_id, "Server-Timing": timing}
    return Response(encoded, media_type=MediaType.JSON, headers=headers)


class ResponseIds:
    """The ids of one response, derived from the request id (the audit record's key)."""

    def __init__(self, request_id: str) -> None:
        suffix = request_id.removeprefix("req_")
        self.request_id = request_id
        self.response = f"resp_{suffix}"
        self.message = f"msg_{suffix}"


def output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def message_item(ids: ResponseIds, status: str, text: str | None) -> dict[str, Any]:
    """The assistant message: no content while in progress, one text part when done."""
    return {
        "id": ids.message,
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": [] if text is None else [output_text(text)],
    }


def response_json(
    ids: ResponseIds, parsed: ResponsesRequest, created: int, status: str, text: str | None
) -> dict[str, Any]:
    """The ``response`` object; ``text`` None: no output yet (in progress, or failed)."""
    chat = parsed.chat
    return {
        "id": ids.response,
        "object": "response",
        "created_at": created,
        "status": status,
        "completed_at": int(time.time()) if status == "completed" else None,
        "error": None,
        "incomplete_details": None,
        "instructions": parsed.instructions,
        "max_output_tokens": parsed.max_output_tokens,
        "model": chat.model,
        "output": [] if text is None else [message_item(ids, "completed", text)],
        "parallel_tool_calls": False,
        "previous_response_id": None,
        "store": False,
        "temperature": chat.temperature,
        "text": {"format": {"type": "text"}},
        "tool_choice": "none",
        "tools": [],
        "top_p": None,
        "truncation": "disabled",
        "usage": None,
        "metadata": dict(chat.metadata),
    }


class _Sequence:
    """Numbers the events of one stream and renders each as a server-sent event."""

    def __init__(self) -> None:
        self.number = 0

    def event(self, kind: str, **fields: Any) -> str:
        payload = {"type": kind, "sequence_number": self.number, **fields}
        self.number += 1
        return f"event: {kind}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n"


async def _events(
    pipeline: AsyncGenerator[StreamItem, None],
    parsed: ResponsesRequest,
    ids: ResponseIds,
    created: int,
    trust: TrustView,
    request: Request[Any, Any, Any],
) -> AsyncIterator[str]:
    """The typed events, as the pipeline releases verified text. Only translation happens here.

    As on chat completions (``chat._events``): each piece was committed to the audit row before the
    pipeline yielded it, and asking for more after ``response.completed`` was written confirms the
    delivery; leaving without asking records ``client_disconnected``."""
    seq = _Sequence()
    started = response_json(ids, parsed, created, "in_progress", None)
    yield seq.event("response.created", response=started)
    yield seq.event("response.in_progress", response=started)
    place = {"item_id": ids.message, "output_index": 0}
    yield seq.event("response.output_item.added", output_index=0, item=message_item(ids, "in_progress", None))
    yield seq.event("response.content_part.added", **place, content_index=0, part=output_text(""))
    sent: list[str] = []
    async with aclosing(pipeline):
        try:
            async for item in pipeline:
                if isinstance(item, str):
                    sent.append(item)
                    yield seq.event(
                        "response.output_text.delta", **place, content_index=0, delta=item, logprobs=[]
                    )
                    continue
                if not isinstance(item, PipelineResult):  # a tool call: never here (tools are refused)
                    continue
                text = "".join(sent)
                yield seq.event("response.output_text.done", **place, content_index=0, text=text, logprobs=[])
                yield seq.event(
                    "response.content_part.done", **place, content_index=0, part=output_text(text)
                )
                yield seq.event(
                    "response.output_item.done", output_index=0, item=message_item(ids, "completed", text)
                )
                completed = response_json(ids, parsed, created, "completed", text)
                completed["trust"] = trust.json(item)
                yield seq.event("response.completed", response=completed)
                if await client_gone(request):
                    return  # never confirmed: the pipeline, closed, records client_disconnected
        except AuditError:  # a write-ahead or the final record failed: never response.completed
            error = audit_unavailable_body()["error"]
            for event in _failed(seq, parsed, ids, created, error["code"], error["message"]):
                yield event
        except Exception as exc:  # a bug after text went out: say so on the stream
            log.error("stream_failed", request_id=ids.request_id, error_type=type(exc).__name__, exc_info=exc)
            for event in _failed(seq, parsed, ids, created, "internal_error", STREAM_FAILED):
                yield event


def _failed(
    seq: _Sequence, parsed: ResponsesRequest, ids: ResponseIds, created: int, code: str, message: str
) -> list[str]:
    failed = response_json(ids, parsed, created, "failed", None)
    failed["error"] = {"code": "server_error", "message": message}
    return [
        seq.event("error", code=code, message=message, param=None),
        seq.event("response.failed", response=failed),
    ]
