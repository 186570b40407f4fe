"""Authentication, roles, the metrics token, per-key rate limits, start-up exposure and secret hygiene."""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog

from gateway.errors import ConfigurationError
from gateway.settings import Secret, Settings
from gateway.web.client_keys import ClientKeyring, hash_key, is_loopback_host, parse_keys_file
from gateway.web.rate_limits import TokenBucketLimiter
from tests.support.stack import running_gateway

FILE_KEY_1 = "tg-file-key-one-5b0c1f"
FILE_KEY_2 = "tg-file-key-two-9d7a44"
ENV_KEY = "tg-env-key-3c2e88"
CLINICIAN_KEY = "clin-key-77aa01"
METRICS_TOKEN = "metrics-token-e4f1"
SECRETS = (FILE_KEY_1, FILE_KEY_2, ENV_KEY, CLINICIAN_KEY, METRICS_TOKEN)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def keys_file(directory: Path) -> Path:
    path = directory / "api-keys.txt"
    path.write_text(
        "# client applications of the trust gateway\n"
        f"chatbot-web:{hash_key(FILE_KEY_1)}\n\n"
        f"  chatbot-ivr : {hash_key(FILE_KEY_2).upper()}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def secured(module_services, tmp_path_factory):  # type: ignore[no-untyped-def]
    services = module_services(
        api_keys_file=keys_file(tmp_path_factory.mktemp("keys")),
        api_keys=(Secret(ENV_KEY),),
        clinician_keys=(Secret(CLINICIAN_KEY),),
        metrics_token=Secret(METRICS_TOKEN),
        rate_limit_per_minute=0.0,
    )
    with running_gateway(services) as url:
        yield url, services


def assert_openai_error(response: httpx.Response, status: int, error_type: str, code: str) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == error_type
    assert error["code"] == code
    assert set(error) == {"message", "type", "param", "code"}
    for secret in SECRETS:
        assert secret not in response.text


# --- client keys -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "code"),
    [
        ({}, "missing_api_key"),
        (bearer("not-a-key"), "invalid_api_key"),
        ({"Authorization": f"Basic {FILE_KEY_1}"}, "invalid_api_key"),
        ({"Authorization": FILE_KEY_1}, "invalid_api_key"),
        (bearer(hash_key(FILE_KEY_1)), "invalid_api_key"),  # the stored digest is not a key
    ],
)
def test_client_api_needs_a_valid_key(secured, headers, code) -> None:  # type: ignore[no-untyped-def]
    url, _ = secured
    for method, path in (("GET", "/v1/models"), ("POST", "/v1/chat/completions"), ("POST", "/v1/verify")):
        response = httpx.request(method, f"{url}{path}", headers=headers, json={})
        assert_openai_error(response, 401, "authentication_error", code)


@pytest.mark.parametrize("key", [FILE_KEY_1, FILE_KEY_2, ENV_KEY])
def test_hashed_file_keys_and_plain_env_keys_are_accepted(secured, key) -> None:  # type: ignore[no-untyped-def]
    url, _ = secured
    assert httpx.get(f"{url}/v1/models", headers=bearer(key)).status_code == 200
    response = httpx.post(
        f"{url}/v1/chat/completions",
        headers=bearer(key),
        json={"model": "m", "messages": [{"role": "user", "content": "Can I take paracetamol?"}]},
        timeout=30,
    )
    assert response.status_code == 200
    assert response.json()["object"] == "chat.completion"


def test_the_sdk_raises_its_authentication_error(secured) -> None:  # type: ignore[no-untyped-def]
    import openai

    from tests.support.stack import openai_client

    url, _ = secured
    with pytest.raises(openai.AuthenticationError):
        openai_client(url, api_key="wrong").models.list()
    assert openai_client(url, api_key=FILE_KEY_1).models.list().data


