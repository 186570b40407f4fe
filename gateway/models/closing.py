"""Closing as a wrapper: a model shared by several holders is closed once, and used no more."""

from __future__ import annotations

from gateway.errors import UpstreamUnavailable
from gateway.models.base import Call, WrapperModel


class ClosingModel(WrapperModel):
    """Closes the wrapped model (its client) on the first ``aclose``; later ones do nothing, so every
    holder may close it. A call after that fails as ``UpstreamUnavailable`` without reaching the model."""

    closed = False

    async def around(self, call: Call) -> str:
        if self.closed:
            raise UpstreamUnavailable(f"the {self.name} model was closed (the gateway is shutting down)")
        return await call()

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        await self.wrapped.aclose()
