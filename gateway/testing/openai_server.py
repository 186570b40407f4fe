"""A scripted OpenAI-compatible chat server for tests: real HTTP, the real protocol.

Each test queues replies (or sets a default); every request the gateway makes is recorded so tests
can assert what the model was sent. Replies can be a JSON-contract answer, plain text, an HTTP error,
garbage, a delay, a streamed answer, or a stream that is cut off or stalls.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from litestar import Litestar, Request, Response, post
from litestar.response import Stream

from gateway.testing.servers import serve_in_thread

HOLD_LIMIT_SECONDS = 30.0
"""A held reply is released after this long even if the test never sets its event."""


@dataclass
class Reply:
    content: str = ""
    status: int = 200
    delay: float = 0.0
    raw_body: str | None = None
    """Sent verbatim instead of a completion (for malformed responses)."""
    media_type: str = "application/json"
    """The content type ``raw_body`` is sent with (``text/event-stream`` where a completion is expected)."""
    finish_reason: str = "stop"
    stream_cut_after: int | None = None
    """For streamed replies: stop sending after this many chunks, without [DONE]."""
    stream_stall: float = 0.0
    """For streamed replies: sleep this long before the last chunk."""
    headers: dict[str, str] = field(default_factory=dict)
    hold_until: threading.Event | None = None
    """Do not answer until the test sets this event (to observe what the gateway sent meanwhile)."""


def passage_number(body: dict[str, Any], needle: str) -> int:
    """The [n] of the passage containing ``needle`` in what the gateway sent to the model."""
    passages = next(m["content"] for m in body["messages"] if m["content"].startswith("Passages:"))
    for match in re.finditer(r"^\[(\d+)\] .*?\n(.*?)(?=\n\n\[\d+\] |\Z)", passages, re.M | re.S):
        if needle in match.group(2):
            return int(match.group(1))
    raise AssertionError(f"no passage with {needle!r} was sent")


def contract_answer(
    answer: str, claims: list[tuple[str, list[int], str]], unanswered: list[str] | None = None
) -> str:
    """The JSON the citation contract asks for: answer text and (text, citations, quote) claims."""
    return json.dumps(
        {
            "answer": answer,
            "claims": [{"text": t, "citations": c, "quote": q} for t, c, q in claims],
            "unanswered": unanswered or [],
        }
    )


class ScriptedUpstream:
    def __init__(self) -> None:
        self.replies: deque[Reply | Callable[[dict[str, Any]], Reply]] = deque()
        self.default: Reply | None = None
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        """When set, computes the reply from the request (after queued replies run out)."""
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        """The headers of each request in ``requests`` (lower-case names)."""
        self._lock = threading.Lock()

    def queue(self, *replies: Reply | str | Callable[[dict[str, Any]], Reply]) -> None:
        """Queue replies; a callable is called with the request body when its turn comes."""
        with self._lock:
            for reply in replies:
                self.replies.append(Reply(content=reply) if isinstance(reply, str) else reply)

    def reset(self) -> None:
        with self._lock:
            self.replies.clear()
            self.requests.clear()
            self.headers.clear()
            self.default = None
            self.responder = None

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if self.replies:
                reply = self.replies.popleft()
                return reply(body) if callable(reply) else reply
            if self.responder is not None:
                return self.responder(body)
            if self.default is not None:
                return self.default
        return Reply(status=500, content="no scripted reply left")

    def app(self) -> Litestar:
        scripted = self

        @post("/v1/chat/completions", status_code=200)
        async def completions(request: Request[Any, Any, Any]) -> Response[Any]:
            body = await request.json()
            reply = scripted._next(body, dict(request.headers))
            if reply.delay:
                await asyncio.sleep(reply.delay)
            if reply.hold_until is not None:
                await asyncio.to_thread(reply.hold_until.wait, HOLD_LIMIT_SECONDS)
            if reply.status != 200:
                return Response(
                    {"error": {"message": reply.content or "scripted error", "type": "server_error"}},
                    status_code=reply.status,
                    headers=reply.headers,
                )
            if reply.raw_body is not None:
                return Response(reply.raw_body, media_type=reply.media_type)
            if body.get("stream"):
                return Stream(_stream(reply, body.get("model", "m")), media_type="text/event-stream")
            return Response(_completion(reply, body.get("model", "m")))

        return Litestar([completions], debug=False)


def _completion(reply: Reply, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


async def _stream(reply: Reply, model: str) -> AsyncIterator[str]:
    words = reply.content.split(" ")
    pieces = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
    for index, piece in enumerate(pieces):
        if reply.stream_cut_after is not None and index >= reply.stream_cut_after:
            return
        if reply.stream_stall and index == len(pieces) - 1:
            await asyncio.sleep(reply.stream_stall)
        chunk = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
        }
        yield f"data: {json.dumps(chunk)}\n\n"
    final = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}],
    }
    yield f"data: {json.dumps(final)}\n\n"
    yield "data: [DONE]\n\n"


@contextmanager
def running_upstream() -> Iterator[tuple[ScriptedUpstream, str]]:
    """Start a scripted upstream; yields it and its OpenAI base URL (``.../v1``)."""
    upstream = ScriptedUpstream()
    with serve_in_thread(upstream.app()) as url:
        yield upstream, f"{url}/v1"
