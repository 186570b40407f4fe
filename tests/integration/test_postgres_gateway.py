"""The gateway over a real PostgreSQL audit trail: committed before the reply, read by the clinician
and audit pages, and failing closed (503, counted, no answer text) when the database goes down."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from gateway.settings import Secret
from gateway.testing import Reply, contract_answer
from gateway.web.disclosure import Disclosure
from tests.support.waiting import answers_ok, wait_until

CLINICIAN_KEY = "clin-key-for-pg-tests"
CLIENT_KEY = "client-key-for-pg-tests"
STAFF = {"authorization": f"Bearer {CLINICIAN_KEY}"}
CLIENT = {"authorization": f"Bearer {CLIENT_KEY}"}
DOSE = "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours."
FABRICATED = "Paracetamol cures migraines within ten minutes."
QUESTION = "How much paracetamol can an adult take?"


def answer() -> str:
    return contract_answer(
        f"{DOSE[:-1]} [1]. {FABRICATED[:-1]} [1].",
        [(DOSE, [1], DOSE), (FABRICATED, [1], "paracetamol cures migraines within ten minutes")],
    )


@pytest.fixture
def pg_gateway(start_gateway, audit_url: str) -> tuple[Any, str, str]:  # type: ignore[no-untyped-def]
    scripted, url, services = start_gateway(
        upstream_timeout=5.0,
        clinician_keys=(Secret(CLINICIAN_KEY),),
        api_keys=(Secret(CLIENT_KEY),),
        audit_url=Secret(audit_url),
        audit_timeout=1.0,
    )
    scripted.default = Reply(content=answer())
    assert services.audit.backend == "postgres"
    return services, url, audit_url


def ask(url: str) -> httpx.Response:
    return httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": QUESTION}]},
        headers=CLIENT,
        timeout=30,
    )


def test_record_is_committed_in_postgres_before_the_reply_and_pages_read_it(pg_gateway) -> None:  # type: ignore[no-untyped-def]
    import psycopg

    _services, url, audit_url = pg_gateway
    response = ask(url)
    assert response.status_code == 200
    body = response.json()
    request_id = body["trust"]["request_id"]
    # a separate connection (another replica, an auditor) sees the committed record at once
    with psycopg.connect(audit_url) as conn:
        row = conn.execute(
            "SELECT outcome, removed, answer, record FROM audit_requests WHERE id = %s", (request_id,)
        ).fetchone()
    assert row is not None
    outcome, removed, stored_answer, record_text = row
    assert (outcome, removed) == ("rewritten", 1)
    # the patient read the recorded answer followed by the AI disclosure (gateway.web.disclosure)
    assert body["choices"][0]["message"]["content"] == stored_answer + Disclosure().suffix
    assert FABRICATED not in stored_answer
    assert QUESTION in record_text

    listing = httpx.get(f"{url}/audit?removed=yes", headers=STAFF)
    assert listing.status_code == 200
    assert request_id in listing.text
    assert request_id not in httpx.get(f"{url}/audit?removed=no", headers=STAFF).text
    detail = httpx.get(f"{url}/audit/{request_id}", headers=STAFF)
    assert detail.status_code == 200
    assert "removed" in detail.text.lower()
    as_json = httpx.get(f"{url}/audit/{request_id}/record.json", headers=STAFF).json()
    assert as_json["question"] == QUESTION
    assert request_id in httpx.get(f"{url}/clinician", headers=STAFF).text
    clinician = httpx.get(f"{url}/clinician/requests/{request_id}", headers=STAFF)
    assert clinician.status_code == 200
    assert DOSE[:20] in clinician.text
    ready = httpx.get(f"{url}/readyz").json()
    assert ready["audit"] == "postgres"


def test_database_down_refuses_with_a_reason_counted_and_releases_no_text(
    pg_gateway, postgres_server
) -> None:  # type: ignore[no-untyped-def]
    services, url, _ = pg_gateway
    assert ask(url).status_code == 200
    postgres_server.stop()
    try:
        refused = ask(url)
        assert refused.status_code == 503
        error = refused.json()["error"]
        assert error["code"] == "audit_unavailable"
        assert error["type"] == "service_unavailable"
        assert "audit trail" in error["message"]
        assert DOSE[:30] not in refused.text  # no verified text without its record
        assert "choices" not in refused.json()
        not_ready = httpx.get(f"{url}/readyz")
        assert not_ready.status_code == 503
        assert not_ready.json()["failed"] == ["audit_store"]
        assert str(postgres_server.port) not in not_ready.text  # the open endpoint names no host
        metrics = httpx.get(f"{url}/metrics").text
        assert 'gateway_stage_errors_total{stage="record"} 1.0' in metrics
        assert 'gateway_requests_total{outcome="error"} 1.0' in metrics
        assert 'gateway_dependency_up{dependency="audit_store"} 0.0' in metrics
        pages = httpx.get(f"{url}/audit", headers=STAFF)
        assert pages.status_code == 503  # the audit pages say the trail is unavailable, not "empty"
    finally:
        postgres_server.start()
    # back without a restart of the gateway, once its pool has reconnected (seconds)
    restarted = time.monotonic()
    wait_until(lambda: answers_ok(f"{url}/readyz"), "the gateway ready again after the database returned")
    print(f"ready again {time.monotonic() - restarted:.1f} s after the database restarted")
    assert ask(url).status_code == 200
    assert services.audit.count() == 2
