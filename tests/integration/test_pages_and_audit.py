"""The pages and the audit trail over real HTTP: patient page, staff credentials, clinician view, audit."""

from __future__ import annotations

import datetime as dt
import re

import httpx
import pytest

from gateway.settings import Secret
from gateway.web.disclosure import Disclosure
from tests.support.page_keys import (
    CLIENT,
    CLIENT_KEY,
    CLINICIAN_KEY,
    DOSE,
    FABRICATED,
    MAXIMUM,
    PAGE_KEY,
    STAFF,
    answer_with_removed_claim,
    ask,
)
from tests.support.stack import openai_client, running_gateway

HTML = {"accept": "text/html,application/xhtml+xml"}


GATEWAY_SETTINGS = {
    "upstream_timeout": 5.0,
    "clinician_keys": (Secret(CLINICIAN_KEY), Secret("second-clinician-key")),
    "page_api_key": Secret(PAGE_KEY),
}


QUESTION = "How much paracetamol can an adult take?"
"""Retrieval puts the paracetamol leaflet first for it: the scripted answers cite passage [1]."""


# --- patient page -------------------------------------------------------------------------------


def test_patient_page_is_served_with_its_key_script_and_strict_headers(gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = gateway
    page = httpx.get(f"{url}/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store"
    assert 'data-api-key="page-key-123"' in page.text
    assert '<label for="question">' in page.text
    assert 'aria-live="polite"' in page.text
    assert '<script src="/static/chat.js"' in page.text
    script = httpx.get(f"{url}/static/chat.js")
    assert script.status_code == 200
    assert "getReader" in script.text
    assert httpx.get(f"{url}/static/app.css").status_code == 200


# --- staff credentials --------------------------------------------------------------------------


def test_browser_without_credential_is_sent_to_login(gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = gateway
    response = httpx.get(f"{url}/audit?refused=yes", headers=HTML)
    assert response.status_code == 303
    assert response.headers["location"] == "/clinician/login?next=/audit%3Frefused%3Dyes"
    login = httpx.get(f"{url}/clinician/login?next=/audit")
    assert login.status_code == 200
    assert 'type="password"' in login.text


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({}, 401, "missing_clinician_credential"),
        ({"authorization": "Bearer wrong-key"}, 401, "invalid_clinician_credential"),
        ({"authorization": f"Basic {CLINICIAN_KEY}"}, 401, "invalid_clinician_credential"),
        ({"cookie": "gateway_staff=v1.clinician.99999999999.x.forged"}, 401, "invalid_clinician_credential"),
        ({"authorization": f"Bearer {CLIENT_KEY}"}, 403, "insufficient_role"),
    ],
)
def test_api_calls_without_a_staff_credential_get_openai_errors(
    upstream, make_services, headers, status, code
) -> None:  # type: ignore[no-untyped-def]
    services = make_services(
        clinician_keys=(Secret(CLINICIAN_KEY),), api_keys=(Secret(CLIENT_KEY),), upstream_base_url=upstream[1]
    )
    with running_gateway(services) as url:
        for path in ("/audit", "/clinician", "/audit/req_x/record.json"):
            response = httpx.get(f"{url}{path}", headers=headers)
            assert response.status_code == status, path
            error = response.json()["error"]
            assert error["code"] == code
            assert error["type"] == ("authentication_error" if status == 401 else "permission_error")
        ok = httpx.get(f"{url}/audit", headers=STAFF)
        assert ok.status_code == 200


def test_staff_pages_are_closed_when_no_clinician_key_is_configured(make_services) -> None:  # type: ignore[no-untyped-def]
    services = make_services()
    with running_gateway(services) as url:
        response = httpx.get(f"{url}/audit", headers={"authorization": "Bearer anything"})
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "clinician_access_not_configured"
        login = httpx.get(f"{url}/clinician/login")
        assert login.status_code == 403
        assert "GATEWAY_CLINICIAN_KEYS" in login.text
        attempt = httpx.post(f"{url}/clinician/login", data={"key": "", "next": "/audit"})
        assert attempt.status_code == 403
        assert "set-cookie" not in attempt.headers


def test_login_sets_a_signed_strict_httponly_cookie_and_logout_clears_it(gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = gateway
    wrong = httpx.post(f"{url}/clinician/login", data={"key": "nope", "next": "/audit"})
    assert wrong.status_code == 401
    assert "not recognised" in wrong.text
    assert "set-cookie" not in wrong.headers

    login = httpx.post(f"{url}/clinician/login", data={"key": CLINICIAN_KEY, "next": "/audit?emergency=yes"})
    assert login.status_code == 303
    assert login.headers["location"] == "/audit?emergency=yes"
    cookie_header = login.headers["set-cookie"]
    assert cookie_header.startswith("gateway_staff=v1.clinician.")
    lowered = cookie_header.lower()
    assert "httponly" in lowered
    assert "samesite=strict" in lowered
    assert "path=/" in lowered
    assert CLINICIAN_KEY not in cookie_header
    token = login.cookies["gateway_staff"]

    with httpx.Client(base_url=url, headers=HTML) as browser:
        browser.cookies.set("gateway_staff", token)
        assert browser.get("/clinician").status_code == 200
        assert browser.get("/audit").status_code == 200
        tampered = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
        browser.cookies.set("gateway_staff", tampered)
        assert browser.get("/audit").status_code == 303
        forged_role = token.replace("v1.clinician.", "v1.admin.")
        browser.cookies.set("gateway_staff", forged_role)
        assert browser.get("/audit").status_code == 303

    logout = httpx.post(f"{url}/clinician/logout", cookies={"gateway_staff": token})
    assert logout.status_code == 303
    assert "max-age=0" in logout.headers["set-cookie"].lower()


@pytest.mark.parametrize("target", ["//evil.example/steal", "https://evil.example/", "\\\\evil", "audit"])
def test_login_never_redirects_off_site(gateway, target) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = gateway
    login = httpx.post(f"{url}/clinician/login", data={"key": CLINICIAN_KEY, "next": target})
    assert login.status_code == 303
    assert login.headers["location"] == "/clinician"


def test_expired_session_is_refused(gateway) -> None:  # type: ignore[no-untyped-def]
    from gateway.web.clinician_auth import Principal, StaffAuth

    _, url, services = gateway
    auth = StaffAuth.from_settings(services.settings)
    past = dt.datetime.now(dt.UTC) - dt.timedelta(days=2)
    old = auth.issue_session(Principal("clinician", "clinician#1"), past)
    response = httpx.get(f"{url}/audit", cookies={"gateway_staff": old})
    assert response.status_code == 401
    fresh = auth.issue_session(Principal("clinician", "clinician#2"), dt.datetime.now(dt.UTC))
    assert httpx.get(f"{url}/audit", cookies={"gateway_staff": fresh}).status_code == 200


# --- audit trail ------------------------------------------------------------------------------


def test_audit_record_is_committed_before_the_response_arrives(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = gateway
    scripted.queue(answer_with_removed_claim())
    completion = openai_client(url, api_key=PAGE_KEY).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "How much paracetamol can an adult take?"}]
    )
    request_id = completion.model_extra["trust"]["request_id"]
    # read through a separate connection: the row must be committed, not just visible to the writer
    from gateway.audit import AuditLog

    reader = AuditLog(services.settings.resolved_audit_path)
    try:
        record = reader.get(request_id)
    finally:
        reader.close()
    assert record is not None
    assert record["question"] == "How much paracetamol can an adult take?"
    assert completion.choices[0].message.content == record["answer"] + Disclosure().suffix
    assert next(p["document_id"] for p in record["passages"]) == "paracetamol"
    assert FABRICATED[:-1] in record["draft"]["raw"] or FABRICATED in record["draft"]["answer"]
    assert len(record["verdicts"]) == 3
    assert [c["outcome"] for c in record["cleanup"]] == ["verified", "verified", "removed"]
    assert record["trust"]["summary"]["removed"] == 1


