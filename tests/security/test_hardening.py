"""Issue 19, black-box against a running gateway: no 500 for bad input, no unverified text or unsafe
link by any door, sessions revoked at logout, failed authentication throttled per address, and store
faults visible in ``/readyz`` and in the refusal reason.
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import httpx
import pytest

from gateway.audit import AuditFilter
from gateway.bootstrap import open_store
from gateway.settings import Secret
from gateway.testing import Reply, contract_answer
from tests.support.components import with_components
from tests.support.stack import running_gateway

CLIENT_KEY = "hardening-client-key-1f2e3d"
STAFF_KEY = "hardening-clinician-key-9a8b7c"
QUESTION = "How much paracetamol can an adult take?"
DOSE = "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours."


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def chat(url: str, **extra: Any) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "user", "content": QUESTION}], **extra}
    return httpx.post(f"{url}/v1/chat/completions", json=body, headers=bearer(CLIENT_KEY), timeout=60)


GATEWAY_SETTINGS = {
    "scripted_upstream": False,
    "api_keys": (Secret(CLIENT_KEY),),
    "clinician_keys": (Secret(STAFF_KEY),),
}


# --- no 500 for bad input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "raw", "param"),
    [
        ("/v1/chat/completions", b'{"model": "m", "max_tokens": 1' + b"0" * 5000 + b"}", None),
        (
            "/v1/chat/completions",
            b'{"model": "m", "messages": [{"role": "user", "content": "a\\ud800"}]}',
            "messages[0].content",
        ),
        (
            "/v1/verify",
            b'{"answer": "x [1]", "sources": [{"id": "1", "text": "\\udfff"}]}',
            "sources[0].text",
        ),
        ("/v1/retrieve", b'{"query": "dose \\ud83d"}', "query"),
    ],
)
def test_huge_integers_and_lone_surrogates_are_a_400_naming_the_field(
    shared_gateway, path, raw, param
) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    headers = {**bearer(CLIENT_KEY), "content-type": "application/json"}
    response = httpx.post(f"{url}{path}", content=raw, headers=headers, timeout=30)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == param


@pytest.mark.parametrize("path", ["/audit", "/clinician", "/audit/req_x/record.json"])
def test_a_non_ascii_cookie_is_refused_not_a_500(shared_gateway, path) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    cookie = b"gateway_staff=v1.clinician.9999999999.abc.\xc3\xa9sig"
    with httpx.Client() as client:
        response = client.get(f"{url}{path}", headers=[(b"cookie", cookie)])
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_clinician_credential"


def test_a_huge_audit_offset_is_a_400_page(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    response = httpx.get(f"{url}/audit", params={"offset": "9" * 20}, headers=bearer(STAFF_KEY))
    assert response.status_code == 400
    assert "offset" in response.text


# --- no unverified text, no unsafe link ----------------------------------------------------------


def test_the_client_trust_object_carries_no_removed_text_but_the_audit_does(
    module_services, upstream
) -> None:  # type: ignore[no-untyped-def]
    scripted, base_url = upstream
    scripted.reset()
    fabricated = "Paracetamol also cures migraines within ten minutes."
    scripted.default = Reply(
        content=contract_answer(
            f"{DOSE[:-1]} [1]. {fabricated[:-1]} [1].",
            [(DOSE, [1], DOSE), (fabricated, [1], "cures migraines within ten minutes")],
        )
    )
    services = module_services(upstream_base_url=base_url, upstream_retries=0)
    with running_gateway(services) as url:
        for stream in (False, True):
            response = httpx.post(
                f"{url}/v1/chat/completions",
                json={"model": "m", "stream": stream, "messages": [{"role": "user", "content": QUESTION}]},
                timeout=60,
            )
            assert response.status_code == 200
            assert "migraines" not in response.text  # not in the answer, the trust object or anywhere
            if not stream:
                removed = [c for c in response.json()["trust"]["claims"] if c["outcome"] == "removed"]
                assert removed
                assert all(c["text"] is None and c["original_text"] is None for c in removed)
    scripted.reset()
    rows = services.audit.list(AuditFilter())
    assert len(rows) == 2
    assert all("migraines" in json.dumps(services.audit.get(r.id)) for r in rows)  # the audit keeps it


def test_only_http_urls_become_links_on_the_clinician_page(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, services = shared_gateway
    assert chat(url).status_code == 200
    row = services.audit.list(AuditFilter(limit=1))[0]
    record = services.audit.get(row.id)
    assert record["passages"], record
    for passage in record["passages"]:
        passage["url"] = "javascript:alert(document.cookie)"
    fields = ("id", "created_at", "outcome", "scope", "reason", "claims", "rewritten", "removed")
    columns = {name: getattr(row, name) for name in (*fields, "question", "answer")}
    services.audit.write_sync({**columns, "refused": int(row.refused)}, record)
    for page in (f"/clinician/requests/{row.id}", f"/audit/{row.id}"):
        response = httpx.get(f"{url}{page}", headers=bearer(STAFF_KEY))
        assert response.status_code == 200
        assert 'href="javascript:' not in response.text


def test_the_patient_page_script_links_only_http_urls() -> None:
    """chat.js's guard, run in node: javascript:, data: and relative URLs are not links."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    import subprocess
    from pathlib import Path

    script = (Path(__file__).resolve().parents[2] / "templates" / "static" / "chat.js").read_text()
    start = script.index("function isHttpUrl")
    end = script.index("}", script.index("return", start)) + 1
    program = (
        script[start:end]
        + """
const cases = ["https://nhs.uk/a", "HTTP://x.org", "javascript:alert(1)", " javascript:x", "data:text/html,x",
               "/relative", "vbscript:x", null];
console.log(JSON.stringify(cases.map(isHttpUrl)));
"""
    )
    out = subprocess.run([node, "-e", program], capture_output=True, text=True, check=True, timeout=30)
    assert json.loads(out.stdout) == [True, True, False, False, False, False, False, False]


