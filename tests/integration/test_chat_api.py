"""The gateway end to end: the official openai SDK -> gateway -> scripted upstream, over real HTTP."""

from __future__ import annotations

import json

import httpx
import openai
import pytest

from gateway.testing import Reply, contract_answer
from gateway.web.disclosure import Disclosure
from tests.support.chat_answers import PARACETAMOL_DOSE, PARACETAMOL_MAX, supported_answer
from tests.support.stack import openai_client, running_gateway

GATEWAY_SETTINGS = {"upstream_timeout": 5.0}


def test_non_streaming_answer_parses_with_the_sdk_and_carries_trust(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _services = shared_gateway
    scripted.queue(supported_answer())
    client = openai_client(url)
    completion = client.chat.completions.create(
        model="clinic-bot", messages=[{"role": "user", "content": "How much paracetamol can an adult take?"}]
    )
    assert completion.object == "chat.completion"
    text = completion.choices[0].message.content
    assert text == f"{PARACETAMOL_DOSE[:-1]} [1]. {PARACETAMOL_MAX[:-1]} [1]." + Disclosure().suffix
    trust = completion.model_extra["trust"]
    assert trust["summary"]["claims"] == 2
    assert trust["summary"]["supported"] == 2
    assert trust["summary"]["refused"] is False
    for claim in trust["claims"]:
        span = claim["span"]
        assert text[span["start"] : span["end"]].startswith(claim["text"][:20])
        assert claim["verdict"] == "supported"
        assert claim["outcome"] == "verified"
        cited = trust["sources"][int(claim["source_ids"][0]) - 1]
        assert cited["document_id"] == "paracetamol"
    # the model was given the numbered passages and the JSON Lines contract, and asked to stream it
    sent = scripted.requests[-1]
    assert "Passages:" in sent["messages"][1]["content"]
    assert sent["stream"] is True
    assert "response_format" not in sent  # docs/contract.md: the draft is JSON Lines, not one object


def test_streaming_answer_is_consumed_by_the_sdk_iterator(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = shared_gateway
    scripted.queue(supported_answer())
    client = openai_client(url)
    stream = client.chat.completions.create(
        model="clinic-bot",
        messages=[{"role": "user", "content": "How much paracetamol can an adult take?"}],
        stream=True,
    )
    pieces, finish, trust = [], None, None
    for chunk in stream:
        delta = chunk.choices[0].delta
        if delta.content:
            pieces.append(delta.content)
        if chunk.choices[0].finish_reason:
            finish = chunk.choices[0].finish_reason
            trust = chunk.model_extra.get("trust")
    expected = f"{PARACETAMOL_DOSE[:-1]} [1]. {PARACETAMOL_MAX[:-1]} [1]."
    assert "".join(pieces) == expected + Disclosure().suffix  # the AI disclosure ends every answer
    assert finish == "stop"
    assert trust is not None
    assert trust["summary"]["supported"] == 2


def test_raw_stream_ends_with_done(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = shared_gateway
    scripted.queue(supported_answer())
    with httpx.stream(
        "POST",
        f"{url}/v1/chat/completions",
        timeout=30,
        json={
            "model": "m",
            "stream": True,
            "messages": [{"role": "user", "content": "paracetamol dose for adults?"}],
        },
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-request-id"].startswith("req_")
        lines = [line for line in response.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"


def test_fabricated_quote_is_removed_and_the_rest_kept(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = shared_gateway
    fabricated = "Paracetamol cures migraines within ten minutes."
    scripted.queue(
        contract_answer(
            f"{PARACETAMOL_DOSE[:-1]} [1]. {PARACETAMOL_MAX[:-1]} [1]. {fabricated[:-1]} [1].",
            [
                (PARACETAMOL_DOSE, [1], PARACETAMOL_DOSE),
                (PARACETAMOL_MAX, [1], PARACETAMOL_MAX),
                (fabricated, [1], "paracetamol cures migraines within ten minutes"),
            ],
        )
    )
    completion = openai_client(url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "How much paracetamol can an adult take?"}]
    )
    text = completion.choices[0].message.content
    assert "migraines" not in text
    assert text == f"{PARACETAMOL_DOSE[:-1]} [1]. {PARACETAMOL_MAX[:-1]} [1]." + Disclosure().suffix
    trust = completion.model_extra["trust"]
    assert trust["summary"]["removed"] == 1
    removed = [c for c in trust["claims"] if c["outcome"] == "removed"]
    assert removed[0]["original_text"] is None  # unverified text never rides on the trust object
    assert removed[0]["text"] is None
    assert "migraines" not in json.dumps(trust)
    assert removed[0]["span"] is None


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply(status=500), "upstream_error"),
        (Reply(status=503), "upstream_error"),
        (Reply(status=429), "upstream_error"),
        (Reply(raw_body="this is not json"), "malformed_output"),
        (Reply(content='{"answer": 3}'), "malformed_output"),
        (Reply(content=""), "malformed_output"),
        (Reply(delay=3.0, content="late"), "upstream_error"),
    ],
)
def test_upstream_failures_become_safe_refusals(start_gateway, reply, reason) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = start_gateway(upstream_timeout=1.0)
    scripted.queue(reply)
    completion = openai_client(url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "How much paracetamol can an adult take?"}]
    )
    metrics = httpx.get(f"{url}/metrics").text
    trust = completion.model_extra["trust"]
    assert trust["summary"]["refused"] is True
    assert trust["summary"]["reason"] == reason
    assert "could not produce a checked answer" in completion.choices[0].message.content
    assert "late" not in completion.choices[0].message.content
    assert 'gateway_requests_total{outcome="error"} 1.0' in metrics


