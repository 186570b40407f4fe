"""``POST /v1/verify`` end to end: a real gateway on loopback, sources as text and as URLs served by a
real loopback web site (allow-listed through a policy file, loopback fetching switched on)."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest
import yaml

from gateway.resources import bundled
from gateway.services import Services
from gateway.testing import SubstringVerifier
from tests.support.components import with_components
from tests.support.stack import running_gateway

RESPONSE_KEYS = {
    "claims",
    "statement_support",
    "response_supported",
    "url_validity",
    "conversational_faithfulness",
    "claims_by_status",
    "statement_support_range",
    "response_support_possible",
    "operating_point",
}
CLAIM_KEYS = {
    "text",
    "span",
    "kind",
    "verdict",
    "score",
    "evidence",
    "method",
    "source_ids",
    "status",
    "contradiction",
}

FLU = "Flu symptoms come on quickly. Most people feel better within a week."
HAY_FEVER = "Hay fever is an allergy to pollen. Antihistamines can help with the symptoms."


@pytest.fixture
def policy_dir(tmp_path: Path) -> Path:
    """The bundled policies with 127.0.0.1 added to ``verification.url_allowed_domains``."""
    target = tmp_path / "policies"
    shutil.copytree(bundled("policies"), target)
    thresholds = target / "thresholds.yaml"
    data = yaml.safe_load(thresholds.read_text(encoding="utf-8"))
    verification = data.setdefault("verification", {})
    verification["url_allowed_domains"] = [*verification.get("url_allowed_domains", []), "127.0.0.1"]
    thresholds.write_text(yaml.safe_dump(data), encoding="utf-8")
    return target


def with_substring_verifier(services: Services) -> Services:
    return with_components(services, verifier=SubstringVerifier())


def with_failing_verifier(services: Services) -> Services:
    return with_components(services, verifier=SubstringVerifier(fail=True))


@pytest.fixture
def start_verify_gateway(start_gateway, policy_dir):  # type: ignore[no-untyped-def]
    """Start a gateway whose verifier is ``prepare``'s (default: the deterministic substring verifier,
    the plumbing under test): ``(url, services)``."""

    def start(prepare=with_substring_verifier):  # type: ignore[no-untyped-def]
        _, url, services = start_gateway(
            scripted_upstream=False, prepare=prepare, policy_dir=policy_dir, allow_loopback_fetch=True
        )
        return url, services

    return start


@pytest.fixture
def verify_gateway(start_verify_gateway):  # type: ignore[no-untyped-def]
    """A gateway whose verifier is the deterministic substring verifier (the plumbing under test)."""
    return start_verify_gateway()


def post(url: str, body: object) -> httpx.Response:
    return httpx.post(f"{url}/v1/verify", json=body, timeout=60)


def cited_urls(services, valid: str) -> float:  # type: ignore[no-untyped-def]
    value = services.metrics.registry.get_sample_value("gateway_cited_urls_total", {"valid": valid})
    return value or 0.0


def url_failures(services, reason: str) -> float:  # type: ignore[no-untyped-def]
    value = services.metrics.registry.get_sample_value("gateway_cited_url_failures_total", {"reason": reason})
    return value or 0.0


def test_text_sources_claims_kinds_and_metrics(verify_gateway) -> None:  # type: ignore[no-untyped-def]
    url, _ = verify_gateway
    answer = (
        "Thanks for asking! Most people feel better within a week [flu]. "
        "Antihistamines cure hay fever [hay]. Do you have a fever?"
    )
    response = post(
        url,
        {
            "answer": answer,
            "sources": [
                {"id": "flu", "text": FLU, "title": "Flu"},
                {"id": "hay", "text": HAY_FEVER},
            ],
        },
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == RESPONSE_KEYS
    kinds = [c["kind"] for c in body["claims"]]
    assert kinds == ["acknowledgement", "claim", "claim", "question"]
    for claim in body["claims"]:
        assert set(claim) >= CLAIM_KEYS
        span = claim["span"]
        assert 0 <= span["start"] < span["end"] <= len(answer)
    ack, supported, unsupported, question = body["claims"]
    assert ack["verdict"] is None
    assert ack["score"] is None
    assert ack["method"] is None
    assert question["verdict"] is None
    assert supported["verdict"] == "supported"
    assert supported["source_ids"] == ["flu"]
    assert supported["evidence"]["source_id"] == "flu"
    assert supported["evidence"]["text"] == "Most people feel better within a week"
    ev = supported["evidence"]["span"]
    assert FLU[ev["start"] : ev["end"]] == "Most people feel better within a week"
    assert answer[supported["span"]["start"] : supported["span"]["end"]].startswith("Most people feel")
    assert unsupported["verdict"] == "unsupported"
    assert unsupported["source_ids"] == ["hay"]
    assert body["statement_support"] == 0.5
    assert body["response_supported"] is False
    assert body["conversational_faithfulness"] == 0.5
    assert body["url_validity"] == {"urls": [], "valid": 0, "total": 0, "share": None}


def test_atomic_claims_are_judged_separately(verify_gateway) -> None:  # type: ignore[no-untyped-def]
    url, _ = verify_gateway
    answer = "The rate is 28% for men and 1% for women [s]."
    body = post(
        url, {"answer": answer, "sources": [{"id": "s", "text": "Overall, the rate is 28% for men."}]}
    ).json()
    assert [(c["text"], c["verdict"]) for c in body["claims"]] == [
        ("The rate is 28% for men", "supported"),
        ("The rate is 1% for women", "unsupported"),
    ]
    assert body["response_supported"] is False
    assert body["conversational_faithfulness"] == 0.0  # one informative sentence, not fully grounded


def test_claim_without_marker_is_checked_against_all_sources(verify_gateway) -> None:  # type: ignore[no-untyped-def]
    url, services = verify_gateway
    body = post(
        url,
        {
            "answer": "Antihistamines can help with the symptoms.",
            "sources": [
                {"id": "1", "text": FLU},
                {"id": "2", "text": HAY_FEVER},
            ],
        },
    ).json()
    claim = body["claims"][0]
    assert claim["source_ids"] == []
    assert claim["verdict"] == "supported"
    assert claim["evidence"]["source_id"] == "2"
    assert len(services.verifier.calls[-1][0].sources) == 2
    assert body["response_supported"] is True


def test_markers_name_sources_by_id_not_position(verify_gateway) -> None:  # type: ignore[no-untyped-def]
    url, _ = verify_gateway
    body = post(
        url,
        {
            "answer": "Hay fever is an allergy to pollen [2].",
            "sources": [
                {"id": "2", "text": HAY_FEVER},
                {"id": "1", "text": FLU},
            ],
        },
    ).json()
    assert body["claims"][0]["source_ids"] == ["2"]
    assert body["claims"][0]["verdict"] == "supported"


def test_url_sources_are_fetched_and_url_validity_is_reported_and_counted(verify_gateway, site) -> None:  # type: ignore[no-untyped-def]
    url, services = verify_gateway
    _, site_url = site
    before_valid, before_invalid = cited_urls(services, "true"), cited_urls(services, "false")
    before_status = url_failures(services, "http_status")
    before_blocked = url_failures(services, "blocked_address")
    answer = (
        "Most people feel better within a week without needing to see a GP [nhs]. "
        "Flu always needs antibiotics [gone]. "
        "Flu is dangerous [meta]."
    )
    body = post(
        url,
        {
            "answer": answer,
            "sources": [
                {"id": "nhs", "url": f"{site_url}/page/flu", "title": "Flu"},
                {"id": "gone", "url": f"{site_url}/page/missing"},
                {"id": "meta", "url": "http://169.254.169.254/latest/meta-data/"},
            ],
        },
    )
    assert body.status_code == 200, body.text
    data = body.json()
    verdicts = [(c["source_ids"], c["verdict"], c["method"]) for c in data["claims"]]
    assert verdicts[0] == (["nhs"], "supported", "substring")
    assert verdicts[1] == (["gone"], "unsupported", "source_unavailable")
    assert verdicts[2] == (["meta"], "unsupported", "source_unavailable")
    validity = data["url_validity"]
    by_url = {u["url"]: u for u in validity["urls"]}
    assert by_url[f"{site_url}/page/flu"]["valid"] is True
    assert by_url[f"{site_url}/page/flu"]["status"] == 200
    assert by_url[f"{site_url}/page/missing"] == {
        "url": f"{site_url}/page/missing",
        "source_ids": ["gone"],
        "valid": False,
        "status": 404,
        "reason": "http_status",
        "final_url": f"{site_url}/page/missing",
    }
    assert by_url["http://169.254.169.254/latest/meta-data/"]["reason"] == "blocked_address"
    assert (validity["valid"], validity["total"]) == (1, 3)
    assert validity["share"] == pytest.approx(1 / 3, abs=1e-3)
    assert cited_urls(services, "true") == before_valid + 1
    assert cited_urls(services, "false") == before_invalid + 2
    assert url_failures(services, "http_status") == before_status + 1
    assert url_failures(services, "blocked_address") == before_blocked + 1


def test_url_outside_the_allow_list_is_invalid(verify_gateway) -> None:  # type: ignore[no-untyped-def]
    url, _ = verify_gateway
    data = post(
        url, {"answer": "Flu is common [x].", "sources": [{"id": "x", "url": "https://evil.example/flu"}]}
    ).json()
    assert data["url_validity"]["urls"][0]["reason"] == "domain_not_allowed"
    assert data["claims"][0]["verdict"] == "unsupported"


def test_redirects_are_followed_for_url_sources(verify_gateway, site) -> None:  # type: ignore[no-untyped-def]
    url, _ = verify_gateway
    _, site_url = site
    data = post(
        url,
        {
            "answer": "Most people feel better within a week [r].",
            "sources": [{"id": "r", "url": f"{site_url}/redirect/2"}],
        },
    ).json()
    entry = data["url_validity"]["urls"][0]
    assert entry["valid"] is True
    assert entry["final_url"] == f"{site_url}/page/flu"
    assert data["claims"][0]["verdict"] == "supported"


def test_marker_naming_no_source_is_unsupported(verify_gateway) -> None:  # type: ignore[no-untyped-def]
    url, services = verify_gateway
    calls = len(services.verifier.calls)
    data = post(
        url, {"answer": "Flu symptoms come on quickly [9].", "sources": [{"id": "1", "text": FLU}]}
    ).json()
    claim = data["claims"][0]
    assert claim["verdict"] == "unsupported"
    assert claim["source_ids"] == []
    assert len(services.verifier.calls) == calls  # decided without the verifier


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"sources": [{"id": "1", "text": FLU}]}, "answer"),
        ({"answer": 3, "sources": [{"id": "1", "text": FLU}]}, "answer"),
        ({"answer": "  ", "sources": [{"id": "1", "text": FLU}]}, "answer"),
        ({"answer": "Flu [1]."}, "sources"),
        ({"answer": "Flu [1].", "sources": {"id": "1"}}, "sources"),
        ({"answer": "Flu [1].", "sources": []}, "sources"),
        ({"answer": "Flu [1].", "sources": ["text"]}, "sources[0]"),
        ({"answer": "Flu [1].", "sources": [{"text": FLU}]}, "sources[0].id"),
        ({"answer": "Flu [1].", "sources": [{"id": "a b", "text": FLU}]}, "sources[0].id"),
        ({"answer": "Flu [1].", "sources": [{"id": "1"}]}, "sources[0].text"),
        ({"answer": "Flu [1].", "sources": [{"id": "1", "text": 5}]}, "sources[0].text"),
        ({"answer": "Flu [1].", "sources": [{"id": "1", "url": "file:///etc/passwd"}]}, "sources[0].url"),
        (
            {"answer": "Flu [1].", "sources": [{"id": "1", "text": FLU}, {"id": "1", "text": FLU}]},
            "sources[1].id",
        ),
        ({"answer": "Flu [1].", "sources": [{"id": str(i), "text": FLU} for i in range(21)]}, "sources"),
    ],
)
def test_bad_input_is_an_openai_error_naming_the_field(verify_gateway, body, param) -> None:  # type: ignore[no-untyped-def]
    url, _ = verify_gateway
    response = post(url, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert param.split(".")[0].split("[")[0] in error["message"]


def test_body_that_is_not_json_is_rejected(verify_gateway) -> None:  # type: ignore[no-untyped-def]
    url, _ = verify_gateway
    response = httpx.post(
        f"{url}/v1/verify", content=b"{not json", headers={"content-type": "application/json"}, timeout=30
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_json"


def test_verifier_failure_is_a_503_not_a_verdict(start_verify_gateway) -> None:  # type: ignore[no-untyped-def]
    url, _ = start_verify_gateway(with_failing_verifier)
    response = post(
        url, {"answer": "Flu symptoms come on quickly [1].", "sources": [{"id": "1", "text": FLU}]}
    )
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "verifier_error"


def test_with_the_configured_verifier_a_wrong_number_is_not_supported(make_services) -> None:  # type: ignore[no-untyped-def]
    # whatever verifier bootstrap builds: the response keeps its shape and fails closed on a clash
    services = make_services()
    with running_gateway(services) as url:
        data = post(
            url,
            {
                "answer": "Flu symptoms come on quickly [1]. Most people feel better within 9 weeks [1].",
                "sources": [{"id": "1", "text": FLU}],
            },
        ).json()
    assert set(data) == RESPONSE_KEYS
    assert data["claims"][1]["verdict"] in ("unsupported", "contradicted")
    assert data["claims"][1]["method"]
    assert data["response_supported"] is False