def test_a_clinician_key_is_the_wrong_role_for_the_client_api(secured) -> None:  # type: ignore[no-untyped-def]
    url, _ = secured
    response = httpx.get(f"{url}/v1/models", headers=bearer(CLINICIAN_KEY))
    assert_openai_error(response, 403, "permission_error", "insufficient_role")


# --- staff pages -------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/clinician", "/audit", "/audit/req_x/record.json"])
def test_staff_pages_need_a_staff_credential(secured, path) -> None:  # type: ignore[no-untyped-def]
    url, _ = secured
    assert_openai_error(
        httpx.get(f"{url}{path}"), 401, "authentication_error", "missing_clinician_credential"
    )
    assert_openai_error(
        httpx.get(f"{url}{path}", headers=bearer("nope")),
        401,
        "authentication_error",
        "invalid_clinician_credential",
    )
    assert_openai_error(
        httpx.get(f"{url}{path}", headers=bearer(FILE_KEY_1)), 403, "permission_error", "insufficient_role"
    )
    allowed = httpx.get(f"{url}{path}", headers=bearer(CLINICIAN_KEY))
    assert allowed.status_code in (200, 404)  # 404: the audit record does not exist, but access passed


def test_a_browser_without_a_session_is_sent_to_the_login_page(secured) -> None:  # type: ignore[no-untyped-def]
    url, _ = secured
    response = httpx.get(f"{url}/audit?outcome=refused", headers={"Accept": "text/html"})
    assert response.status_code == 303
    assert response.headers["location"].startswith("/clinician/login?next=/audit")


def test_unlisted_staff_prefixes_are_closed_even_without_a_route(secured) -> None:  # type: ignore[no-untyped-def]
    url, _ = secured
    # no route: 404 before any handler runs, never a 200 or a 500
    assert httpx.get(f"{url}/admin/anything", headers=bearer(FILE_KEY_1)).status_code == 404


@pytest.mark.parametrize("path", ["/", "/healthz", "/readyz", "/schema/openapi.json", "/static/app.css"])
def test_open_paths_need_no_credential(secured, path) -> None:  # type: ignore[no-untyped-def]
    url, _ = secured
    assert httpx.get(f"{url}{path}").status_code == 200


def test_login_page_stays_reachable(secured) -> None:  # type: ignore[no-untyped-def]
    url, _ = secured
    assert httpx.get(f"{url}/clinician/login", headers={"Accept": "text/html"}).status_code == 200


# --- metrics -----------------------------------------------------------------------------------------


def test_metrics_token_guards_metrics_and_failures_are_counted(secured) -> None:  # type: ignore[no-untyped-def]
    url, _ = secured
    assert_openai_error(httpx.get(f"{url}/metrics"), 401, "authentication_error", "missing_metrics_token")
    assert_openai_error(
        httpx.get(f"{url}/metrics", headers=bearer(FILE_KEY_1)),
        401,
        "authentication_error",
        "invalid_metrics_token",
    )
    httpx.get(f"{url}/v1/models")
    httpx.get(f"{url}/audit", headers=bearer(FILE_KEY_1))
    text = httpx.get(f"{url}/metrics", headers=bearer(METRICS_TOKEN)).text
    assert 'gateway_auth_failures_total{area="metrics",reason="missing"}' in text
    assert 'gateway_auth_failures_total{area="client",reason="missing"}' in text
    values = {
        line.split(" ")[0]: float(line.split(" ")[1])
        for line in text.splitlines()
        if line.startswith("gateway_auth_failures_total")
    }
    assert values['gateway_auth_failures_total{area="staff",reason="forbidden"}'] >= 1
    assert values['gateway_auth_failures_total{area="client",reason="missing"}'] >= 1
    for secret in SECRETS:
        assert secret not in text


# --- rate limiting -----------------------------------------------------------------------------------


