"""A scripted OpenAI-compatible chat server for tests and benches: real HTTP, the real protocol.

Each test queues replies (or sets a default); every request the gateway makes is recorded so tests
can assert what the model was sent. Replies can be a contract answer, plain text, an HTTP error,
garbage, a delay, a streamed answer (at a given tokens-per-second rate after a given first-token
delay, like a real model), a stream that is cut off or stalls, or a whole completion where a stream
was asked for.

``passages_sent(body)`` gives the passage texts the gateway sent in a request, and
``contract_reply(body, claims)`` the reply a model following the citation contract writes for claims.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from litestar import Litestar, Request, Response, post
from litestar.response import Stream
from rapidfuzz import fuzz

from gateway.drafting.contract import SYSTEM_PROMPT, sentence_line, urgency_line
from gateway.testing.models import call_deltas
from gateway.testing.servers import serve_in_thread
from gateway.text import marker_numbers, normalise, sentence_spans, strip_markers
from gateway.tool_calls import ToolCall

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
    tokens_per_second: float | None = None
    """For streamed replies: send one token (``tokens``) per chunk at this rate, as a model writes."""
    first_token_delay: float = 0.0
    """For streamed replies: wait this long before the first token (after ``delay``)."""
    ignore_stream: bool = False
    """Answer one whole chat.completion even when the request asks for ``stream: true``."""
    hold_before_last: threading.Event | None = None
    """For streamed replies: before the last chunk, wait until the test sets this event."""
    sent_all: threading.Event = field(default_factory=threading.Event)
    """Set once a streamed reply's last chunk was sent (so a test can tell the model is still writing)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls the model makes after its text (``message.tool_calls``; streamed as OpenAI streams
    them, in ``delta.tool_calls[i]`` fragments); the finish reason is then ``tool_calls``."""

    @property
    def finish(self) -> str:
        return "tool_calls" if self.tool_calls else self.finish_reason


_TOKEN = re.compile(r"\s?[A-Za-z]+|\s?\d{1,3}|\s?[^\sA-Za-z\d]{1,3}|\s+")
"""A rough stand-in for a BPE tokeniser: a word, up to three digits, or up to three other characters,
each with its leading space. The same rule for every reply, so replies compare fairly."""


def tokens(text: str) -> list[str]:
    """``text`` as the scripted upstream streams it at a tokens-per-second rate (they concatenate to it)."""
    return _TOKEN.findall(text)


ANCHOR_MAX_WORDS = 8
"""The longest anchor the contract asks for (3 to 8 words of the passage sentence)."""


def passages_sent(body: dict[str, Any]) -> list[str]:
    """The passage texts the gateway sent to the model in ``body``, in number order (passage n at n-1)."""
    found = _passages(body)
    return [found[n] for n in sorted(found)]


def _passages(body: dict[str, Any]) -> dict[int, str]:
    contents = [m["content"] for m in body["messages"] if m["content"].startswith("Passages:")]
    if not contents:
        raise AssertionError("the request carries no passages")
    return {
        int(match.group(1)): match.group(2)
        for match in re.finditer(r"^\[(\d+)\] .*?\n(.*?)(?=\n\n\[\d+\] |\Z)", contents[0], re.M | re.S)
    }


def contract_reply(
    body: dict[str, Any],
    claims: Sequence[tuple[str, int | None, str | None]],
    urgency: tuple[str, str] = ("routine", ""),
) -> str:
    """Exactly the reply a model following the citation contract requested in ``body`` writes for
    ``claims``, each ``(sentence, passage_number, quote)`` (number and quote None for a sentence that
    cites nothing): the urgency line, then one line per sentence; the anchor (the quote's first
    ``ANCHOR_MAX_WORDS`` words) only when the sentence does not repeat the quote's words. AssertionError
    when ``body`` does not ask for the contract or a number names no passage sent."""
    if not any(m["content"] == SYSTEM_PROMPT for m in body["messages"]):
        raise AssertionError("the request does not ask for the JSON Lines citation contract")
    count = len(_passages(body))
    lines = [urgency_line(*urgency)]
    for sentence, number, quote in claims:
        if number is not None and not 1 <= number <= count:
            raise AssertionError(f"passage {number} was not sent ({count} were)")
        anchor = None
        if quote and not _repeats(sentence, quote):
            anchor = " ".join(quote.split()[:ANCHOR_MAX_WORDS])
        lines.append(sentence_line(sentence, (number,) if number else (), anchor))
    return "\n".join(lines) + "\n"


def _repeats(sentence: str, quote: str) -> bool:
    """The sentence repeats the quote's words (so it is its own anchor)."""
    a, b = normalise(sentence).rstrip(". "), normalise(quote).rstrip(". ")
    return bool(a) and (a in b or b in a)


def passage_number(body: dict[str, Any], needle: str) -> int:
    """The [n] of the passage containing ``needle`` in what the gateway sent to the model."""
    for number, text in sorted(_passages(body).items()):
        if needle in text:
            return number
    raise AssertionError(f"no passage with {needle!r} was sent")


