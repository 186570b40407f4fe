"""One verifier, named the same everywhere (issue #35 item 4): a chat answer's ``trust`` object and its
audit record name the operating point of the verifier that checked its claims, the string ``/v1/verify``
gives for the same gateway (``verification.verifier.operating_point``). Real gateways on loopback, the
openai SDK, the scripted upstream, the gateway's own verification cascade."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from markupsafe import escape

from gateway.audit.record import AuditRecord, TrustRecord, load_record
from gateway.settings import Secret
from gateway.testing import Reply
from gateway.verification.verifier import operating_point
from tests.support.chat_answers import PARACETAMOL_DOSE, supported_answer
from tests.support.cleanup_stack import policy_copy
from tests.support.page_keys import CLINICIAN_KEY, STAFF
from tests.support.stack import openai_client

GATEWAY_SETTINGS = {"upstream_timeout": 5.0, "clinician_keys": (Secret(CLINICIAN_KEY),)}
QUESTION = "How much paracetamol can an adult take?"


def ask(url: str, *, stream: bool = False) -> dict[str, Any]:
    """The ``trust`` object of one chat answer, through the openai SDK."""
    client = openai_client(url)
    messages = [{"role": "user", "content": QUESTION}]
    if not stream:
        completion = client.chat.completions.create(model="clinic-bot", messages=messages)
        return completion.model_extra["trust"]  # type: ignore[no-any-return]
    trust = None
    for chunk in client.chat.completions.create(model="clinic-bot", messages=messages, stream=True):
        if chunk.choices and chunk.choices[0].finish_reason:
            trust = chunk.model_extra.get("trust")
    assert trust is not None
    return trust  # type: ignore[no-any-return]


def verified_by_verify_api(url: str) -> str:
    """The operating point ``/v1/verify`` names for an answer checked by the same gateway."""
    body = {"answer": f"{PARACETAMOL_DOSE[:-1]} [1].", "sources": [{"id": "1", "text": PARACETAMOL_DOSE}]}
    response = httpx.post(f"{url}/v1/verify", json=body, timeout=60)
    assert response.status_code == 200, response.text
    return response.json()["operating_point"]  # type: ignore[no-any-return]


def recorded(services: Any, request_id: str) -> TrustRecord:
    """The stored record's trust part, decoded as the pages decode it."""
    text = services.audit.get_text(request_id)
    assert text is not None
    record = load_record(request_id, text)
    assert isinstance(record, AuditRecord), record
    assert isinstance(record.trust, TrustRecord)
    return record.trust


def test_a_chat_answer_and_its_record_name_the_operating_point_verify_gives(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = shared_gateway
    point = operating_point(services.checker.verifier)  # the chat path's verifier
    assert point.startswith("cascade[local] support: ")  # the gateway's own cascade, no judge configured
    assert point == operating_point(services.verifier) == verified_by_verify_api(url)
    scripted.queue(supported_answer())
    trust = ask(url)
    assert trust["summary"]["supported"] == 2  # its claims were checked
    assert trust["operating_point"] == point
    request_id = trust["request_id"]
    assert recorded(services, request_id).operating_point == point
    as_json = httpx.get(f"{url}/audit/{request_id}/record.json", headers=STAFF)
    assert as_json.status_code == 200
    assert as_json.json()["trust"]["operating_point"] == point
    for page in (f"/audit/{request_id}", f"/clinician/requests/{request_id}"):
        shown = httpx.get(f"{url}{page}", headers=STAFF)
        assert shown.status_code == 200
        assert str(escape(point)) in shown.text, page


def test_a_streamed_answer_names_it_on_its_last_chunk(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = shared_gateway
    scripted.queue(supported_answer())
    trust = ask(url, stream=True)
    point = verified_by_verify_api(url)
    assert trust["summary"]["supported"] == 2
    assert trust["operating_point"] == point
    assert recorded(services, trust["request_id"]).operating_point == point


def test_a_refusal_built_without_badges_names_it_too(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    """An upstream failure is refused with an unbadged report: it names the same verifier."""
    scripted, url, services = shared_gateway
    scripted.queue(Reply(status=500, raw_body='{"error": {"message": "down"}}'))
    trust = ask(url)
    assert (trust["summary"]["refused"], trust["summary"]["reason"], trust["claims"]) == (
        True,
        "upstream_error",
        [],
    )
    point = verified_by_verify_api(url)
    assert trust["operating_point"] == point
    assert recorded(services, trust["request_id"]).operating_point == point


def test_another_policy_s_thresholds_are_named_in_chat_and_in_verify_alike(  # type: ignore[no-untyped-def]
    start_gateway, shared_gateway, tmp_path: Path
) -> None:
    """The operating point follows the verifier the gateway was built with, not a constant."""
    _, default_url, _ = shared_gateway
    default = verified_by_verify_api(default_url)
    policy_dir = policy_copy(
        tmp_path, verification={"check_support_probability": 0.9, "contradiction_similarity": 0.85}
    )
    scripted, url, services = start_gateway(policy_dir=policy_dir)
    point = verified_by_verify_api(url)
    assert point != default
    assert "check_support_probability 0.9 " in point
    assert "similarity >= 0.85" in point
    scripted.queue(supported_answer())
    trust = ask(url)
    assert trust["operating_point"] == point == operating_point(services.checker.verifier)
    assert recorded(services, trust["request_id"]).operating_point == point
