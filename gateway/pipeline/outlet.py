"""Where a request's verified text leaves the run: the sink, with a stream's write-ahead first.

With a ``sink``, ``answer`` hands each released sentence over while it runs (``Outlet.release``), then
the rest (a refusal, the notes) at the end (``Outlet.complete``). What is handed over is never
retracted: the pieces always concatenate to ``PipelineResult.answer``.

A streamed answer's row is written ahead of its text (``gateway.pipeline.delivery``): each released
piece is committed to the row before it is handed to the sink, the whole record before the final
chunk, and the final outcome only after the final chunk and ``[DONE]`` were written. When a write
fails, nothing more is sent.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Protocol

import structlog

from gateway.metrics import GatewayMetrics
from gateway.pipeline.state import RequestState
from gateway.tool_calls import ToolCallDelta

log = structlog.get_logger("gateway.pipeline")

TextSink = Callable[[str | ToolCallDelta], Awaitable[None]]
"""Receives the patient's verified text piece by piece as the pipeline runs, then any tool-call fragments."""


class WriteAhead(Protocol):
    """A stream's audit side (``gateway.pipeline.delivery.Delivery``), as the run uses it."""

    handed: str
    """The text the HTTP layer was given so far: what an interrupted row records as sent."""

    async def ahead(self, text: str) -> None:
        """Commit the row holding ``text`` before its last piece leaves; AuditError when it cannot."""
        ...


class Outlet:
    """One request's sink, and what it was handed so far (``RequestState.sent``)."""

    def __init__(
        self,
        state: RequestState,
        metrics: GatewayMetrics,
        sink: TextSink | None = None,
        delivery: WriteAhead | None = None,
    ) -> None:
        self.state = state
        self.metrics = metrics
        self.sink = sink
        self.delivery = delivery
        """A stream's audit side (None: not a stream): text is written ahead to the row before the sink
        gets it, and its final record is written as ``delivering`` (``Delivery`` completes it)."""

    async def release(self, *pieces: str) -> None:
        """Hand verified sentences to the sink; the first stamps the time to the first verified token.

        With a delivery (a stream) the row is committed holding them first, in one write; an
        AuditError from it propagates and nothing of them is handed over.
        """
        if self.sink is None or not pieces:
            return
        if self.delivery is not None:
            await self.delivery.ahead(self.state.sent + "".join(pieces))
        for piece in pieces:
            if self.state.timings.first_token is None:
                self.state.timings.first_token = time.perf_counter() - self.state.timings.started
                self.metrics.first_token_latency.observe(self.state.timings.first_token)
            self.state.sent += piece
            await self.sink(piece)

    def take_rest(self, answer_text: str) -> str:
        """What the sink has not had yet, counted as sent (the record holds it before it leaves);
        released text is always a prefix of the final answer."""
        rest = self._rest(answer_text)
        self.state.sent += rest
        return rest

    def _rest(self, answer_text: str) -> str:
        if self.sink is None:
            return ""
        if not answer_text.startswith(self.state.sent):
            log.error("stream_diverged", request_id=self.state.request_id, sent=len(self.state.sent))
            return ""
        return answer_text[len(self.state.sent) :]

    async def complete(self, rest: str) -> None:
        """Hand the sink the rest of the answer (``take_rest``), then the model's tool calls: the reply
        is complete by then."""
        if rest and self.sink is not None:
            await self.sink(rest)
        await self.state.tools.send(self.sink)

    def handed(self) -> str:
        """What left the gateway: a stream's, what its consumer handed to the connection
        (``Delivery.handed``); else what the sink was given."""
        return self.delivery.handed if self.delivery is not None else self.state.sent