def test_connection_refused_is_a_safe_refusal(make_services) -> None:  # type: ignore[no-untyped-def]
    from gateway.testing import refused_port

    with refused_port() as port:
        services = make_services(upstream_base_url=f"http://127.0.0.1:{port}/v1", upstream_retries=0)
        with running_gateway(services) as url:
            completion = openai_client(url).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "How much paracetamol can an adult take?"}]
            )
            metrics = httpx.get(f"{url}/metrics").text
    assert completion.model_extra["trust"]["summary"]["reason"] == "upstream_error"
    assert 'gateway_upstream_errors_total{type="connection"} 1.0' in metrics


def test_models_health_ready_and_metrics(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, services = shared_gateway
    models = openai_client(url).models.list()
    assert [m.id for m in models.data] == [services.settings.model_name]
    assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{url}/readyz")
    assert ready.status_code == 200
    assert ready.json()["passages"] > 0
    metrics = httpx.get(f"{url}/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    assert "gateway_claims_total" in metrics.text


BAD_BODIES = [
    (b"{not json", "invalid_json", None),
    (b"[]", "invalid_json", None),
    (b'{"model": "m"}', "missing_required_parameter", "messages"),
    (b'{"model": "m", "messages": []}', "empty_array", "messages"),
    (b'{"model": "m", "messages": "hi"}', "invalid_type", "messages"),
    (
        b'{"model": "m", "messages": [{"role": "wizard", "content": "hi"}]}',
        "invalid_value",
        "messages[0].role",
    ),
    (b'{"model": "m", "messages": [{"role": "user", "content": 5}]}', "invalid_type", "messages[0].content"),
    (b'{"messages": [{"role": "user", "content": "hi"}]}', "missing_required_parameter", "model"),
    (
        b'{"model": "m", "temperature": "hot", "messages": [{"role": "user", "content": "hi"}]}',
        "invalid_type",
        "temperature",
    ),
    (
        b'{"model": "m", "max_tokens": 0, "messages": [{"role": "user", "content": "hi"}]}',
        "invalid_value",
        "max_tokens",
    ),
    (
        b'{"model": "m", "stream": "yes", "messages": [{"role": "user", "content": "hi"}]}',
        "invalid_type",
        "stream",
    ),
    (
        b'{"model": "m", "metadata": {"a": 1}, "messages": [{"role": "user", "content": "hi"}]}',
        "invalid_type",
        "metadata.a",
    ),
    (b'{"model": "m", "messages": [{"role": "system", "content": "be nice"}]}', "invalid_value", "messages"),
]


@pytest.mark.parametrize(("body", "code", "param"), BAD_BODIES)
def test_bad_requests_get_openai_errors_naming_the_field(shared_gateway, body, code, param) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    response = httpx.post(
        f"{url}/v1/chat/completions", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == code
    assert error["param"] == param
    assert error["type"] == "invalid_request_error"
    assert error["message"]


def test_oversized_body_is_rejected_with_413(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, services = shared_gateway
    big = "x" * (services.settings.max_body_bytes + 10)
    response = httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": big}]},
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "request_too_large"


def test_sdk_raises_its_own_error_type_for_gateway_4xx(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    with pytest.raises(openai.BadRequestError) as info:
        openai_client(url).chat.completions.create(model="m", messages=[])
    assert info.value.body["param"] == "messages"  # type: ignore[index]


def test_server_timing_names_every_stage_and_its_total_covers_them(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    """``total`` is the whole time the gateway held the request: badges, the audit commit and JSON too."""
    scripted, url, services = shared_gateway
    scripted.queue(supported_answer())
    response = httpx.post(
        f"{url}/v1/chat/completions",
        json={
            "model": "m",
            "messages": [{"role": "user", "content": "How much paracetamol can an adult take?"}],
        },
        headers={"Authorization": "Bearer test-key"},
        timeout=30,
    )
    assert response.status_code == 200
    entries = {
        name.strip(): float(dur.removeprefix("dur="))
        for name, dur in (part.split(";") for part in response.headers["server-timing"].split(","))
    }
    stages = ["parse", "triage", "retrieve", "upstream", "verify", "badge", "record", "serialise"]
    assert list(entries) == [*stages, "total"]
    assert all(entries[s] >= 0 for s in stages)
    assert entries["upstream"] > 0
    assert entries["record"] > 0  # the audit write happened before the reply and is counted
    assert entries["total"] + 0.1 * len(stages) >= sum(entries[s] for s in stages)
    assert services.audit.get(response.headers["x-request-id"]) is not None
