"""Exactly one audit row per request that reaches the pipeline, whatever happens (issue 19, item 1).

Each case counts rows in the real SQLite audit store behind a real gateway on loopback: a streaming
client that disconnects mid-stream, an upstream and a rewriter that hang, a graceful stop with a
request in flight, bad unicode, and an audit store that is locked, deleted or unwritable (then no text
is released, the failure is counted and ``/readyz`` is not ready). Rejected (4xx) requests are not
audited but counted.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Any

import httpx
import pytest

from gateway.audit import AuditFilter
from gateway.testing import Reply, serve_in_thread
from gateway.web.app import create_app
from tests.support import cleanup_scenarios as s
from tests.support.cleanup_stack import pin_chat_verifier, policy_copy
from tests.support.stack import running_gateway
from tests.support.waiting import AuditWrites

HELD_REWRITE = s.contract_answer(
    f"{s.m(s.DOSE, 1)} {s.m(s.FABRICATED, 1)} {s.m(s.GAP, 1)}",
    [
        (s.DOSE, [1], s.DOSE),
        (s.FABRICATED, [1], "cures migraines within ten minutes"),
        (s.GAP, [1], s.GAP),
    ],
)
"""A verified first sentence, then a claim whose (held) rewrite keeps the stream waiting."""


@pytest.fixture
def gateway_services(upstream, make_services, tmp_path):  # type: ignore[no-untyped-def]
    """Services over the scripted upstream with the upstream rewriter; settings overridable."""
    scripted, base_url = upstream
    scripted.reset()

    def build(**overrides: Any) -> Any:
        policy_dir = policy_copy(tmp_path / "policies", rewriter="upstream")
        settings = {"upstream_base_url": base_url, "upstream_retries": 0, "policy_dir": policy_dir}
        return pin_chat_verifier(make_services(**{**settings, **overrides}))

    return scripted, build


def body(question: str = s.PARACETAMOL_Q, stream: bool = False) -> dict[str, Any]:
    return {"model": "m", "stream": stream, "messages": [{"role": "user", "content": question}]}


def metric(url: str, series: str) -> float:
    for line in httpx.get(f"{url}/metrics").text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{series} not exported")


def rows(services: Any) -> list[Any]:
    return services.audit.list(AuditFilter(limit=1000))


def test_client_disconnect_mid_stream_is_recorded_with_what_was_sent(gateway_services) -> None:  # type: ignore[no-untyped-def]
    scripted, build = gateway_services
    services = build()
    writes = AuditWrites()
    writes.watch(services.audit)
    release = threading.Event()
    scripted.queue(HELD_REWRITE, Reply(content="not the JSON asked for", hold_until=release))
    with running_gateway(services) as url:
        received = ""
        with (
            httpx.Client(timeout=30) as client,
            client.stream("POST", f"{url}/v1/chat/completions", json=body(stream=True)) as response,
        ):
            for line in response.iter_lines():
                if line.startswith("data: {"):
                    received += json.loads(line[6:])["choices"][0]["delta"].get("content") or ""
                if received:
                    break  # the client goes away while the rewrite is still held
        # the row says ``delivering`` from the first piece on (written ahead), so wait for what comes after
        writes.wait_for(
            lambda outcomes: bool(outcomes) and outcomes[-1] not in {"incomplete", "delivering"},
            "the row given its final outcome",
        )
        release.set()
        disconnected = metric(url, 'gateway_requests_total{outcome="client_disconnected"}')
    (row,) = rows(services)
    assert row.outcome == "client_disconnected"
    record = services.audit.get(row.id)
    assert record["interruption"] == "client_disconnected"
    assert record["sent"] == received == s.m(s.DOSE, 1)
    assert row.answer == received
    assert disconnected == 1


def test_hanging_upstream_and_hanging_rewriter_each_leave_one_row(gateway_services) -> None:  # type: ignore[no-untyped-def]
    scripted, build = gateway_services
    # The deadline is the request's, and the draft's own sentences are verified inside it: on a loaded
    # two-core CI machine 1 s was not always enough for the second request (its draft failed instead of
    # its rewrite), so 3 s.
    services = build(upstream_deadline=3.0, upstream_timeout=30.0)
    draft_held, rewrite_held = threading.Event(), threading.Event()  # each set only after its request ended
    with running_gateway(services) as url:
        scripted.queue(Reply(content=s.SUPPORTED, hold_until=draft_held))
        drafted = httpx.post(f"{url}/v1/chat/completions", json=body(), timeout=30).json()
        draft_held.set()  # the cancelled draft's call ends upstream too, before the next request
        scripted.queue(HELD_REWRITE, Reply(content="{}", hold_until=rewrite_held))
        rewritten = httpx.post(f"{url}/v1/chat/completions", json=body(), timeout=30).json()
    rewrite_held.set()
    assert drafted["trust"]["summary"]["reason"] == "upstream_error"
    assert [c["outcome"] for c in rewritten["trust"]["claims"]] == ["verified", "removed", "verified"]
    assert len(rows(services)) == 2
    assert {r.outcome for r in rows(services)} == {"error", "rewritten"}


def test_graceful_stop_with_a_request_in_flight_records_it(gateway_services) -> None:  # type: ignore[no-untyped-def]
    scripted, build = gateway_services
    services = build(upstream_deadline=60.0, upstream_timeout=60.0)
    hang = threading.Event()
    scripted.queue(Reply(content=s.SUPPORTED, hold_until=hang))
    app = create_app(services.settings, services=services)
    outcome: dict[str, Any] = {}

    def call(url: str) -> None:
        try:
            outcome["status"] = httpx.post(f"{url}/v1/chat/completions", json=body(), timeout=30).status_code
        except httpx.HTTPError as err:
            outcome["error"] = type(err).__name__

    with serve_in_thread(app) as url:
        caller = threading.Thread(target=call, args=(url,))
        caller.start()
        scripted.wait_for_requests(1)
    # the server stopped (graceful timeout 2 s) while the draft was still hanging
    caller.join(timeout=30)
    hang.set()
    (row,) = rows(services)
    assert row.outcome == "cancelled"
    assert "status" not in outcome or outcome["status"] != 200


def test_lone_surrogate_is_a_400_naming_the_field_and_not_audited(gateway_services) -> None:  # type: ignore[no-untyped-def]
    _scripted, build = gateway_services
    services = build()
    raw = b'{"model": "m", "messages": [{"role": "user", "content": "dose \\ud800 of paracetamol"}]}'
    with running_gateway(services) as url:
        response = httpx.post(
            f"{url}/v1/chat/completions", content=raw, headers={"content-type": "application/json"}
        )
        rejected = metric(url, 'gateway_rejected_requests_total{status="400"}')
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["param"], error["code"]) == ("messages[0].content", "invalid_unicode")
    assert rows(services) == []  # rejected before the pipeline: counted, not audited
    assert rejected == 1


def test_lone_surrogate_from_the_model_is_stored_replaced(gateway_services) -> None:  # type: ignore[no-untyped-def]
    scripted, build = gateway_services
    services = build()
    scripted.queue(s.SUPPORTED + json.dumps(["The passages say nothing odd \ud800 here."]) + "\n")
    with running_gateway(services) as url:
        response = httpx.post(f"{url}/v1/chat/completions", json=body(), timeout=30)
    assert response.status_code == 200
    (row,) = rows(services)
    assert row.outcome != "incomplete"


def audit_fault_case(services: Any, url: str, stream: bool) -> tuple[int, str]:
    """POST a question; returns (status, everything the client received)."""
    with httpx.Client(timeout=30) as client:
        response = client.post(f"{url}/v1/chat/completions", json=body(stream=stream))
        return response.status_code, response.text


@pytest.mark.parametrize("fault", ["locked", "deleted", "replaced"])
def test_unwritable_audit_store_releases_no_text_is_counted_and_not_ready(gateway_services, fault) -> None:  # type: ignore[no-untyped-def]
    scripted, build = gateway_services
    services = build()
    scripted.default = Reply(content=s.SUPPORTED)
    path = services.settings.resolved_audit_path
    holder: sqlite3.Connection | None = None
    with running_gateway(services) as url:
        assert httpx.get(f"{url}/readyz").status_code == 200
        if fault == "locked":
            holder = sqlite3.connect(str(path), isolation_level=None)
            holder.execute("BEGIN EXCLUSIVE")
        elif fault == "deleted":
            path.unlink()
        else:  # moved away and replaced by another file (a restore over a running gateway)
            path.rename(path.with_name("moved.sqlite3"))
            path.write_bytes(b"")
        try:
            results = [audit_fault_case(services, url, stream) for stream in (False, True)]
            ready = httpx.get(f"{url}/readyz", timeout=30)
            begin_errors = metric(url, 'gateway_audit_errors_total{operation="begin"}')
        finally:
            if holder is not None:
                holder.execute("ROLLBACK")
                holder.close()
    for status, text in results:
        assert status == 503
        assert "audit_unavailable" in text
        assert "paracetamol" not in text.lower()  # no answer text, streamed or not
    assert ready.status_code == 503
    assert ready.json()["checks"]["audit_store"]["ok"] is False
    assert begin_errors == 2
    assert scripted.requests == []  # the model was never called


def test_audit_failure_at_completion_sends_no_answer(gateway_services) -> None:  # type: ignore[no-untyped-def]
    """The provisional row was written, the final write fails: the plain answer is withheld (503)."""
    scripted, build = gateway_services
    services = build()
    scripted.default = Reply(content=s.SUPPORTED)
    original = services.audit.write
    calls: list[int] = []

    async def fail_second(row: Any, record: Any) -> None:
        calls.append(1)
        if len(calls) == 2:
            from gateway.errors import AuditError

            raise AuditError("disk full")
        await original(row, record)

    services.audit.write = fail_second  # type: ignore[method-assign]
    with running_gateway(services) as url:
        response = httpx.post(f"{url}/v1/chat/completions", json=body(), timeout=30)
        complete_errors = metric(url, 'gateway_audit_errors_total{operation="complete"}')
    assert response.status_code == 503
    assert "paracetamol" not in response.text.lower()
    assert complete_errors == 1
    (row,) = rows(services)
    assert row.outcome == "incomplete"  # the provisional row says the request never completed


@pytest.mark.parametrize(
    ("failing", "operation", "left", "sent"),
    [(2, "deliver", "incomplete", ""), (4, "complete", "delivering", s.SUPPORTED_TEXT)],
    ids=["first-piece", "whole-record"],
)
def test_streamed_audit_failure_ends_the_stream(gateway_services, failing, operation, left, sent) -> None:  # type: ignore[no-untyped-def]
    """A write of a stream fails (the first piece's write-ahead, or the whole record before the final
    chunk): nothing more is sent, the stream ends with an error, no trust, no [DONE]; the row holds
    exactly the text that was sent, and the failure is counted."""
    scripted, build = gateway_services
    services = build()
    scripted.default = Reply(content=s.SUPPORTED)
    original = services.audit.write
    calls: list[int] = []

    async def fail_one(row: Any, record: Any) -> None:
        calls.append(1)
        if len(calls) == failing:
            from gateway.errors import AuditError

            raise AuditError("disk full")
        await original(row, record)

    services.audit.write = fail_one  # type: ignore[method-assign]
    with running_gateway(services) as url:
        response = httpx.post(f"{url}/v1/chat/completions", json=body(stream=True), timeout=30)
        errors = metric(url, f'gateway_audit_errors_total{{operation="{operation}"}}')
    events = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
    assert json.loads(events[-1])["error"]["code"] == "audit_unavailable"
    assert "[DONE]" not in events
    assert not any('"trust"' in e for e in events)
    received = "".join(
        json.loads(e)["choices"][0]["delta"].get("content") or "" for e in events if '"choices"' in e
    )
    assert received == sent
    assert errors == 1
    (row,) = rows(services)
    assert (row.outcome, row.answer) == (left, sent)
