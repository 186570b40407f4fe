"""``POST /v1/responses`` end to end: the official openai SDK -> gateway -> scripted upstream, over HTTP.

The same pipeline as chat completions answers it: verified text only, the trust object, refusals,
errors in OpenAI's shape, access rules, limits and exactly one audit record per request.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest

from gateway.errors import AuditError
from gateway.settings import Secret
from gateway.testing import Reply
from tests.support.chat_answers import PARACETAMOL_DOSE, PARACETAMOL_MAX, supported_answer
from tests.support.cleanup_scenarios import EMERGENCY_WITH_ROUTINE_Q
from tests.support.stack import openai_client, running_gateway

QUESTION = "How much paracetamol can an adult take?"
VERIFIED = f"{PARACETAMOL_DOSE[:-1]} [1]. {PARACETAMOL_MAX[:-1]} [1]."
EVENT_ORDER = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
]
CLOSING = [
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
]


GATEWAY_SETTINGS = {"upstream_timeout": 5.0}


def test_create_returns_verified_text_and_trust(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = shared_gateway
    scripted.queue(supported_answer())
    before = services.audit.count()
    response = openai_client(url).responses.create(model="clinic-bot", input=QUESTION)
    assert response.object == "response"
    assert response.status == "completed"
    assert response.output_text == VERIFIED
    assert response.output[0].type == "message"
    assert response.output[0].role == "assistant"
    trust = response.model_extra["trust"]
    assert trust["summary"]["supported"] == 2
    assert trust["summary"]["refused"] is False
    assert trust["sources"][0]["document_id"] == "paracetamol"
    assert services.audit.count() == before + 1  # exactly one record
    record = services.audit.get(trust["request_id"])
    assert record is not None
    assert record["answer"] == VERIFIED
    assert response.id == "resp_" + trust["request_id"].removeprefix("req_")


def test_instructions_and_multi_turn_input_reach_the_model(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = shared_gateway
    scripted.queue(supported_answer())
    response = openai_client(url).responses.create(
        model="m",
        instructions="Answer in plain English for patients.",
        input=[
            {"role": "user", "content": "Hello, I have a question about medicines."},
            {
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Of course, what would you like to know?"}],
            },
            {"role": "user", "content": [{"type": "input_text", "text": QUESTION}]},
        ],
    )
    assert response.output_text == VERIFIED
    assert response.instructions == "Answer in plain English for patients."
    sent = scripted.requests[-1]["messages"]
    assert any("Answer in plain English for patients." in m["content"] for m in sent if m["role"] == "system")
    dialogue = [(m["role"], m["content"]) for m in sent if m["role"] != "system"]
    assert dialogue == [
        ("user", "Hello, I have a question about medicines."),
        ("assistant", "Of course, what would you like to know?"),
        ("user", QUESTION),
    ]
    record = services.audit.get(response.model_extra["trust"]["request_id"])
    assert [m["role"] for m in record["messages"]] == ["system", "user", "assistant", "user"]


def test_stream_helper_parses_every_typed_event(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = shared_gateway
    scripted.queue(supported_answer())
    before = services.audit.count()
    kinds: list[str] = []
    deltas: list[str] = []
    with openai_client(url).responses.stream(model="m", input=QUESTION) as stream:
        for event in stream:
            kinds.append(event.type)
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
        final = stream.get_final_response()
    assert kinds[:4] == EVENT_ORDER
    assert kinds[-4:] == CLOSING
    assert set(kinds[4:-4]) == {"response.output_text.delta"}
    assert "".join(deltas) == VERIFIED
    assert final.output_text == VERIFIED
    assert final.model_extra["trust"]["summary"]["supported"] == 2
    assert services.audit.count() == before + 1


def test_create_with_stream_true_yields_sequenced_events(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = shared_gateway
    scripted.queue(supported_answer())
    events = list(openai_client(url).responses.create(model="m", input=QUESTION, stream=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    done = next(e for e in events if e.type == "response.output_text.done")
    assert done.text == VERIFIED
    completed = events[-1]
    assert completed.type == "response.completed"
    assert completed.response.id == events[0].response.id
    assert completed.response.output[0].content[0].text == VERIFIED
    assert completed.response.model_extra["trust"]["request_id"].startswith("req_")


def test_emergency_never_reaches_the_model(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = shared_gateway
    response = openai_client(url).responses.create(model="m", input=EMERGENCY_WITH_ROUTINE_Q)
    trust = response.model_extra["trust"]
    assert (trust["scope"], trust["summary"]["reason"]) == ("emergency", "emergency")
    assert "emergency" in response.output_text
    assert scripted.requests == []


def test_upstream_failure_is_a_safe_refusal_on_the_stream(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = shared_gateway
    scripted.queue(Reply(raw_body="this is not json"))
    with openai_client(url).responses.stream(model="m", input=QUESTION) as stream:
        final = stream.get_final_response()
    trust = final.model_extra["trust"]
    assert trust["summary"]["refused"] is True
    assert trust["summary"]["reason"] == "malformed_output"
    assert "this is not json" not in final.output_text


def test_previous_response_id_is_refused_because_no_state_is_kept(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = shared_gateway
    before = services.audit.count()
    with pytest.raises(openai.BadRequestError) as info:
        openai_client(url).responses.create(model="m", input=QUESTION, previous_response_id="resp_123")
    body = info.value.body
    assert body["param"] == "previous_response_id"  # type: ignore[index]
    assert body["code"] == "unsupported_parameter"  # type: ignore[index]
    assert "keeps no conversation state" in body["message"]  # type: ignore[index]
    assert scripted.requests == []
    assert services.audit.count() == before  # a rejected request never reaches the pipeline


def test_tools_are_refused_naming_the_field(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    tool = {"type": "function", "name": "book", "parameters": {"type": "object", "properties": {}}}
    with pytest.raises(openai.BadRequestError) as info:
        openai_client(url).responses.create(model="m", input=QUESTION, tools=[tool])  # type: ignore[list-item]
    assert info.value.body["param"] == "tools"  # type: ignore[index]


BAD_BODIES = [
    (b"{not json", "invalid_json", None),
    (b'{"input": "hi"}', "missing_required_parameter", "model"),
    (b'{"model": "m"}', "missing_required_parameter", "input"),
    (b'{"model": "m", "input": []}', "empty_array", "input"),
    (b'{"model": "m", "input": 5}', "invalid_value", "input"),
    (b'{"model": "m", "input": [{"role": "wizard", "content": "hi"}]}', "invalid_value", "input[0].role"),
    (
        b'{"model": "m", "input": [{"role": "user", '
        b'"content": [{"type": "input_image", "image_url": "x"}]}]}',
        "invalid_value",
        "input[0].content[0]",
    ),
    (
        b'{"model": "m", "input": [{"type": "function_call_output", "call_id": "c", "output": "ok"}]}',
        "unsupported_parameter",
        "input[0].type",
    ),
    (b'{"model": "m", "input": "hi", "temperature": 3}', "invalid_value", "temperature"),
    (b'{"model": "m", "input": "hi", "max_output_tokens": 0}', "invalid_value", "max_output_tokens"),
    (b'{"model": "m", "input": "hi", "max_output_tokens": 999999}', "invalid_value", "max_output_tokens"),
    (b'{"model": "m", "input": "hi", "stream": "yes"}', "invalid_value", "stream"),
    (b'{"model": "m", "input": "hi", "conversation": "conv_1"}', "unsupported_parameter", "conversation"),
    (
        b'{"model": "m", "input": "hi", "text": {"format": {"type": "json_object"}}}',
        "unsupported_parameter",
        "text.format.type",
    ),
    (
        b'{"model": "m", "instructions": "be kind", "input": [{"role": "system", "content": "x"}]}',
        "invalid_value",
        "input",
    ),
]


@pytest.mark.parametrize(("body", "code", "param"), BAD_BODIES)
def test_bad_requests_get_openai_errors_naming_the_field(shared_gateway, body, code, param) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    response = httpx.post(f"{url}/v1/responses", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["code"], error["param"], error["type"]) == (code, param, "invalid_request_error")
    assert error["message"]


def test_message_limits_apply(upstream, module_services) -> None:  # type: ignore[no-untyped-def]
    _, base_url = upstream
    services = module_services(upstream_base_url=base_url, max_messages=2, max_message_chars=100)
    turns = [{"role": "user", "content": "hi"}] * 3
    with running_gateway(services) as url:
        too_many = httpx.post(f"{url}/v1/responses", json={"model": "m", "input": turns})
        too_long = httpx.post(f"{url}/v1/responses", json={"model": "m", "input": "x" * 101})
        long_instructions = httpx.post(
            f"{url}/v1/responses", json={"model": "m", "input": "hi", "instructions": "x" * 101}
        )
    assert (too_many.status_code, too_many.json()["error"]["code"]) == (400, "array_above_max_length")
    assert (too_long.json()["error"]["param"], too_long.json()["error"]["code"]) == (
        "input",
        "string_above_max_length",
    )
    assert long_instructions.json()["error"]["param"] == "instructions"


def test_access_rules_and_rate_limit_are_those_of_chat(upstream, module_services) -> None:  # type: ignore[no-untyped-def]
    scripted, base_url = upstream
    scripted.reset()
    services = module_services(
        upstream_base_url=base_url,
        api_keys=(Secret("client-key"),),
        rate_limit_burst=1,
        rate_limit_per_minute=0.1,  # no refill while the first request runs, however slow the machine
    )
    with running_gateway(services) as url:
        with pytest.raises(openai.AuthenticationError):
            openai_client(url, api_key="wrong").responses.create(model="m", input=QUESTION)
        scripted.queue(supported_answer())
        ok = openai_client(url, api_key="client-key").responses.create(model="m", input=QUESTION)
        assert ok.output_text == VERIFIED
        with pytest.raises(openai.RateLimitError):
            openai_client(url, api_key="client-key").responses.create(model="m", input=QUESTION)


def test_schema_publishes_the_request_body(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    schema = httpx.get(f"{url}/schema/openapi.json").json()
    body = schema["paths"]["/v1/responses"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert set(body["required"]) == {"model", "input"}
    assert "previous_response_id" not in json.dumps(body)


def test_audit_failure_after_text_went_out_ends_the_stream_as_failed(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    """The final record cannot be written: an ``error`` event and ``response.failed``, never
    ``response.completed`` nor ``trust``; the SDK's final response is then unavailable."""
    scripted, url, services = shared_gateway
    scripted.queue(supported_answer())
    original = services.audit.write
    writes: list[int] = []

    async def fail_completion(row: Any, record: Any) -> None:
        writes.append(1)
        if len(writes) == 2:  # the provisional row passes, the completed record fails
            raise AuditError("disk full")
        await original(row, record)

    services.audit.write = fail_completion  # type: ignore[method-assign]
    try:
        with openai_client(url).responses.stream(model="m", input=QUESTION) as stream:
            events = list(stream)
            with pytest.raises(RuntimeError):
                stream.get_final_response()
    finally:
        services.audit.write = original  # type: ignore[method-assign]
    kinds = [e.type for e in events]
    assert kinds[-2:] == ["error", "response.failed"]
    assert "response.completed" not in kinds
    assert events[-2].code == "audit_unavailable"
    assert events[-1].response.status == "failed"
    assert "trust" not in (events[-1].response.model_extra or {})
