"""The shared Chroma server goes down under a running gateway: the patient gets a safe refusal with
the store_error reason (never model text), it is counted and audited, /readyz says which dependency
failed, and the gateway serves again once Chroma is back."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from gateway.settings import Secret
from gateway.testing import running_upstream
from tests.conftest import FIXTURE_KB
from tests.support.stack import running_gateway

pytestmark = pytest.mark.slow
KEY = "chroma-down-key"
QUESTION = "How much paracetamol can an adult take?"


def test_chroma_down_is_a_counted_audited_refusal_and_unready(embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from bench.bench_gateway import five_claim_answer
    from gateway.bootstrap import build_services
    from gateway.knowledge.corpus import load_manifest
    from gateway.knowledge.store import ChromaStore
    from gateway.settings import Settings
    from tests.support.replicas import running_chroma

    with running_chroma(tmp_path) as chroma, running_upstream() as (scripted, upstream_url):
        chroma_url = chroma.url
        scripted.responder = five_claim_answer
        settings = Settings(
            data_dir=tmp_path / "gw",
            chroma_url=chroma_url,
            knowledge_dir=FIXTURE_KB,
            upstream_base_url=upstream_url,
            upstream_retries=0,
            api_keys=(Secret(KEY),),
        )
        writer = ChromaStore.open(settings, embedder)
        writer.upsert_documents(load_manifest(FIXTURE_KB))
        services = build_services(settings, embedder=embedder)
        try:
            with running_gateway(services) as url:
                headers = {"Authorization": f"Bearer {KEY}"}
                body = {"model": "m", "messages": [{"role": "user", "content": QUESTION}]}
                first = httpx.post(f"{url}/v1/chat/completions", json=body, headers=headers, timeout=60)
                assert first.status_code == 200
                assert first.json()["trust"]["summary"]["refused"] is False
                asked_upstream = len(scripted.requests)

                chroma.stop()
                try:
                    refused = httpx.post(
                        f"{url}/v1/chat/completions", json=body, headers=headers, timeout=120
                    )
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
                deadline = time.monotonic() + 90
                while httpx.get(f"{url}/readyz", timeout=30).status_code != 200:
                    assert time.monotonic() < deadline
                    time.sleep(0.5)
                again = httpx.post(f"{url}/v1/chat/completions", json=body, headers=headers, timeout=60)
                assert again.json()["trust"]["summary"]["refused"] is False
        finally:
            services.audit.close()
