"""A serving process pays the first request's one-off costs before it serves, and asks no model."""

from __future__ import annotations

import dataclasses

from litestar.testing import AsyncTestClient
from structlog.testing import capture_logs

from gateway.bootstrap import build_services
from gateway.errors import StoreError
from gateway.retrieval.retrieve import Retriever
from gateway.settings import Settings
from gateway.testing import ScriptedConnections
from gateway.web.app import create_app
from gateway.web.warm_up import WARM_UP_QUESTION
from tests.conftest import FIXTURE_KB


async def test_a_serving_app_warms_search_and_triage_before_its_first_request(  # type: ignore[no-untyped-def]
    embedder, fixture_store, tmp_path
) -> None:
    settings = Settings(  # with the query rewrite on: the warm-up's search must still ask no model
        data_dir=tmp_path,
        knowledge_dir=FIXTURE_KB,
        upstream_base_url="http://127.0.0.1:9/v1",
        query_rewrite=True,
    )
    connections = ScriptedConnections(default="ok")
    services = build_services(settings, embedder=embedder, store=fixture_store, connect=connections)
    fixture_store.exact_passages.forget()  # as a fresh process has them: not read yet
    with capture_logs() as logs:
        async with AsyncTestClient(create_app(settings, build=lambda _: services)) as client:
            assert fixture_store.exact_passages.loaded_version() == fixture_store.version
            assert WARM_UP_QUESTION in embedder.cached_texts
            assert services.audit.count() == 0  # not a request: nothing audited
            assert all(m.calls == 0 for m in connections.made.values())  # no model asked
            assert (await client.get("/readyz")).status_code == 200
    assert [e for e in logs if e["event"] == "warmed_up"]


async def test_a_failing_warm_up_is_logged_and_the_app_still_starts(  # type: ignore[no-untyped-def]
    embedder, fixture_store, tmp_path
) -> None:
    class BrokenStore:
        async def search(self, *_: object) -> list[object]:
            raise StoreError("chroma is down")

        async def count(self) -> int:
            raise StoreError("chroma is down")

    settings = Settings(data_dir=tmp_path, knowledge_dir=FIXTURE_KB)
    services = build_services(settings, embedder=embedder, store=fixture_store)
    retriever = Retriever(BrokenStore(), services.retriever.policy)  # type: ignore[arg-type]
    broken = dataclasses.replace(services, retriever=retriever)
    with capture_logs() as logs:
        async with AsyncTestClient(create_app(settings, build=lambda _: broken)) as client:
            assert (await client.get("/healthz")).status_code == 200
    failed = [e for e in logs if e["event"] == "warm_up_failed"]
    assert failed
    assert failed[0]["error_type"] == "StoreError"