def test_streamed_request_is_audited_by_the_time_the_stream_ends(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = gateway
    scripted.queue(answer_with_removed_claim())
    with httpx.stream(
        "POST",
        f"{url}/v1/chat/completions",
        json={"model": "m", "stream": True, "messages": [{"role": "user", "content": QUESTION}]},
        headers=CLIENT,
        timeout=30,
    ) as response:
        request_id = response.headers["x-request-id"]
        lines = [line for line in response.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    record = services.audit.get(request_id)
    assert record is not None
    assert [c["outcome"] for c in record["cleanup"]] == ["verified", "verified", "removed"]


@pytest.mark.parametrize("keep", [False, True])
def test_patient_identifiers_are_stored_only_when_turned_on(upstream, make_services, keep) -> None:  # type: ignore[no-untyped-def]
    services = make_services(
        store_patient_identifiers=keep,
        clinician_keys=(Secret(CLINICIAN_KEY),),
        page_api_key=Secret(PAGE_KEY),
        upstream_base_url=upstream[1],
    )
    with running_gateway(services) as url:
        body = ask(
            url, "Hello there, how is your day?", user="patient-4711", metadata={"nhs_number": "9434765919"}
        )
        request_id = body["trust"]["request_id"]
        record = services.audit.get(request_id)
        detail = httpx.get(f"{url}/audit/{request_id}", headers=STAFF).text
        database = services.settings.resolved_audit_path
        wal = database.with_name(database.name + "-wal")
        raw = database.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    assert record is not None
    if keep:
        assert record["user"] == "patient-4711"
        assert record["metadata"] == {"nhs_number": "9434765919"}
        assert "patient-4711" in detail
        assert b"patient-4711" in raw  # so the absence check below is not vacuous
    else:
        assert record["user"] is None
        assert record["metadata"] is None
        assert "patient-4711" not in detail
        assert b"patient-4711" not in raw
        assert b"9434765919" not in raw


def _ids(page: str) -> list[str]:
    return re.findall(r'href="/audit/(req_[0-9a-f]+)"', page)


def test_audit_list_filters_by_outcome_flags_and_dates(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = gateway
    scripted.queue(answer_with_removed_claim())
    before = dt.datetime.now(dt.UTC).date()
    removed_id = ask(url, "How much paracetamol can an adult take?")["trust"]["request_id"]
    emergency_id = ask(url, "I have crushing chest pain and my left arm is numb")["trust"]["request_id"]
    chatter_id = ask(url, "What is the capital of France?")["trust"]["request_id"]
    after = dt.datetime.now(dt.UTC).date()

    def listed(query: str) -> list[str]:
        response = httpx.get(f"{url}/audit{query}", headers=STAFF)
        assert response.status_code == 200, response.text
        return _ids(response.text)

    assert set(listed("")) == {removed_id, emergency_id, chatter_id}
    assert listed("")[0] == chatter_id  # newest first
    assert set(listed("?refused=yes")) == {emergency_id, chatter_id}
    assert listed("?refused=no") == [removed_id]
    assert listed("?emergency=yes") == [emergency_id]
    assert set(listed("?emergency=no")) == {removed_id, chatter_id}
    assert listed("?removed=yes") == [removed_id]
    assert listed("?rewritten=yes") == []
    assert listed("?outcome=rewritten") == [removed_id]
    # Each request's UTC day as its record says (not the wall clock after the fact: the three may
    # straddle midnight); a day's filter lists exactly that day's requests.
    created = {
        request_id: dt.datetime.fromisoformat(services.audit.get(request_id)["created_at"])
        .astimezone(dt.UTC)
        .date()
        for request_id in (removed_id, emergency_id, chatter_id)
    }
    first, last = min(created.values()), max(created.values())
    assert before <= first <= last <= after  # dated when they were made, in UTC
    for day in set(created.values()):
        assert set(listed(f"?from={day}&to={day}")) == {i for i, d in created.items() if d == day}
    assert set(listed(f"?from={first}&to={last}")) == {removed_id, emergency_id, chatter_id}
    assert listed(f"?to={first - dt.timedelta(days=1)}") == []
    assert listed(f"?from={last + dt.timedelta(days=1)}") == []
    bad = httpx.get(f"{url}/audit?from=yesterday&refused=maybe", headers=STAFF)
    assert bad.status_code == 400
    assert "must be a date" in bad.text
    assert "must be yes or no" in bad.text


def test_pages_escape_patient_text(gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = gateway
    hostile = "<script>alert('x')</script> is paracetamol <b>safe</b>?"
    request_id = ask(url, hostile)["trust"]["request_id"]
    for path in ("/audit", f"/audit/{request_id}", f"/clinician/requests/{request_id}", "/clinician"):
        page = httpx.get(f"{url}{path}", headers=STAFF).text
        assert "<script>alert" not in page, path
        assert "&lt;script&gt;alert" in page, path


def test_audit_detail_shows_every_stage(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = gateway
    scripted.queue(answer_with_removed_claim())
    request_id = ask(url, "How much paracetamol can an adult take?")["trust"]["request_id"]
    page = httpx.get(f"{url}/audit/{request_id}", headers=STAFF)
    assert page.status_code == 200
    text = page.text
    assert "How much paracetamol can an adult take?" in text
    assert "Paracetamol for adults" in text  # a retrieved passage
    for section in ("triage", "draft", "statements", "verdicts", "cleanup"):
        assert f"<summary>{section}</summary>" in text
    assert f"<del>{FABRICATED}</del>" in text
    record = httpx.get(f"{url}/audit/{request_id}/record.json", headers=STAFF)
    assert record.status_code == 200
    assert record.json()["request_id"] == request_id
    missing = httpx.get(f"{url}/audit/req_doesnotexist", headers=STAFF)
    assert missing.status_code == 404


def test_clinician_view_marks_evidence_and_strikes_removed_claims(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = gateway
    scripted.queue(answer_with_removed_claim())
    request_id = ask(url, "How much paracetamol can an adult take?")["trust"]["request_id"]
    page = httpx.get(f"{url}/clinician/requests/{request_id}", headers=STAFF)
    assert page.status_code == 200
    text = page.text
    assert 'class="claim outcome-verified tier-clinical_reference" href="#claim-1"' in text
    assert f"<mark>{DOSE[:-1]}</mark>" in text
    assert f"<mark>{MAXIMUM[:-1]}</mark>" in text
    assert f'<del aria-label="Removed text">{FABRICATED}</del>' in text
    assert "Not sent to the patient" in text
    index = httpx.get(f"{url}/clinician", headers=STAFF).text
    assert f'href="/clinician/requests/{request_id}"' in index
