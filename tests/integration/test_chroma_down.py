"""The shared Chroma server goes down under a running gateway: the patient gets a safe refusal with
the store_error reason (never model text), it is counted and audited, /readyz says which dependency
failed, and the gateway serves again once Chroma is back. Until the index version is next read (at
most ``GATEWAY_INDEX_REFRESH_SECONDS`` after the last read), a search whose vectors and records the
process holds is answered from the last committed version, as any search is between two reads."""

from __future__ import annotations

import time
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
from tests.support.stack import running_gateway
from tests.support.waiting import answers_ok, wait_until

pytestmark = pytest.mark.slow
KEY = "chroma-down-key"
QUESTION = "How much paracetamol can an adult take?"
HEADERS = {"Authorization": f"Bearer {KEY}"}
BODY = {"model": "m", "messages": [{"role": "user", "content": QUESTION}]}
REFRESH_SECONDS = 60.0
"""The longest index refresh the settings allow: how long a version read stands."""


@contextmanager
def gateway_over_chroma(
    embedder: Any, tmp_path: Path, refresh_seconds: float
) -> Iterator[tuple[str, Any, Any, Any]]:
    """A gateway over a Chroma server holding the test corpus; yields (url, chroma, upstream, services)."""
    from bench.bench_gateway import five_claim_answer
    from gateway.bootstrap import build_services
    from gateway.knowledge.corpus import load_manifest
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
        services = build_services(settings, embedder=embedder)
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
    with gateway_over_chroma(embedder, tmp_path, refresh_seconds=REFRESH_SECONDS) as (
        url,
        chroma,
        _,
        services,
    ):
        first = httpx.post(f"{url}/v1/chat/completions", json=BODY, headers=HEADERS, timeout=60)
        assert first.json()["trust"]["summary"]["refused"] is False
        sources = {s["passage_id"] for s in first.json()["trust"]["sources"]}
        assert sources

        # the version is read now (not back at the first request's search, before its draft and
        # checks): it stands for the next REFRESH_SECONDS, as it does with Chroma up
        version_read = time.monotonic()
        services.store.committed_hashes()
        chroma.stop()
        try:
            # the same question: its passages' vectors and records are held
            held = httpx.post(f"{url}/v1/chat/completions", json=BODY, headers=HEADERS, timeout=120)
            if time.monotonic() - version_read >= REFRESH_SECONDS:
                # not a timing assertion: a machine paused that long may have read the version again
                # (due, and refused for Chroma being down); what is tested here was not reached
                pytest.skip(f"over {REFRESH_SECONDS:g} s from the version read to the held request")
            assert held.json()["trust"]["summary"]["refused"] is False
            assert {s["passage_id"] for s in held.json()["trust"]["sources"]} == sources
            # a question needing a record the process has not read yet cannot be answered
            other = {"model": "m", "messages": [{"role": "user", "content": "What helps hay fever?"}]}
            refused = httpx.post(f"{url}/v1/chat/completions", json=other, headers=HEADERS, timeout=120)
            summary = refused.json()["trust"]["summary"]
            assert summary["refused"] is True
            assert summary["reason"] == "store_error"
            assert services.audit.count() == 3
        finally:
            chroma.start()
