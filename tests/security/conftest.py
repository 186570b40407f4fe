"""Fixtures of the security suite: services and gateways built once per module where possible."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.conftest import FIXTURE_KB


@pytest.fixture(scope="module")
def module_services(embedder, fixture_store, tmp_path_factory) -> Iterator[Callable[..., Any]]:  # type: ignore[no-untyped-def]
    """Like ``make_services`` but module-scoped, for gateways shared by a module's tests."""
    from gateway.bootstrap import build_services
    from gateway.settings import Settings

    built: list[Any] = []

    def factory(**overrides: Any) -> Any:
        data_dir = tmp_path_factory.mktemp("security")
        # the failed-authentication throttle is off unless a test turns it on (many tests fail on purpose)
        overrides = {"auth_failures_per_minute": 0.0, **overrides}
        settings = Settings(data_dir=data_dir, knowledge_dir=FIXTURE_KB, **overrides)
        services = build_services(settings, embedder=embedder, store=fixture_store)
        built.append(services)
        return services

    yield factory
    for services in built:
        services.audit.close()


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[Any, str]]:
    from gateway.testing import running_upstream

    with running_upstream() as (scripted, base_url):
        yield scripted, base_url


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    """The CLI's ``main`` configures structlog to the (captured, then closed) stderr: undo it."""
    yield
    import structlog

    structlog.reset_defaults()