def test_per_key_token_bucket_returns_429_with_retry_after(module_services) -> None:  # type: ignore[no-untyped-def]
    services = module_services(
        api_keys=(Secret(FILE_KEY_1), Secret(FILE_KEY_2)),
        rate_limit_per_minute=0.1,  # a token every 600 s: none comes back between the three GETs
        rate_limit_burst=2,
    )
    with running_gateway(services) as url:
        statuses = [httpx.get(f"{url}/v1/models", headers=bearer(FILE_KEY_1)).status_code for _ in range(2)]
        limited = httpx.get(f"{url}/v1/models", headers=bearer(FILE_KEY_1))
        other_key = httpx.get(f"{url}/v1/models", headers=bearer(FILE_KEY_2))
        metrics = httpx.get(f"{url}/metrics").text
    assert statuses == [200, 200]
    assert_openai_error(limited, 429, "rate_limit_error", "rate_limit_exceeded")
    assert 1 <= int(limited.headers["retry-after"]) <= 600  # at most one refill away
    assert other_key.status_code == 200  # buckets are per key
    assert "gateway_rate_limited_total 1.0" in metrics


def test_token_bucket_refills_at_the_configured_rate() -> None:
    now = [0.0]
    limiter = TokenBucketLimiter(per_minute=60, burst=2, clock=lambda: now[0])
    assert limiter.acquire("a") == 0.0
    assert limiter.acquire("a") == 0.0
    assert limiter.acquire("a") == pytest.approx(1.0)
    assert limiter.acquire("b") == 0.0
    now[0] = 0.5
    assert limiter.acquire("a") == pytest.approx(0.5)
    now[0] = 1.0
    assert limiter.acquire("a") == 0.0
    now[0] = 100.0  # refill is capped at the burst
    assert [limiter.acquire("a") for _ in range(3)][:2] == [0.0, 0.0]
    assert TokenBucketLimiter(per_minute=0, burst=1).acquire("a") == 0.0  # disabled


# --- keys file, CLI and start-up ---------------------------------------------------------------------


def test_keyring_identifies_keys_by_name_only() -> None:
    keyring = ClientKeyring(parse_keys_file(f"web:{hash_key('k1')}\n# c\napp.2:{hash_key('k2')}"))
    assert keyring.identify("k1") == "web"
    assert keyring.identify("k2") == "app.2"
    assert keyring.identify("k3") is None
    assert keyring.names == ("web", "app.2")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("web:abc", "line 1"),
        (f"\n\nweb {hash_key('x')}", "line 3"),
        (f"web:{hash_key('x')}\nweb:{hash_key('y')}", "repeated"),
        ("plain-key-pasted-by-mistake", "line 1"),
        (f"bad name:{hash_key('x')}", "line 1"),
    ],
)
def test_bad_keys_file_lines_stop_start_up_naming_the_line(text, fragment) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigurationError) as info:
        parse_keys_file(text)
    assert fragment in str(info.value)
    assert "GATEWAY_API_KEYS_FILE" in str(info.value)
    assert "plain-key-pasted-by-mistake" not in str(info.value)


def test_missing_keys_file_names_the_setting(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigurationError, match="GATEWAY_API_KEYS_FILE"):
        ClientKeyring.from_settings(Settings(api_keys_file=tmp_path / "absent.txt"))


def test_cli_keys_hash_prints_a_line_the_keyring_accepts(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from gateway.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO("my-secret-key\n"))
    assert main(["keys", "hash", "--name", "ward-bot"]) == 0
    line = capsys.readouterr().out.strip()
    assert line == f"ward-bot:{hash_key('my-secret-key')}"
    assert ClientKeyring(parse_keys_file(line)).identify("my-secret-key") == "ward-bot"


def test_cli_keys_generate_prints_a_working_pair(capsys) -> None:  # type: ignore[no-untyped-def]
    from gateway.cli import main

    assert main(["keys", "generate", "--name", "app"]) == 0
    out = capsys.readouterr().out.splitlines()
    key = out[0].rsplit(" ", 1)[1]
    line = out[1].rsplit(" ", 1)[1]
    assert ClientKeyring(parse_keys_file(line)).identify(key) == "app"


