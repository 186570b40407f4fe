"""Triage through the chat API over real HTTP: emergencies in patients' words, conversation context,
the deciding layer in the audit record, the clinician view and the metrics."""

from __future__ import annotations

import httpx

from gateway.audit import AuditFilter
from gateway.services import Services
from gateway.settings import Secret
from gateway.triage.triager import LayeredTriager
from tests.support.components import with_components

CLINICIAN_KEY = "clin-key-for-triage-tests"


GATEWAY_SETTINGS = {"upstream_timeout": 5.0, "clinician_keys": (Secret(CLINICIAN_KEY),)}


def chat(url: str, *turns: str) -> dict:  # type: ignore[type-arg]
    messages = []
    for turn in turns:
        if messages:
            messages.append({"role": "assistant", "content": "An earlier answer."})
        messages.append({"role": "user", "content": turn})
    response = httpx.post(f"{url}/v1/chat/completions", json={"model": "m", "messages": messages}, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def triage_count(services, scope: str, layer: str) -> float:  # type: ignore[no-untyped-def]
    value = services.metrics.registry.get_sample_value(
        "gateway_triage_decisions_total", {"scope": scope, "layer": layer}
    )
    return float(value or 0.0)


def test_an_emergency_in_patients_words_gets_the_safety_message_and_is_audited(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = gateway
    body = chat(url, "my 2 year old swallowed a battery")
    text = body["choices"][0]["message"]["content"]
    label = services.policy.triage.categories["swallowed_object"].label
    assert label in text
    assert scripted.requests == []  # an emergency never reaches the model
    assert body["trust"]["summary"]["reason"] == "emergency"

    assert '"battery"' in text  # the safety message names the signs it found (#31)

    record = services.audit.get(body["trust"]["request_id"])
    assert record["triage"]["scope"] == "emergency"
    assert record["triage"]["layer"] in ("signs", "exemplar", "classifier")
    assert record["triage"]["rule"] == "swallowed_object"
    evidence = {(e["kind"], e["text"].lower()) for e in record["triage"]["evidence"]}
    assert ("foreign_object", "battery") in evidence
    assert ("swallowed", "swallowed") in evidence
    assert triage_count(services, "emergency", record["triage"]["layer"]) == 1

    page = httpx.get(
        f"{url}/clinician/requests/{body['trust']['request_id']}",
        headers={"authorization": f"Bearer {CLINICIAN_KEY}", "accept": "text/html"},
    )
    assert page.status_code == 200
    assert f"Triage: {record['triage']['layer']} ({label})" in page.text
    assert "battery" in page.text.split("Triage:", 1)[1].split("</li>", 2)[1]  # the evidence line


def test_an_emergency_described_not_named_names_its_signs(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = gateway
    body = chat(url, "my breathing has become really hard, even sitting still on the sofa")
    text = body["choices"][0]["message"]["content"]
    assert body["trust"]["summary"]["reason"] == "emergency"
    assert scripted.requests == []
    assert '"sitting still"' in text
    assert services.policy.context.emergency_number in text


def test_a_medication_question_is_not_treated_as_an_emergency(gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, services = gateway
    body = chat(url, "what does a 5mg amlodipine tablet look like, and how long does it take to work?")
    assert body["trust"]["summary"]["reason"] not in ("emergency", "non_clinical")
    record = services.audit.get(body["trust"]["request_id"])
    assert (record["triage"]["scope"], record["triage"]["evidence"]) == ("in_scope", [])
    assert triage_count(services, "emergency", record["triage"]["layer"]) == 0


def test_an_emergency_in_an_earlier_turn_is_not_forgotten(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = gateway
    body = chat(url, "My dad's face is drooping and his speech is slurred", "can he just sleep it off?")
    assert body["trust"]["summary"]["reason"] == "emergency"
    assert scripted.requests == []
    record = services.audit.get(body["trust"]["request_id"])
    assert (record["triage"]["layer"], record["triage"]["rule"]) == ("context", "stroke_signs")
    assert triage_count(services, "emergency", "context") == 1


def test_a_non_health_request_is_declined_by_the_classifier(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = gateway
    body = chat(url, "what's a good film to watch tonight")
    assert body["trust"]["summary"]["reason"] == "non_clinical"
    assert scripted.requests == []
    assert triage_count(services, "non_clinical", "classifier") == 1


class FailingEncoder:
    """The embedder with ``encode`` broken: what triage meets when the model fails at run time."""

    def __init__(self, real):  # type: ignore[no-untyped-def]
        self._real = real

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._real, name)

    def encode(self, texts):  # type: ignore[no-untyped-def]
        raise RuntimeError("the embedding model failed")


def failing_triage(services: Services) -> Services:
    triager = services.triager
    assert isinstance(triager, LayeredTriager)
    failing = LayeredTriager(triager.context, triager.model, FailingEncoder(triager.encoder))
    return with_components(services, triager=failing)


def test_a_failing_triage_is_refused_pointing_to_urgent_help_counted_and_audited(start_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = start_gateway(prepare=failing_triage)
    body = chat(url, "my chest feels tight and heavy since this morning")
    summary = body["trust"]["summary"]
    assert (summary["refused"], summary["reason"]) == (True, "triage_error")
    assert services.policy.context.emergency_number in body["choices"][0]["message"]["content"]
    assert scripted.requests == []  # the model is never asked when an emergency cannot be ruled out
    stage_errors = services.metrics.registry.get_sample_value(
        "gateway_stage_errors_total", {"stage": "triage"}
    )
    assert stage_errors == 1.0
    (row,) = services.audit.list(AuditFilter())
    assert (row.id, row.reason, row.refused) == (body["id"].removeprefix("chatcmpl-"), "triage_error", True)
