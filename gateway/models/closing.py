"""Closing as a wrapper: a model shared by several holders is closed once, and used no more."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

from gateway.errors import UpstreamUnavailable
from gateway.models.chat_model import Call, StreamCall, StreamPiece, WrapperModel


class ClosingModel(WrapperModel):
    """Closes the wrapped model (its client) on the first ``aclose``; later ones do nothing, so every
    holder may close it. A call after that fails as ``UpstreamUnavailable`` without reaching the model."""

    closed = False

    async def around(self, call: Call) -> str:
        self._check_open()
        return await call()

    async def around_stream(self, call: StreamCall) -> AsyncGenerator[StreamPiece, None]:
        self._check_open()
        async with aclosing(call()) as chunks:
            async for chunk in chunks:
                yield chunk

    def _check_open(self) -> None:
        if self.closed:
            raise UpstreamUnavailable(f"the {self.name} model was closed (the gateway is shutting down)")

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        await self.wrapped.aclose()
