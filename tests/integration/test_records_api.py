"""Records through the serving gateway (issue 33): patient text encrypted at rest, every view of a
record in the access log, and the chain intact after real traffic, streamed and not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.audit.crypto import new_key_text
from gateway.audit.integrity import verify_store
from gateway.settings import Secret
from gateway.testing import contract_answer
from gateway.verification.verifier import operating_point
from gateway.web.disclosure import Disclosure
from tests.support.audit import FailingAuditStore
from tests.support.components import with_components

CLINICIAN_KEY = "clin-key-for-tests-1"
ADMIN_KEY = "admin-key-for-tests-1"
CLIENT_KEY = "client-key-for-tests"
DOSE = "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours."
NAME = "Philippa Quenby-Arkwright"
NHS_NUMBER = "485 777 3456"
AUDIT_KEY = new_key_text("ward-1")
QUESTION = f"My name is {NAME}, NHS number {NHS_NUMBER}. How much paracetamol can I take?"


GATEWAY_SETTINGS = {
    "upstream_timeout": 5.0,
    "api_keys": (Secret(CLIENT_KEY),),
    "clinician_keys": (Secret(CLINICIAN_KEY),),
    "admin_keys": (Secret(ADMIN_KEY),),
    "audit_key": Secret(AUDIT_KEY),
}


def ask(url: str, *, stream: bool = False) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "user", "content": QUESTION}], "stream": stream}
    response = httpx.post(
        f"{url}/v1/chat/completions", json=body, headers={"authorization": f"Bearer {CLIENT_KEY}"}, timeout=30
    )
    assert response.status_code == 200, response.text
    return response


def raw_bytes(path: Path) -> bytes:
    """The database file and its write-ahead log, as a thief with the disk would read them."""
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def test_patient_text_never_reaches_the_disk_in_clear_and_staff_still_read_it(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = gateway
    scripted.queue(contract_answer(f"{DOSE[:-1]} [1].", [(DOSE, [1], DOSE)]))
    scripted.queue(contract_answer(f"{DOSE[:-1]} [1].", [(DOSE, [1], DOSE)]))
    plain = ask(url)
    ask(url, stream=True)
    request_id = plain.headers["x-request-id"]
    stored = raw_bytes(services.settings.resolved_audit_path)
    for secret in (NAME, NHS_NUMBER, "Quenby", "485 777"):
        assert secret.encode() not in stored
    assert DOSE[:30].encode() not in stored  # the answer and the draft are sealed too
    assert b'"label":"supported"' in stored  # verdicts stay queryable
    page = httpx.get(
        f"{url}/clinician/requests/{request_id}", headers={"authorization": f"Bearer {CLINICIAN_KEY}"}
    )
    assert page.status_code == 200
    assert NAME in page.text  # decrypted for the clinician
    assert verify_store(services.audit, None).intact


def test_every_view_is_in_the_access_log_which_only_admins_read(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = gateway
    scripted.queue(contract_answer(f"{DOSE[:-1]} [1].", [(DOSE, [1], DOSE)]))
    request_id = ask(url).headers["x-request-id"]
    clinician = {"authorization": f"Bearer {CLINICIAN_KEY}"}
    admin = {"authorization": f"Bearer {ADMIN_KEY}"}
    assert httpx.get(f"{url}/clinician/requests/{request_id}", headers=clinician).status_code == 200
    assert httpx.get(f"{url}/audit/{request_id}", headers=admin).status_code == 200
    assert httpx.get(f"{url}/audit/{request_id}/record.json", headers=clinician).status_code == 200
    denied = httpx.get(f"{url}/audit/access", headers=clinician)
    assert denied.status_code == 403
    assert denied.json()["error"]["code"] == "admin_only"
    log = httpx.get(f"{url}/audit/access", headers=admin)
    assert log.status_code == 200
    rows = log.text.split("<tbody>", 1)[1]
    assert rows.count(request_id) >= 3 * 2  # three views, each with a link and its text
    for action, who in (
        ("view:clinician", "clinician#1"),
        ("view:audit", "admin#1"),
        ("view:record.json", "clinician#1"),
    ):
        assert action in rows
        assert who in rows


def with_audit_down(services: Any) -> Any:
    """``services`` whose audit store fails every write (``FailingAuditStore``)."""
    return with_components(services, audit=FailingAuditStore(services.audit))


def test_every_response_has_a_request_id_errors_included(start_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, services = start_gateway(prepare=with_audit_down, **GATEWAY_SETTINGS)
    client = {"authorization": f"Bearer {CLIENT_KEY}"}
    body = {"model": "m", "messages": [{"role": "user", "content": "How much paracetamol?"}]}
    responses = {
        "models": httpx.get(f"{url}/v1/models", headers=client),
        "401": httpx.post(f"{url}/v1/chat/completions", json=body),
        "404": httpx.get(f"{url}/v1/nothing-here", headers=client),
        "400": httpx.post(f"{url}/v1/chat/completions", json={**body, "top_p": "x"}, headers=client),
        "415": httpx.post(f"{url}/v1/chat/completions", data={"messages": "hi"}, headers=client),
        "page": httpx.get(f"{url}/healthz"),
    }
    for name, response in responses.items():
        assert response.headers.get("x-request-id", "").startswith("req_"), name
    ids = {r.headers["x-request-id"] for r in responses.values()}
    assert len(ids) == len(responses)  # one id per request
    assert responses["400"].json()["error"]["param"] == "top_p"

    before = services.audit.count()  # the audit store is down: the answer is refused, nothing written
    refused = httpx.post(f"{url}/v1/chat/completions", json=body, headers=client, timeout=30)
    assert refused.status_code == 503
    assert refused.json()["error"]["code"] == "audit_unavailable"
    assert refused.headers["x-request-id"].startswith("req_")
    assert services.audit.count() == before


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b"messages=hi&model=m", "application/x-www-form-urlencoded"),
        (b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}', "text/plain"),
        (b"<chat><model>m</model></chat>", "application/xml"),
    ],
)
def test_a_json_endpoint_refuses_other_bodies_with_415(gateway, content: bytes, content_type: str) -> None:  # type: ignore[no-untyped-def]
    _, url, services = gateway
    before = services.audit.count()
    for path in ("/v1/chat/completions", "/v1/verify", "/v1/retrieve"):
        response = httpx.post(
            f"{url}{path}",
            content=content,
            headers={"authorization": f"Bearer {CLIENT_KEY}", "content-type": content_type},
        )
        assert response.status_code == 415, (path, response.text)
        error = response.json()["error"]
        assert (error["type"], error["code"], error["param"]) == (
            "invalid_request_error",
            "unsupported_media_type",
            "Content-Type",
        )
    assert services.audit.count() == before  # refused before the pipeline: nothing answered


def test_every_patient_facing_answer_and_the_patient_page_carry_the_ai_disclosure(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = gateway
    notice = Disclosure().notice
    scripted.queue(contract_answer(f"{DOSE[:-1]} [1].", [(DOSE, [1], DOSE)]))
    scripted.queue(contract_answer(f"{DOSE[:-1]} [1].", [(DOSE, [1], DOSE)]))
    body = ask(url).json()
    assert body["choices"][0]["message"]["content"].endswith("\n\n" + notice)
    assert body["trust"]["ai_disclosure"] == {"shown": True, "notice": notice}
    events = [
        json.loads(line[len("data: ") :])
        for line in ask(url, stream=True).text.splitlines()
        if line.startswith("data: {")
    ]
    pieces = [e["choices"][0]["delta"].get("content", "") for e in events if "choices" in e]
    assert pieces[-2] == "\n\n" + notice  # the last piece of text, before the final chunk
    assert events[-1]["trust"]["ai_disclosure"]["shown"] is True
    page = httpx.get(f"{url}/")
    assert 'id="ai-disclosure"' in page.text
    assert notice in page.text


def test_export_as_json_lines_and_fhir_carries_what_rebuilds_each_answer(
    gateway, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from gateway.cli import main

    scripted, url, services = gateway
    scripted.queue(contract_answer(f"{DOSE[:-1]} [1].", [(DOSE, [1], DOSE)]))
    request_id = ask(url).headers["x-request-id"]
    monkeypatch.setenv("GATEWAY_AUDIT_PATH", str(services.settings.resolved_audit_path))
    monkeypatch.setenv("GATEWAY_AUDIT_KEY", AUDIT_KEY)
    window = ["--since", "2000-01-01", "--until", "2100-01-01"]
    lines_path, fhir_path = tmp_path / "records.jsonl", tmp_path / "records.ndjson"
    assert main(["audit", "export", *window, "--out", str(lines_path)]) == 0
    assert main(["audit", "export", *window, "--format", "fhir", "--out", str(fhir_path)]) == 0
    (line,) = [json.loads(x) for x in lines_path.read_text().splitlines()]
    assert line["record"]["request_id"] == request_id
    assert NAME in line["record"]["question"]  # decrypted for the records system
    rebuild = line["rebuild"]
    assert len(rebuild["policy_hash"]) == 64
    assert rebuild["gateway_version"]
    assert rebuild["model"] == "m"
    assert rebuild["passages"]
    assert all(len(p["version"]) == 16 for p in rebuild["passages"])
    assert rebuild["claims"][0]["verdict"] == "supported"
    point = operating_point(services.checker.verifier)
    assert rebuild["operating_point"] == point == line["record"]["trust"]["operating_point"]
    event, provenance = [json.loads(x) for x in fhir_path.read_text().splitlines()]
    assert (event["resourceType"], provenance["resourceType"]) == ("AuditEvent", "Provenance")
    assert event["entity"][0]["what"]["identifier"]["value"] == request_id
    details = {d["type"]: d["valueString"] for d in event["entity"][0]["detail"]}
    assert details["policy_hash"] == rebuild["policy_hash"]
    assert details["operating_point"] == point
    assert details["claim[1]"].startswith("verdict=supported")
    sources = [e["what"]["identifier"]["value"] for e in provenance["entity"]]
    assert sources == [f"{p['id']}@{p['version']}" for p in rebuild["passages"]]
    actions = [entry.action for entry in services.audit.access_log(10)]
    assert actions[:2] == ["export:fhir", "export:jsonl"]
