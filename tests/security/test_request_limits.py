"""Hostile request shapes: deep nesting, oversize bodies, too many or too long messages, header tricks."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import httpx
import pytest

POST_PATHS = ("/v1/chat/completions", "/v1/verify", "/v1/retrieve")


GATEWAY_SETTINGS = {
    "scripted_upstream": False,
    "max_messages": 8,
    "max_message_chars": 2000,
    "max_tokens_cap": 1024,
}


def assert_400(response: httpx.Response, param: str | None, code: str | None = None) -> None:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    if code is not None:
        assert error["code"] == code
    assert error["message"]


def user(content: str) -> dict[str, str]:
    return {"role": "user", "content": content}


# --- nesting and size ----------------------------------------------------------------------------------

NESTED = [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    b'{"model": "m", "messages": [{"role": "user", "content": "hi", "x": '
    + b"[" * 100_000
    + b"]" * 100_000
    + b"}]}",
    b"[" * 200_000,  # unterminated as well
]


@pytest.mark.parametrize("path", POST_PATHS)
@pytest.mark.parametrize("body", NESTED, ids=["arrays", "objects", "inside-a-message", "unterminated"])
def test_deeply_nested_json_is_a_400_not_a_crash(shared_gateway, path, body) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    response = httpx.post(f"{url}{path}", content=body, headers={"content-type": "application/json"})
    assert_400(response, None, "invalid_json")
    assert httpx.get(f"{url}/healthz").status_code == 200  # the process survived


@pytest.mark.parametrize("path", POST_PATHS)
def test_oversized_bodies_are_413_with_and_without_content_length(shared_gateway, path) -> None:  # type: ignore[no-untyped-def]
    _, url, services = shared_gateway
    big = b'{"x": "' + b"a" * (services.settings.max_body_bytes + 1) + b'"}'
    declared = httpx.post(f"{url}{path}", content=big, headers={"content-type": "application/json"})

    def chunks() -> Iterator[bytes]:  # chunked transfer: no Content-Length to check up front
        for start in range(0, len(big), 65536):
            yield big[start : start + 65536]

    streamed = httpx.post(f"{url}{path}", content=chunks(), headers={"content-type": "application/json"})
    for response in (declared, streamed):
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "request_too_large"


def test_too_many_messages_is_a_400_naming_messages(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    body = {"model": "m", "messages": [user("hi")] * 9}
    assert_400(httpx.post(f"{url}/v1/chat/completions", json=body), "messages", "array_above_max_length")
    body = {"model": "m", "messages": [user("What is paracetamol?")] * 8}
    assert httpx.post(f"{url}/v1/chat/completions", json=body, timeout=30).status_code == 200


@pytest.mark.parametrize(
    ("messages", "param"),
    [
        ([user("x" * 2001)], "messages[0].content"),
        ([{"role": "system", "content": "y" * 5000}, user("hi")], "messages[0].content"),
        ([user("hi"), {"role": "assistant", "content": "ok"}, user("z" * 3000)], "messages[2].content"),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "a" * 1500}, {"type": "text", "text": "b" * 600}],
                }
            ],
            "messages[0].content",
        ),
    ],
)
def test_a_too_long_message_is_a_400_naming_it(shared_gateway, messages, param) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    response = httpx.post(f"{url}/v1/chat/completions", json={"model": "m", "messages": messages})
    assert_400(response, param, "string_above_max_length")


@pytest.mark.parametrize("key", ["max_tokens", "max_completion_tokens"])
def test_max_tokens_above_the_cap_is_a_400_not_clamped(shared_gateway, key) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    over = {"model": "m", "messages": [user("What is paracetamol?")], key: 1025}
    response = httpx.post(f"{url}/v1/chat/completions", json=over)
    assert_400(response, key, "invalid_value")
    assert "1024" in response.json()["error"]["message"]
    at_cap = {**over, key: 1024}
    assert httpx.post(f"{url}/v1/chat/completions", json=at_cap, timeout=30).status_code == 200


# --- headers -------------------------------------------------------------------------------------------


def test_a_client_request_id_is_never_echoed_or_trusted(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, services = shared_gateway
    supplied = "attacker-chosen-id-0001"
    response = httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "m", "messages": [user("What is paracetamol?")]},
        headers={"x-request-id": supplied},
        timeout=30,
    )
    assert response.status_code == 200
    assert response.headers["x-request-id"].startswith("req_")
    assert supplied not in str(response.headers)
    assert services.audit.get(supplied) is None
    assert services.audit.get(response.headers["x-request-id"]) is not None


def raw_request(url: str, request: bytes) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


def response_headers(raw: bytes) -> list[bytes]:
    head = raw.split(b"\r\n\r\n", 1)[0]
    return [line.lower() for line in head.split(b"\r\n")[1:]]


@pytest.mark.parametrize(
    "header",
    [
        b"X-Request-Id: abc\rInjected-Header: yes",  # bare CR inside a value
        b"X-Request-Id: abc\nInjected-Header: yes",  # bare LF
        b"X-Request-Id: abc\x00Injected-Header: yes",  # NUL
        b"X-Request-Id: abc\r\n Injected-Header: yes",  # obsolete line folding
    ],
    ids=["cr", "lf", "nul", "obs-fold"],
)
def test_crlf_in_request_headers_cannot_inject_response_headers(shared_gateway, header) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    body = json.dumps({"model": "m", "messages": [user("What is paracetamol?")]}).encode()
    raw = raw_request(
        url,
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + header
        + b"\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\nConnection: close\r\n\r\n"
        + body,
    )
    status = int(raw.split(b" ", 2)[1])
    assert status in (200, 400)
    for line in response_headers(raw):
        assert not line.startswith(b"injected-header")
        assert b"abc" not in line


@pytest.mark.parametrize(
    "path",
    [
        "/audit%0d%0aSet-Cookie:%20gateway_staff=forged",
        "/audit?outcome=refused%0d%0aSet-Cookie:%20gateway_staff=forged",
        "/clinician/requests/x%0d%0aLocation:%20https://evil.example",
    ],
)
def test_encoded_crlf_in_a_login_redirect_stays_encoded(shared_gateway, path) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    raw = raw_request(
        url,
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/html\r\nConnection: close\r\n\r\n".encode(),
    )
    headers = response_headers(raw)
    assert not any(h.startswith(b"set-cookie") for h in headers)
    locations = [h for h in headers if h.startswith(b"location")]
    assert len(locations) <= 1
    for location in locations:
        assert b"evil.example" not in location.split(b"next=", 1)[0]
        assert location.split(b": ", 1)[1].startswith(b"/clinician/login")


def test_login_next_parameter_cannot_redirect_off_site(shared_gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = shared_gateway
    for next_path in ("https://evil.example/", "//evil.example/", "/\\evil.example", "javascript:alert(1)"):
        response = httpx.post(f"{url}/clinician/login", data={"key": "wrong", "next": next_path})
        assert "evil.example" not in response.headers.get("location", "")