CLAIM_MATCH = 70.0
"""Least token-set similarity (0..100) for a listed claim to belong to an answer sentence."""


def contract_answer(
    answer: str,
    claims: list[tuple[str, list[int], str]],
    unanswered: list[str] | None = None,
    urgency: tuple[str, str] | None = ("routine", "a question about usual care"),
) -> str:
    """The citation contract's reply for an answer written with inline ``[n]`` markers and its claims
    as ``(text, citations, quote)`` (the shape of the retired single-object contract, kept for tests
    that script answers that way): one line per sentence, with the quote of the claim it lists; a
    sentence listing several claims becomes one line per claim. ``unanswered`` parts are already
    sentences of ``answer``; ``urgency`` None leaves the urgency line out."""
    del unanswered
    lines = [urgency_line(*urgency)] if urgency else []
    sentences = [answer[span.start : span.end] for span in sentence_spans(answer)]
    plain = [strip_markers(sentence).strip() for sentence in sentences]
    owner = [_best_sentence(text, plain) for text, _, _ in claims]
    for index, sentence in enumerate(sentences):
        listed = [claim for claim, at in zip(claims, owner, strict=True) if at == index]
        if len(listed) > 1:
            lines += [sentence_line(strip_markers(t).strip(), c, q) for t, c, q in listed]
            continue
        numbers = marker_numbers(sentence) or (tuple(listed[0][1]) if listed else ())
        lines.append(sentence_line(plain[index], numbers, listed[0][2] if listed else None))
    return "\n".join(lines) + "\n"


def _best_sentence(claim: str, sentences: Sequence[str]) -> int | None:
    """The sentence a listed claim belongs to: the one containing it, else the most similar one."""
    key = normalise(strip_markers(claim)).rstrip(". ")
    scores = []
    for sentence in sentences:
        text = normalise(sentence).rstrip(". ")
        scores.append(200.0 if key and key in text else fuzz.token_set_ratio(key, text))
    if not scores or max(scores) < CLAIM_MATCH:
        return None
    return scores.index(max(scores))


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
        self._arrived = threading.Condition(self._lock)

    def wait_for_requests(self, count: int = 1, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Block until ``count`` requests have arrived (since the last ``reset``) and return them all;
        AssertionError after ``timeout`` seconds, so a test waiting for a call fails rather than hangs."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: len(self.requests) >= count, timeout):
                got = len(self.requests)
                raise AssertionError(f"waited {timeout:g} s: the upstream received {got} of {count} call(s)")
            return list(self.requests)

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
            self._arrived.notify_all()
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
            if body.get("stream") and not reply.ignore_stream:
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
                "message": _message(reply),
                "finish_reason": reply.finish,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def _message(reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ]
    return message


def _tool_chunks(reply: Reply, model: str) -> list[str]:
    """The reply's tool calls as OpenAI streams them: per call, a first delta with the id, type and name
    (empty arguments), then the arguments in fragments; every delta names its call by ``index``."""
    chunks = []
    for index, call in enumerate(reply.tool_calls):
        for delta in call_deltas(index, call):
            fragment: dict[str, Any] = {"index": delta.index, "function": {"arguments": delta.arguments}}
            if delta.id is not None:
                fragment.update(id=delta.id, type="function")
                fragment["function"]["name"] = delta.name
            choice = {"index": 0, "delta": {"tool_calls": [fragment]}, "finish_reason": None}
            chunk = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": model}
            chunks.append(
                f"data: {json.dumps({**chunk, 'created': int(time.time()), 'choices': [choice]})}\n\n"
            )
    return chunks


async def _stream(reply: Reply, model: str) -> AsyncIterator[str]:
    if reply.tokens_per_second:
        pieces = tokens(reply.content)
    else:
        words = reply.content.split(" ") if reply.content else []
        pieces = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
    started = time.perf_counter() + reply.first_token_delay
    for index, piece in enumerate(pieces):
        if reply.stream_cut_after is not None and index >= reply.stream_cut_after:
            return
        if reply.stream_stall and index == len(pieces) - 1:
            await asyncio.sleep(reply.stream_stall)
        if reply.hold_before_last is not None and index == len(pieces) - 1:
            await asyncio.to_thread(reply.hold_before_last.wait, HOLD_LIMIT_SECONDS)
        if reply.tokens_per_second:  # token i is due at the first token's time plus i / rate
            due = started + index / reply.tokens_per_second
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
        chunk = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
        }
        yield f"data: {json.dumps(chunk)}\n\n"
    for event in _tool_chunks(reply, model):
        yield event
    reply.sent_all.set()
    final = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish}],
    }
    yield f"data: {json.dumps(final)}\n\n"
    yield "data: [DONE]\n\n"


@contextmanager
def running_upstream() -> Iterator[tuple[ScriptedUpstream, str]]:
    """Start a scripted upstream; yields it and its OpenAI base URL (``.../v1``)."""
    upstream = ScriptedUpstream()
    with serve_in_thread(upstream.app()) as url:
        yield upstream, f"{url}/v1"
