"""The shared Chroma server goes down under a running gateway: the patient gets a safe refusal with
the store_error reason (never model text), it is counted and audited, /readyz says which dependency
failed, and the gateway serves again once Chroma is back. Until the index version is next read (at
most ``GATEWAY_INDEX_REFRESH_SECONDS`` after the last read), a search whose vectors and records the
process holds is answered from the last committed version, as any search is between two reads. The
index's clock is the test's (``tests.support.clock``): the version read stands until the test moves it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.bootstrap import open_store
from gateway.settings import Secret
from gateway.testing import running_upstream
from tests.conftest import FIXTURE_KB
from tests.support.clock import ManualClock, services_on_clock
from tests.support.stack import running_gateway
from tests.support.waiting import answers_ok, wait_until

pytestmark = pytest.mark.slow
KEY = "chroma-down-key"
QUESTION = "How much paracetamol can an adult take?"
HEADERS = {"Authorization": f"Bearer {KEY}"}
BODY = {"model": "m", "messages": [{"role": "user", "content": QUESTION}]}
REFRESH_SECONDS = 60.0
"""The longest index refresh the settings allow: how long a version read stands (on the index's clock)."""


@contextmanager
def gateway_over_chroma(
    embedder: Any, tmp_path: Path, refresh_seconds: float, clock: ManualClock | None = None
) -> Iterator[tuple[str, Any, Any, Any]]:
    """A gateway over a Chroma server holding the test corpus; yields (url, chroma, upstream, services).
    With ``clock``, the gateway's store times its index refresh on it (else on the real clock)."""
    from bench.bench_gateway import five_claim_answer
    from gateway.bootstrap import build_services
    from gateway.knowledge.loaders import load_manifest
    from gateway.settings import Settings
    from tests.support.replicas import running_chroma

    with running_chroma(tmp_path) as chroma, running_upstream() as (scripted, upstream_url):
        scripted.responder = five_claim_answer
        settings = Settings(
            data_dir=tmp_path / "gw",
            chroma_url=chroma.url,
            knowledge_dir=FIXTURE_KB,
            upstream_base_url=upstream_url,
            upstream_retries=0,
            api_keys=(Secret(KEY),),
            index_refresh_seconds=refresh_seconds,
        )
        open_store(settings, embedder).upsert_documents(load_manifest(FIXTURE_KB))
        if clock is None:
            services = build_services(settings, embedder=embedder)
        else:
            services = services_on_clock(settings, embedder, clock)
        try:
            with running_gateway(services) as url:
                yield url, chroma, scripted, services
        finally:
            services.audit.close()


def test_chroma_down_is_a_counted_audited_refusal_and_unready(embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # every search reads the index version, so the first search after the outage meets it
    with gateway_over_chroma(embedder, tmp_path, refresh_seconds=0) as (url, chroma, scripted, services):
        first = httpx.post(f"{url}/v1/chat/completions", json=BODY, headers=HEADERS, timeout=60)
        assert first.status_code == 200
        assert first.json()["trust"]["summary"]["refused"] is False
        asked_upstream = len(scripted.requests)

        chroma.stop()
        try:
            refused = httpx.post(f"{url}/v1/chat/completions", json=BODY, headers=HEADERS, timeout=120)
            assert refused.status_code == 200  # a refusal is an answer: the safe message
            summary = refused.json()["trust"]["summary"]
            assert summary["refused"] is True
            assert summary["reason"] == "store_error"
            assert len(scripted.requests) == asked_upstream  # the model was never asked
            ready = httpx.get(f"{url}/readyz", timeout=120)
            assert ready.status_code == 503
            assert ready.json()["failed"] == ["knowledge_store"]
            metrics = httpx.get(f"{url}/metrics").text
            assert 'gateway_refusals_total{reason="store_error"} 1.0' in metrics
            assert 'gateway_stage_errors_total{stage="retrieve"} 1.0' in metrics
            assert 'gateway_dependency_up{dependency="knowledge_store"} 0.0' in metrics
            assert services.audit.count() == 2
        finally:
            chroma.start()
        wait_until(
            lambda: answers_ok(f"{url}/readyz", 30), "the gateway ready again after chroma returned", 90
        )
        again = httpx.post(f"{url}/v1/chat/completions", json=BODY, headers=HEADERS, timeout=60)
        assert again.json()["trust"]["summary"]["refused"] is False


def test_between_two_version_reads_held_passages_answer_and_others_are_refused(
    embedder, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    clock = ManualClock()
    with gateway_over_chroma(embedder, tmp_path, REFRESH_SECONDS, clock) as (url, chroma, _, services):
        first = httpx.post(f"{url}/v1/chat/completions", json=BODY, headers=HEADERS, timeout=60)
        assert first.json()["trust"]["summary"]["refused"] is False
        sources = {s["passage_id"] for s in first.json()["trust"]["sources"]}
        assert sources

        # the index's clock stands still: the version read at the first search stands however long the
        # machine takes from here, as it does for REFRESH_SECONDS on the real clock
        chroma.stop()
        try:
            # the same question: its passages' vectors and records are held
            held = httpx.post(f"{url}/v1/chat/completions", json=BODY, headers=HEADERS, timeout=120)
            assert held.json()["trust"]["summary"]["refused"] is False
            assert {s["passage_id"] for s in held.json()["trust"]["sources"]} == sources
            # a question needing a record the process has not read yet cannot be answered
            other = {"model": "m", "messages": [{"role": "user", "content": "What helps hay fever?"}]}
            refused = httpx.post(f"{url}/v1/chat/completions", json=other, headers=HEADERS, timeout=120)
            summary = refused.json()["trust"]["summary"]
            assert summary["refused"] is True
            assert summary["reason"] == "store_error"
            # once the interval has passed the version is read again: Chroma is down, so even the
            # held question is refused
            clock.advance(REFRESH_SECONDS)
            late = httpx.post(f"{url}/v1/chat/completions", json=BODY, headers=HEADERS, timeout=120)
            assert late.json()["trust"]["summary"]["reason"] == "store_error"
            assert services.audit.count() == 4
        finally:
            chroma.start()