# --- sessions and keys ---------------------------------------------------------------------------


def test_logout_revokes_the_session_server_side(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    login = httpx.post(f"{url}/clinician/login", data={"key": STAFF_KEY, "next": "/clinician"})
    assert login.status_code == 303
    token = login.cookies["gateway_staff"]
    cookie = {"gateway_staff": token}
    assert httpx.get(f"{url}/clinician", cookies=cookie).status_code == 200
    assert httpx.post(f"{url}/clinician/logout", cookies=cookie).status_code == 303
    after = httpx.get(f"{url}/clinician", cookies=cookie)  # a copy of the cookie, kept after logout
    assert after.status_code == 401
    assert after.json()["error"]["code"] == "invalid_clinician_credential"


def test_failed_authentication_is_throttled_per_address(module_services) -> None:  # type: ignore[no-untyped-def]
    services = module_services(
        api_keys=(Secret(CLIENT_KEY),),
        clinician_keys=(Secret(STAFF_KEY),),
        auth_failures_per_minute=1.0,
        auth_failures_burst=3,
    )
    with running_gateway(services) as url:
        wrong = [httpx.get(f"{url}/v1/models", headers=bearer(f"guess-{i}")) for i in range(4)]
        right_key_now = httpx.get(f"{url}/v1/models", headers=bearer(CLIENT_KEY))
        login = httpx.post(f"{url}/clinician/login", data={"key": STAFF_KEY, "next": "/clinician"})
        metrics = services.metrics.render().decode()  # /metrics is throttled for this address too
    assert [r.status_code for r in wrong] == [401, 401, 401, 429]
    assert wrong[3].json()["error"]["code"] == "too_many_failed_authentications"
    assert int(wrong[3].headers["Retry-After"]) >= 1
    # blocked: even the right key (or the login form) is refused until the bucket refills
    assert right_key_now.status_code == 429
    assert login.status_code == 429
    throttled = next(
        float(line.split()[-1])
        for line in metrics.splitlines()
        if line.startswith("gateway_auth_throttled_total ")
    )
    assert throttled >= 3


# --- store faults visible ------------------------------------------------------------------------


def test_a_deleted_knowledge_store_makes_readyz_not_ready(module_services, embedder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from gateway.knowledge.loaders import load_manifest
    from gateway.settings import Settings
    from tests.conftest import FIXTURE_KB

    store_settings = Settings(data_dir=tmp_path / "own-index")
    store = open_store(store_settings, embedder)
    store.upsert_documents(load_manifest(FIXTURE_KB))
    services = with_components(module_services(), store=store)
    with running_gateway(services) as url:
        assert httpx.get(f"{url}/readyz").status_code == 200
        shutil.rmtree(store_settings.resolved_chroma_path)
        ready = httpx.get(f"{url}/readyz")
    assert ready.status_code == 503
    checks = ready.json()["checks"]
    assert checks["knowledge_store"]["ok"] is False
    assert "missing" in checks["knowledge_store"]["detail"]
    assert checks["audit_store"]["ok"] is True


def test_a_missing_store_after_restart_refuses_with_store_error(module_services, embedder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from gateway.bootstrap import build_services
    from gateway.settings import Settings

    settings = Settings(
        data_dir=tmp_path / "fresh", build_index_if_missing=False, auth_failures_per_minute=0.0
    )
    services = build_services(settings, embedder=embedder)  # the store directory is new and empty
    try:
        with running_gateway(services) as url:
            reply = httpx.post(
                f"{url}/v1/chat/completions",
                json={"model": "m", "messages": [{"role": "user", "content": QUESTION}]},
                timeout=60,
            ).json()
            ready = httpx.get(f"{url}/readyz")
    finally:
        services.audit.close()
    assert reply["trust"]["summary"]["reason"] == "store_error"
    assert ready.status_code == 503
