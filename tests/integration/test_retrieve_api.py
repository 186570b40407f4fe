"""POST /v1/retrieve over real HTTP: passages with provenance, filters, and OpenAI-format errors."""

from __future__ import annotations

import httpx
import pytest

from gateway.testing import serve_in_thread
from gateway.web.app import create_app

FIELDS = {"id", "document_id", "score", "title", "url", "org", "tier", "text"}


@pytest.fixture(scope="module")
def gateway_url(embedder, fixture_store, tmp_path_factory):  # type: ignore[no-untyped-def]
    from gateway.bootstrap import build_services
    from gateway.settings import Settings
    from tests.conftest import FIXTURE_KB

    settings = Settings(data_dir=tmp_path_factory.mktemp("retrieve-api"), knowledge_dir=FIXTURE_KB)
    services = build_services(settings, embedder=embedder, store=fixture_store)
    with serve_in_thread(create_app(settings, services=services)) as url:
        yield url
    services.audit.close()


def test_retrieve_returns_ranked_passages_with_provenance(gateway_url: str) -> None:
    response = httpx.post(
        f"{gateway_url}/v1/retrieve", json={"query": "How much paracetamol can adults take?", "k": 3}
    )
    assert response.status_code == 200
    passages = response.json()["passages"]
    assert 1 <= len(passages) <= 3
    assert all(set(p) == FIELDS for p in passages)
    top = passages[0]
    assert top["document_id"] == "paracetamol"
    assert top["id"].startswith("paracetamol:")
    assert top["org"] == "NHS"
    assert top["tier"] == "clinical_reference"
    assert top["url"].startswith("https://")
    scores = [p["score"] for p in passages]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert top["score"] >= 0.5


def test_retrieve_filters_by_tier_and_org(gateway_url: str) -> None:
    body = {"query": "paracetamol dose", "k": 10, "tiers": ["regulatory"]}
    passages = httpx.post(f"{gateway_url}/v1/retrieve", json=body).json()["passages"]
    assert passages
    assert {p["tier"] for p in passages} == {"regulatory"}
    body = {"query": "eye drops", "orgs": ["Royal College of Ophthalmologists"]}
    passages = httpx.post(f"{gateway_url}/v1/retrieve", json=body).json()["passages"]
    assert passages
    assert {p["document_id"] for p in passages} == {"cataract-recovery"}


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"k": 3}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "x", "k": 0}, "k"),
        ({"query": "x", "k": "5"}, "k"),
        ({"query": "x", "k": 10_000}, "k"),
        ({"query": "x", "tiers": "guideline"}, "tiers"),
        ({"query": "x", "orgs": [1]}, "orgs"),
        ({"query": "x", "top_k": 3}, "top_k"),
    ],
)
def test_bad_requests_name_the_field(gateway_url: str, body: dict[str, object], param: str) -> None:
    response = httpx.post(f"{gateway_url}/v1/retrieve", json=body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param


def test_body_must_be_a_json_object(gateway_url: str) -> None:
    response = httpx.post(
        f"{gateway_url}/v1/retrieve", content=b"[1, 2]", headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_json"
