"""A serving process freezes its start-up heap, so full garbage collections skip it."""

from __future__ import annotations

import gc

from litestar.testing import AsyncTestClient

from gateway.bootstrap import build_services
from gateway.settings import Settings
from gateway.web.app import create_app
from tests.conftest import FIXTURE_KB


def _collected(obj: object) -> bool:
    """Whether a full collection would walk ``obj`` (frozen objects are left out of every generation)."""
    return any(o is obj for o in gc.get_objects())


async def test_a_serving_app_freezes_its_startup_heap_and_thaws_it_at_shutdown(  # type: ignore[no-untyped-def]
    embedder, fixture_store, tmp_path
) -> None:
    settings = Settings(data_dir=tmp_path, knowledge_dir=FIXTURE_KB)
    services = build_services(settings, embedder=embedder, store=fixture_store)
    built_before_start = [services]
    app = create_app(settings, build=lambda _: services)
    assert gc.get_freeze_count() == 0
    async with AsyncTestClient(app) as client:
        assert (await client.get("/healthz")).status_code == 200
        assert gc.get_freeze_count() > 10_000
        assert not _collected(built_before_start)
        assert _collected([])  # what requests create is still collected
    assert gc.get_freeze_count() == 0
    assert _collected(built_before_start)


async def test_an_app_given_its_services_leaves_the_heap_alone(embedder, fixture_store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(data_dir=tmp_path, knowledge_dir=FIXTURE_KB)
    services = build_services(settings, embedder=embedder, store=fixture_store)
    async with AsyncTestClient(create_app(settings, services=services)) as client:
        assert (await client.get("/healthz")).status_code == 200
        assert gc.get_freeze_count() == 0