@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3", "::", "gateway.internal"])
def test_refuses_to_start_exposed_without_keys(host: str) -> None:
    from gateway.web.app import create_app

    with pytest.raises(ConfigurationError) as info:
        create_app(Settings(host=host))
    assert info.value.source == "GATEWAY_API_KEYS"
    create_app(Settings(host=host, api_keys=(Secret("k"),)))  # with a key it starts


def test_cli_serve_exits_with_a_configuration_error(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from gateway.cli import main

    for var in ("GATEWAY_API_KEYS", "GATEWAY_API_KEYS_FILE", "GATEWAY_PAGE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert main(["serve", "--host", "0.0.0.0"]) == 2
    assert "GATEWAY_API_KEYS" in capsys.readouterr().err


def test_open_loopback_mode_is_announced_with_a_warning() -> None:
    from gateway.web.app import create_app

    with structlog.testing.capture_logs() as events:
        create_app(Settings(host="127.0.0.1"))
    warnings = [e for e in events if e["event"] == "running_without_api_keys"]
    assert warnings
    assert warnings[0]["log_level"] == "warning"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("192.168.1.2", False),
        ("example.org", False),
    ],
)
def test_loopback_host_detection(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


# --- secret hygiene ----------------------------------------------------------------------------------


def test_no_secret_is_ever_logged(module_services, tmp_path_factory, caplog) -> None:  # type: ignore[no-untyped-def]
    from gateway.logs import configure_logging

    services = module_services(
        api_keys_file=keys_file(tmp_path_factory.mktemp("keys")),
        api_keys=(Secret(ENV_KEY),),
        clinician_keys=(Secret(CLINICIAN_KEY),),
        metrics_token=Secret(METRICS_TOKEN),
        rate_limit_per_minute=0.1,  # no refill while the first chat request runs, however slow the machine
        rate_limit_burst=1,
    )
    rendered = io.StringIO()
    caplog.set_level(logging.DEBUG)
    configure_logging("DEBUG", stream=rendered)
    try:
        with structlog.testing.capture_logs() as events, running_gateway(services) as url:
            chat = {"model": "m", "messages": [{"role": "user", "content": "paracetamol dose?"}]}
            requests: list[tuple[str, str, dict[str, str], Any]] = [
                ("POST", "/v1/chat/completions", bearer(FILE_KEY_1), chat),
                ("POST", "/v1/chat/completions", bearer(FILE_KEY_1), chat),  # rate limited
                ("GET", "/v1/models", bearer(FILE_KEY_2 + "x"), None),
                ("GET", "/v1/models", bearer(CLINICIAN_KEY), None),
                ("GET", "/audit", bearer(ENV_KEY), None),
                ("GET", "/audit", bearer(CLINICIAN_KEY), None),
                ("GET", "/metrics", bearer(METRICS_TOKEN + "x"), None),
                ("POST", "/v1/chat/completions", bearer(ENV_KEY), {"model": 5, "messages": ENV_KEY}),
            ]
            statuses = []
            for method, path, headers, body in requests:
                response = httpx.request(method, f"{url}{path}", headers=headers, json=body, timeout=30)
                statuses.append(response.status_code)
            login = httpx.post(f"{url}/clinician/login", data={"key": CLINICIAN_KEY, "next": "/audit"})
    finally:
        structlog.reset_defaults()
    assert statuses == [200, 429, 401, 403, 403, 200, 401, 400]
    assert login.status_code == 303
    assert any(e["event"] == "access_denied" for e in events)  # something was logged about them
    everything = rendered.getvalue() + repr(events) + "\n".join(r.getMessage() for r in caplog.records)
    everything += repr([r.__dict__ for r in caplog.records])
    for secret in SECRETS:
        assert secret not in everything
        assert hash_key(secret) not in everything
