"""Assemble the Litestar app: handlers, dependencies, lifespan and one map of error handlers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, nullcontext
from pathlib import Path
from typing import Any

import anyio.to_thread
import structlog
from litestar import Litestar, Request, Router
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from opentelemetry.sdk.trace import TracerProvider

from gateway.audit.heartbeat import beat as beat_once
from gateway.audit.heartbeat import chain_heartbeat
from gateway.bootstrap import build_services
from gateway.errors import ServiceUnavailableError
from gateway.metrics import GatewayMetrics
from gateway.services import Services
from gateway.settings import Settings
from gateway.telemetry.http import tracing_middleware
from gateway.telemetry.tracing import tracing_for
from gateway.trust.badge import load_tier_badges
from gateway.web.auth import Access, failed_auth_throttle
from gateway.web.auth_state import SessionRevocations
from gateway.web.chat import chat_completions, list_models
from gateway.web.chat_schema import check_json_content_type
from gateway.web.clinician_auth import StaffAuth
from gateway.web.disclosure import load_disclosure
from gateway.web.errors import exception_handlers
from gateway.web.heap import frozen_heap
from gateway.web.ops import healthz, metrics, readyz
from gateway.web.pages import page_handlers
from gateway.web.parts import WebParts
from gateway.web.rate_limits import LimiterHandle, build_rate_limiter
from gateway.web.request_ids import add_request_id
from gateway.web.responses_api import create_response
from gateway.web.retrieve_api import retrieve_passages
from gateway.web.verify_api import verify_answer
from gateway.web.warm_up import warm_up

log = structlog.get_logger("gateway.http")


def json_bodies_only(request: Request[Any, Any, Any]) -> None:
    """The JSON API router's ``before_request`` hook: 415 (OpenAI's error shape) for a POST whose body
    is not ``application/json``. Litestar runs it after the router's access rule, before the body is
    read."""
    if request.method == "POST":
        check_json_content_type(request.headers.get("content-type"))


class ServiceHolder:
    """Holds the Services built in the lifespan and the parts of them the handlers use (``WebParts``,
    built once with them), so each handler receives its part through ``Provide``."""

    def __init__(self, parts_of: Callable[[Services], WebParts], services: Services | None = None) -> None:
        self._parts_of = parts_of
        self.services: Services | None = None
        self._parts: WebParts | None = None
        if services is not None:
            self.hold(services)

    def hold(self, services: Services) -> None:
        self.services = services
        self._parts = self._parts_of(services)

    def get(self) -> Services:
        if self.services is None:
            raise ServiceUnavailableError("The gateway is still starting.", code="not_ready")
        return self.services

    def parts(self) -> WebParts:
        if self._parts is None:
            raise ServiceUnavailableError("The gateway is still starting.", code="not_ready")
        return self._parts


def create_app(
    settings: Settings,
    services: Services | None = None,
    build: Callable[[Settings], Services] = build_services,
    *,
    tracer_provider: TracerProvider | None = None,
    tier_badges: Path | None = None,
) -> Litestar:
    """The gateway app. Pass ``services`` to reuse already-built ones (tests, benchmarks), and a
    ``tracer_provider`` to trace requests (``gateway.telemetry``; none: no tracing, no cost).
    ``tier_badges``: the badge texts' file (default: the bundled ``gateway/data/tier_badges.yaml``)."""
    sessions = SessionRevocations()
    throttle = failed_auth_throttle(settings)
    staff = StaffAuth.from_settings(settings, sessions)  # the login handlers'; shares the rules' sessions
    badges = load_tier_badges(tier_badges)  # a bad badge text file stops start-up here
    holder = ServiceHolder(lambda running: WebParts.of(running, staff, throttle, badges), services)

    def current_metrics() -> GatewayMetrics | None:
        return holder.services.metrics if holder.services else None

    disclosure = load_disclosure(settings)  # a bad disclosure.yaml stops start-up here
    limiter = build_rate_limiter(settings, current_metrics)
    handle = LimiterHandle(limiter)

    def provide_limiter() -> LimiterHandle:
        return handle

    @asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        owned = holder.services is None
        if owned:
            holder.hold(await anyio.to_thread.run_sync(build, settings))
            await warm_up(holder.get().answer_parts, settings.model_name)
        # A serving process freezes its start-up heap; tests and benches that pass services keep theirs.
        heap = frozen_heap() if owned else nullcontext(0)
        running = holder.get()
        beat = None
        if settings.audit_chain_log_seconds > 0:
            await beat_once(running.audit.chain_head, running.metrics)
            beat = asyncio.create_task(
                chain_heartbeat(running.audit.chain_head, running.metrics, settings.audit_chain_log_seconds)
            )
        try:
            with heap as frozen:
                if owned:
                    log.info("startup_heap_frozen", objects=frozen)
                yield
        finally:
            if beat is not None:
                beat.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await beat
            if owned and holder.services is not None:
                await holder.services.aclose_models()
                holder.services.audit.close()
            limiter.close()

    # Who may call what: one guard per group of routes (gateway.web.auth), built once here.
    access = Access(settings, current_metrics, sessions, throttle, limiter=limiter)
    api = [chat_completions, list_models, verify_answer, retrieve_passages, create_response]
    handlers: list[Any] = [
        Router(path="/", route_handlers=api, guards=[access.client], before_request=json_bodies_only),
        Router(path="/", route_handlers=[healthz, readyz], guards=[access.public]),
        Router(path="/", route_handlers=[metrics], guards=[access.metrics]),
        *page_handlers(settings, access),
    ]
    app = Litestar(
        route_handlers=handlers,
        dependencies={
            # each handler's part of the Services (gateway.web.parts); 503 not_ready until they are built
            "chat_parts": Provide(lambda: holder.parts().chat, sync_to_thread=False),
            "verification": Provide(lambda: holder.parts().verification, sync_to_thread=False),
            "search": Provide(lambda: holder.parts().search, sync_to_thread=False),
            "readiness": Provide(lambda: holder.parts().readiness, sync_to_thread=False),
            "records": Provide(lambda: holder.parts().records, sync_to_thread=False),
            "patient": Provide(lambda: holder.parts().patient, sync_to_thread=False),
            "login": Provide(lambda: holder.parts().login, sync_to_thread=False),
            "gauges": Provide(lambda: holder.parts().metrics, sync_to_thread=False),
            "limiter": Provide(provide_limiter, sync_to_thread=False),
            "disclosure": Provide(lambda: disclosure, sync_to_thread=False),
        },
        lifespan=[lifespan],
        exception_handlers=exception_handlers(current_metrics),
        request_max_body_size=settings.max_body_bytes,
        middleware=[tracing_middleware(tracing_for(tracer_provider, settings))] if tracer_provider else [],
        before_send=[add_request_id],
        openapi_config=OpenAPIConfig(
            title="Clinical trust gateway",
            version="0.1.0",
            openapi_router=Router(path="/schema", route_handlers=[], guards=[access.public]),
        ),
        debug=False,
    )
    access.check_routes(app)  # every route has exactly one access rule
    return app
