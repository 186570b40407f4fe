"""One JSON log line per request, over real HTTP: request id (also in the response header and the
audit record), outcome, counts and timings; no patient text unless the operator turns it on; no
secret ever."""

from __future__ import annotations

import io
import json
from typing import Any

import httpx
import structlog

from gateway.logs import MASK, drop_patient_text, mask_secrets
from gateway.settings import Secret
from gateway.testing import Reply, contract_answer
from tests.support.stack import running_gateway

DOSE = "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours."
QUESTION = "Zebedee asks: how much paracetamol can an adult take?"
CLIENT_KEY = "client-key-SECRET-0001"
UPSTREAM_KEY = "sk-upstream-SECRET-0002"
CLINICIAN_KEY = "clinician-SECRET-0003"
METRICS_TOKEN = "metrics-SECRET-0004"
SECRETS = (CLIENT_KEY, UPSTREAM_KEY, CLINICIAN_KEY, METRICS_TOKEN)
FIELDS = {
    "request_id", "outcome", "scope", "reason", "claims", "supported", "rewritten", "removed",
    "passages", "total_ms", "upstream_ms", "verification_ms", "added_ms", "retrieval_ms",
    "level", "timestamp",
}  # fmt: skip


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def ask(url: str, key: str = CLIENT_KEY) -> httpx.Response:
    return httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "clinic-bot", "messages": [{"role": "user", "content": QUESTION}]},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )


def build(make_services, base_url: str, **overrides: Any):  # type: ignore[no-untyped-def]
    return make_services(
        upstream_base_url=base_url,
        upstream_retries=0,
        upstream_timeout=5.0,
        upstream_api_key=Secret(UPSTREAM_KEY),
        api_keys=(Secret(CLIENT_KEY),),
        clinician_keys=(Secret(CLINICIAN_KEY),),
        metrics_token=Secret(METRICS_TOKEN),
        **overrides,
    )


def reply() -> str:
    return contract_answer(f"{DOSE[:-1]} [1].", [(DOSE, [1], DOSE)])


def test_one_json_line_per_request_without_patient_text(log_stream, upstream, make_services) -> None:  # type: ignore[no-untyped-def]
    scripted, base_url = upstream
    scripted.reset()
    scripted.default = Reply(status=500)
    services = build(make_services, base_url)
    with running_gateway(services) as url:
        scripted.queue(reply())
        response = ask(url)
        assert response.status_code == 200
        denied = ask(url, key="wrong-key-SECRET-0005")
        assert denied.status_code == 401
        metrics = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        assert metrics.status_code == 200
    request_id = response.headers["x-request-id"]
    assert request_id.startswith("req_")

    records = lines(log_stream)  # every line is JSON (json.loads would have raised)
    mine = [r for r in records if r.get("event") == "chat_request" and r.get("request_id") == request_id]
    assert len(mine) == 1
    line = mine[0]
    assert set(line) >= FIELDS
    assert line["outcome"] == "answered"
    assert line["claims"] == line["supported"] == 1
    assert line["total_ms"] >= line["upstream_ms"] >= 0
    assert "question" not in line
    assert "answer" not in line
    assert "_patient_text" not in line
    text = log_stream.getvalue()
    assert "Zebedee" not in text
    assert "sore knee" not in text
    for secret in (*SECRETS, "wrong-key-SECRET-0005"):
        assert secret not in text

    # the same id is the audit record's key and is stored inside it
    record = services.audit.get(request_id)
    assert record is not None
    assert record["request_id"] == request_id


def test_patient_text_is_logged_only_when_turned_on(log_stream, upstream, make_services) -> None:  # type: ignore[no-untyped-def]
    scripted, base_url = upstream
    scripted.reset()
    scripted.default = Reply(status=500)
    services = build(make_services, base_url, log_patient_text=True)
    with running_gateway(services) as url:
        scripted.queue(reply())
        response = ask(url)
    request_id = response.headers["x-request-id"]
    line = next(
        r for r in lines(log_stream) if r.get("request_id") == request_id and r["event"] == "chat_request"
    )
    assert line["question"] == QUESTION
    assert "paracetamol" in line["answer"]
    assert "_patient_text" not in line
    for secret in SECRETS:
        assert secret not in log_stream.getvalue()


def test_processors_mask_secrets_and_drop_unrequested_patient_text(log_stream) -> None:  # type: ignore[no-untyped-def]
    from gateway.settings import Settings

    settings = Settings(upstream_api_key=Secret(UPSTREAM_KEY), api_keys=(Secret(CLIENT_KEY),))
    log = structlog.get_logger("test")
    log.info(
        "configured",
        settings=settings,
        api_key=CLIENT_KEY,
        authorization=f"Bearer {CLIENT_KEY}",
        detail=f"upstream said: Authorization: Bearer {UPSTREAM_KEY}",
        question="my name is Zebedee",
        messages=[{"role": "user", "content": "Zebedee"}],
    )
    log.info("opted_in", question="visible on purpose", _patient_text=True)
    text = log_stream.getvalue()
    for secret in SECRETS:
        assert secret not in text
    assert "Zebedee" not in text
    first, second = lines(log_stream)[-2:]
    assert first["api_key"] == MASK
    assert first["authorization"] == MASK
    assert first["detail"] == f"upstream said: Authorization: Bearer {MASK}"
    assert "Secret('**********')" in first["settings"]
    assert second["question"] == "visible on purpose"


def test_processor_functions_directly() -> None:
    event = {"event": "x", "token": "abc", "count": 3, "note": "bearer abcdefgh", "empty_secret": ""}
    masked = mask_secrets(None, "info", dict(event))
    assert masked == {"event": "x", "token": MASK, "count": 3, "note": f"bearer {MASK}", "empty_secret": ""}
    counts = {"max_tokens": 512, "prompt_tokens": 10, "upstream_api_key": "k", "metrics_token": "t"}
    assert mask_secrets(None, "info", counts) == {
        "max_tokens": 512,
        "prompt_tokens": 10,
        "upstream_api_key": MASK,
        "metrics_token": MASK,
    }
    assert drop_patient_text(None, "info", {"event": "x", "answer": "a", "claims": 2}) == {
        "event": "x",
        "claims": 2,
    }
