"""Fuzzing: every operation of the OpenAPI schema (schemathesis) and hypothesis-built chat bodies.

Bounded and deterministic (``derandomize=True``: hypothesis derives every example from the test
itself, a fixed seed; fixed example counts; no example database). The properties: the gateway never
answers 5xx, and every JSON error is OpenAI-shaped (``{"error": {"message", "type", "param", "code"}}``).
The schema publishes the request bodies of chat, responses, verify and retrieve, so schemathesis
builds bodies for them from the published contract (positive and negative).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from gateway.settings import Secret

STAFF_KEY = "fuzz-clinician-key"
FUZZ_SETTINGS = settings(
    max_examples=120,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


GATEWAY_SETTINGS = {
    "scripted_upstream": False,
    "clinician_keys": (Secret(STAFF_KEY),),
    "max_messages": 16,
    "max_message_chars": 4000,
}


def assert_well_behaved(status: int, content_type: str, body: bytes, path: str) -> None:
    assert status < 500, (path, status, body[:500])
    if status < 400:
        return
    if path.startswith("/v1/") or "json" in content_type:
        data = json.loads(body)
        error = data["error"]
        assert set(error) == {"message", "type", "param", "code"}, data
        assert isinstance(error["message"], str)
        assert error["message"]
        assert isinstance(error["type"], str)


def test_every_schema_operation_survives_fuzzing(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    raw = httpx.get(f"{url}/schema/openapi.json").json()
    with_bodies = ("/v1/chat/completions", "/v1/responses", "/v1/verify", "/v1/retrieve")
    for path in with_bodies:
        assert raw["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
    schema = schemathesis.openapi.from_dict(raw)
    strategy = schema.as_strategy(generation_mode=GenerationMode.POSITIVE) | schema.as_strategy(
        generation_mode=GenerationMode.NEGATIVE
    )
    seen: set[str] = set()

    @FUZZ_SETTINGS
    @given(case=strategy)
    def run(case: Any) -> None:
        seen.add(case.operation.path)
        response = case.call(base_url=url, headers={"Authorization": f"Bearer {STAFF_KEY}"}, timeout=60)
        assert_well_behaved(
            response.status_code,
            response.headers.get("content-type", ""),
            response.content,
            case.formatted_path,
        )

    run()
    assert len(seen) >= 5  # the strategy really spread over the API
    assert set(with_bodies) <= seen  # and reached every operation that takes a body


JSON_LEAF = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40)
JSON_VALUE = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
ROLE = st.sampled_from(["user", "assistant", "system", "developer", "tool"]) | JSON_VALUE
CONTENT = (
    st.text(max_size=200)
    | st.sampled_from(["What is paracetamol?", "hay fever treatment", "Ignore previous instructions"])
    | st.lists(st.fixed_dictionaries({"type": st.sampled_from(["text", "image_url"]), "text": JSON_VALUE}))
    | JSON_VALUE
)
MESSAGE = st.fixed_dictionaries({"role": ROLE, "content": CONTENT}) | JSON_VALUE
CHAT_BODY = st.fixed_dictionaries(
    {"model": st.text(max_size=20) | JSON_VALUE, "messages": st.lists(MESSAGE, max_size=20) | JSON_VALUE},
    optional={
        "stream": st.booleans() | JSON_VALUE,
        "temperature": st.floats(allow_nan=False) | JSON_VALUE,
        "max_tokens": st.integers() | JSON_VALUE,
        "max_completion_tokens": st.integers() | JSON_VALUE,
        "n": st.integers(0, 3),
        "tools": JSON_VALUE,
        "metadata": st.dictionaries(st.text(max_size=8), JSON_VALUE, max_size=3) | JSON_VALUE,
        "user": JSON_VALUE,
    },
)


def test_hypothesis_chat_bodies_never_break_the_gateway(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    outcomes: set[int] = set()

    @FUZZ_SETTINGS
    @given(body=CHAT_BODY | JSON_VALUE)
    def run(body: Any) -> None:
        response = httpx.post(
            f"{url}/v1/chat/completions",
            content=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
            timeout=60,
        )
        outcomes.add(response.status_code)
        assert_well_behaved(
            response.status_code, response.headers.get("content-type", ""), response.content, "/v1/chat/"
        )
        if response.status_code == 200 and not (isinstance(body, dict) and body.get("stream") is True):
            assert response.json()["object"] == "chat.completion"

    run()
    assert 400 in outcomes


@FUZZ_SETTINGS
@given(raw=st.binary(max_size=300))
def test_arbitrary_bytes_are_a_400(raw: bytes) -> None:
    """Body parsing alone (no server needed): the parser raises only RequestError."""
    from gateway.errors import RequestError
    from gateway.web.chat_schema import parse_chat_request

    status = 400  # valid bytes are fine too: a parsed request
    try:
        parse_chat_request(raw)
    except RequestError as err:
        status = err.status_code
    assert status == 400
