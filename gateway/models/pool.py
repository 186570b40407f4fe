"""The process's chat models: one per configured endpoint, wrapped once, handed to every holder, closed once.

``ModelPool.model(endpoint, purpose)`` gives the holder (the draft, the rewriter, the judge, the
evaluation's raw model) a view of the endpoint's one model::

    MeteredModel(purpose)            counts the holder's calls (when the pool has metrics)
      -> ClosingModel                shared: closed once, by whoever closes first, or by the pool
        -> LimitedModel              the endpoint's CallLimits: slots, queue, deadline
          -> OpenAIChatModel         the endpoint's one openai.AsyncOpenAI client

Holders of the same endpoint (same settings) share the model, hence its client and its slots: the
upstream rewriter waits for the same slots as the drafts. A different endpoint gets a model of its own,
with limits of its own (the same ``GATEWAY_UPSTREAM_MAX_CONCURRENCY``, queue and deadline settings);
two endpoints at the same base URL share their slots.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gateway.models.chat_model import ChatModel
from gateway.models.closing import ClosingModel
from gateway.models.limits import CallLimits, LimitedModel
from gateway.models.metered import MeteredModel
from gateway.models.openai_compatible import Endpoint, OpenAIChatModel
from gateway.vocabulary import ModelCallPurpose

if TYPE_CHECKING:
    from gateway.metrics import GatewayMetrics
    from gateway.settings import Settings

Connect = Callable[[Endpoint], ChatModel]
"""Makes the model that calls an endpoint (``OpenAIChatModel.from_endpoint``; a scripted one in tests)."""


class ModelPool:
    def __init__(
        self,
        settings: Settings,
        metrics: GatewayMetrics | None = None,
        connect: Connect | None = None,
    ) -> None:
        """``connect`` makes the model that calls an endpoint (default: the OpenAI client)."""
        self._settings = settings
        self._metrics = metrics
        self._connect = connect or OpenAIChatModel.from_endpoint
        self._limits: dict[str, CallLimits] = {}
        self._models: dict[Endpoint, ClosingModel] = {}

    def model(self, endpoint: Endpoint, purpose: ModelCallPurpose) -> ChatModel:
        """The endpoint's model, for calls made for ``purpose`` (draft, rewrite, judge, query)."""
        shared = self._models.get(endpoint)
        if shared is None:
            limits = self._limits.get(endpoint.base_url)
            if limits is None:
                limits = self._limits[endpoint.base_url] = CallLimits.from_settings(
                    self._settings, self._metrics
                )
            shared = self._models[endpoint] = ClosingModel(LimitedModel(self._connect(endpoint), limits))
        if self._metrics is None:
            return shared
        return MeteredModel(shared, self._metrics, purpose)

    def limits(self, endpoint: Endpoint) -> CallLimits | None:
        """The limits the endpoint's calls run under, once a model of it was handed out."""
        return self._limits.get(endpoint.base_url)

    async def aclose(self) -> None:
        """Close every model (each client once); a holder's later call fails as UpstreamUnavailable."""
        for shared in self._models.values():
            await shared.aclose()
