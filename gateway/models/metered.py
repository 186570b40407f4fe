"""Metrics as a wrapper: every model call counted by why it was made and how it ended."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING

from gateway.errors import UpstreamError
from gateway.metric_labels import MODEL_CALL_PURPOSES, bounded, upstream_error_label
from gateway.models.chat_model import Call, ChatModel, StreamCall, StreamPiece, WrapperModel
from gateway.vocabulary import CallResult, ModelCallPurpose, UpstreamErrorType

if TYPE_CHECKING:
    from gateway.metrics import GatewayMetrics


class MeteredModel(WrapperModel):
    """Counts each call in ``gateway_model_calls_total{purpose,result}``, and each failure of a call
    other than a draft in ``gateway_upstream_errors_total{type}`` (a draft's failure is counted once,
    by the pipeline when its draft stage fails: ``metrics.count_draft_failure``).

    ``purpose`` (a ``ModelCallPurpose``: draft, rewrite, judge, query) is the holder's: each holder of a
    shared model gets its own ``MeteredModel`` around it; a value outside the enum is counted as ``other``.
    Outside ``LimitedModel``, so refusals for want of a slot are counted.
    """

    def __init__(self, wrapped: ChatModel, metrics: GatewayMetrics, purpose: ModelCallPurpose) -> None:
        super().__init__(wrapped)
        self.metrics = metrics
        self.purpose = bounded(purpose, MODEL_CALL_PURPOSES)

    async def around(self, call: Call) -> str:
        try:
            text = await call()
        except Exception as err:
            self._failed(err)
            raise
        self.metrics.model_calls.labels(purpose=self.purpose, result=CallResult.OK).inc()
        return text

    async def around_stream(self, call: StreamCall) -> AsyncGenerator[StreamPiece, None]:
        """A stream is counted once, when it ends: ``error`` when it raised, else ``ok`` (also when the
        gateway closed it early: an emergency read, a safety stop, a client gone)."""
        failed = False
        try:
            async with aclosing(call()) as chunks:
                async for chunk in chunks:
                    yield chunk
        except Exception as err:
            failed = True
            self._failed(err)
            raise
        finally:
            if not failed:
                self.metrics.model_calls.labels(purpose=self.purpose, result=CallResult.OK).inc()

    def _failed(self, err: Exception) -> None:
        self.metrics.model_calls.labels(purpose=self.purpose, result=CallResult.ERROR).inc()
        if self.purpose != ModelCallPurpose.DRAFT:
            kind = err.kind if isinstance(err, UpstreamError) else UpstreamErrorType.UPSTREAM_ERROR
            self.metrics.upstream_errors.labels(type=upstream_error_label(kind)).inc()
