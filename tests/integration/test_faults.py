"""Faults beyond test_chat_api's basics: each ends in a safe refusal, counted, audited, with no model text.

The gateway asks the upstream to stream (``ModelUpstream.stream``); these faults come before any
sentence is complete: a completion body cut short, stalled half-way or dripped (an upstream that
ignores ``stream``), headers with no body, a reset, garbage, and an event stream cut off before its end.
Faults after sentences were released (the answer then ends with a note) are in
test_verified_streaming.py. The client side is tested both ways: a plain response and an SSE stream
from the gateway.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx
import pytest

from gateway.audit import AuditFilter
from gateway.bootstrap import open_store
from gateway.domain import Passage
from gateway.errors import StoreError, VerifierError
from gateway.retrieval.retrieve import Retriever
from gateway.testing import Reply, ScriptedVerifier, contract_answer, refused_port
from gateway.verification.verify import ClaimChecker
from tests.support.components import with_components
from tests.support.fault_server import running_fault_server
from tests.support.stack import running_gateway

QUESTION = "How much paracetamol can an adult take?"
UNVERIFIED = "Paracetamol is best taken with seawater to double its strength"
"""Text the faulty upstream sends; no fragment of it may ever reach the client."""
DOSE = "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours."


def unverified_answer() -> str:
    return contract_answer(f"{UNVERIFIED} [1].", [(UNVERIFIED + ".", [1], UNVERIFIED)])


def supported_answer() -> str:
    return contract_answer(f"{DOSE[:-1]} [1].", [(DOSE, [1], DOSE)])


def ask(url: str, stream: bool) -> tuple[int, str, str, dict[str, Any]]:
    """POST one question; returns (status, answer text shown, whole raw body, trust report)."""
    body = {"model": "m", "stream": stream, "messages": [{"role": "user", "content": QUESTION}]}
    with httpx.Client(timeout=30) as client:
        if not stream:
            response = client.post(f"{url}/v1/chat/completions", json=body)
            data = response.json()
            content = data["choices"][0]["message"]["content"]
            return response.status_code, content, response.text, data.get("trust", {})
        raw, content, trust = "", "", {}
        with client.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
            for line in response.iter_lines():
                raw += line + "\n"
                if line.startswith("data: {"):
                    chunk = json.loads(line[6:])
                    content += chunk["choices"][0]["delta"].get("content") or ""
                    trust = chunk.get("trust", trust)
            return response.status_code, content, raw, trust


def metric(url: str, name: str) -> float:
    for line in httpx.get(f"{url}/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{name} not exported")


def assert_safe_refusal(url: str, stream: bool, reason: str) -> None:
    status, content, raw, trust = ask(url, stream)
    assert status == 200
    assert trust["summary"]["refused"] is True
    assert trust["summary"]["reason"] == reason
    for fragment in ("seawater", "double its strength", "best taken with"):
        assert fragment not in raw  # nowhere: not in the answer, the trust report or the sources
    assert "could not produce a checked" in content


FAULTS = [
    ("drip", "timeout", "upstream_error"),
    ("stall", "timeout", "upstream_error"),
    ("headers", "timeout", "upstream_error"),
    ("truncate", "connection", "upstream_error"),
    ("reset", "connection", "upstream_error"),
    ("garbage", "connection", "upstream_error"),
    # an event stream cut short (no finish reason, no [DONE]) before a sentence was complete
    ("sse_cut", "connection", "upstream_error"),
]


@pytest.mark.parametrize(("mode", "kind", "reason"), FAULTS)
def test_misbehaving_upstream_ends_in_a_counted_audited_refusal(mode, kind, reason, make_services) -> None:  # type: ignore[no-untyped-def]
    with running_fault_server(mode, unverified_answer(), interval=0.2) as (fault, base_url):
        services = make_services(
            upstream_base_url=base_url,
            upstream_retries=0,
            upstream_timeout=1.0,
            upstream_deadline=2.0,
        )
        with running_gateway(services) as url:
            assert_safe_refusal(url, stream=False, reason=reason)
            assert_safe_refusal(url, stream=True, reason=reason)
            errors = metric(url, 'gateway_requests_total{outcome="error"}')
            by_kind = metric(url, f'gateway_upstream_errors_total{{type="{kind}"}}')
            draft_errors = metric(url, 'gateway_stage_errors_total{stage="draft"}')
        assert fault.connections == 2
    assert errors == 2
    assert by_kind == 2
    assert draft_errors == 2
    assert services.audit.count() == 2
    rows = services.audit.list(AuditFilter())
    assert {r.reason for r in rows} == {reason}
    assert all("seawater" not in r.answer for r in rows)


def test_slow_drip_is_bounded_by_the_total_deadline_not_the_read_timeout(make_services) -> None:  # type: ignore[no-untyped-def]
    """Each byte arrives well within the per-read timeout; only the total deadline can stop it."""
    with running_fault_server("drip", unverified_answer(), interval=0.1) as (_fault, base_url):
        services = make_services(
            upstream_base_url=base_url, upstream_retries=0, upstream_timeout=5.0, upstream_deadline=1.5
        )
        with running_gateway(services) as url:
            _, _, _, trust = ask(url, stream=False)
            timeouts = metric(url, 'gateway_upstream_errors_total{type="timeout"}')
    assert trust["summary"]["reason"] == "upstream_error"
    assert timeouts == 1
    (row,) = services.audit.list(AuditFilter())
    record = services.audit.get(row.id)
    assert "deadline" in json.dumps(record)


class FailingStore:
    """A KnowledgeStore whose search raises ``error``; count still works (the process looks ready)."""

    def __init__(self, inner: Any, error: Exception) -> None:
        self.inner = inner
        self.error = error

    async def search(self, query: str, k: int) -> list[Passage]:
        raise self.error

    async def count(self) -> int:
        return int(await self.inner.count())


@pytest.mark.parametrize(
    "error", [StoreError("chroma: connection refused"), RuntimeError("segfault-ish")], ids=["store", "bug"]
)
def test_store_unavailable_is_refused_before_the_model_is_called(error, upstream, make_services) -> None:  # type: ignore[no-untyped-def]
    upstream, base_url = upstream
    upstream.reset()
    upstream.default = Reply(content=unverified_answer())
    services = make_services(upstream_base_url=base_url, upstream_retries=0)
    retrieval = services.policy.thresholds.retrieval
    failing = Retriever(FailingStore(services.store, error), retrieval, services.query_rewriter)
    services = with_components(services, retriever=failing)
    with running_gateway(services) as url:
        assert_safe_refusal(url, stream=False, reason="store_error")
        assert_safe_refusal(url, stream=True, reason="store_error")
        retrieve_errors = metric(url, 'gateway_stage_errors_total{stage="retrieve"}')
        refusals = metric(url, 'gateway_refusals_total{reason="store_error"}')
    assert upstream.requests == []
    assert retrieve_errors == 2
    assert refusals == 2
    assert services.audit.count() == 2


def test_chroma_server_on_a_dead_port_stops_start_up_with_a_store_error(embedder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from gateway.settings import Settings

    with refused_port() as port, pytest.raises(StoreError, match="Chroma"):
        open_store(Settings(data_dir=tmp_path, chroma_url=f"http://127.0.0.1:{port}"), embedder)


def test_readyz_reports_a_failing_store(make_services) -> None:  # type: ignore[no-untyped-def]
    services = make_services()

    class DeadStore(FailingStore):
        async def count(self) -> int:
            raise StoreError("cannot count passages: connection refused")

    services = with_components(services, store=DeadStore(services.store, StoreError("down")))
    with running_gateway(services) as url:
        ready = httpx.get(f"{url}/readyz")
    assert ready.status_code == 503
    assert ready.json()["status"] == "unavailable"


@pytest.mark.parametrize(
    "error",
    [VerifierError("judge unreachable"), ZeroDivisionError("bug in a check")],
    ids=["verifier", "bug"],
)
def test_verifier_raising_refuses_the_verified_looking_draft(error, upstream, make_services) -> None:  # type: ignore[no-untyped-def]
    upstream, base_url = upstream
    upstream.reset()
    upstream.default = Reply(content=supported_answer())
    services = make_services(upstream_base_url=base_url, upstream_retries=0)
    services = with_components(services, checker=ClaimChecker(ScriptedVerifier("anchoring", error=error)))
    with running_gateway(services) as url:
        for stream in (False, True):
            status, content, _raw, trust = ask(url, stream)
            assert status == 200
            assert trust["summary"]["reason"] == "verifier_error"
            assert "500 mg" not in content  # the draft may be right, but unverified text never goes out
            assert trust["claims"] == []
        errors = metric(url, 'gateway_requests_total{outcome="error"}')
    assert len(upstream.requests) == 2
    assert errors == 2
    assert services.audit.count() == 2


def _post_in_thread(url: str, results: list[dict[str, Any]]) -> threading.Thread:
    def run() -> None:
        body = {"model": "m", "messages": [{"role": "user", "content": QUESTION}]}
        results.append(httpx.post(f"{url}/v1/chat/completions", json=body, timeout=30).json())

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.parametrize(
    ("queue_size", "kind"), [(0, "queue_full"), (1, "queue_timeout")], ids=["full", "wait-timeout"]
)
def test_upstream_concurrency_limit_refuses_overflow(queue_size, kind, upstream, make_services) -> None:  # type: ignore[no-untyped-def]
    upstream, base_url = upstream
    upstream.reset()
    release = threading.Event()  # the first call holds the one slot until the overflow was refused
    upstream.queue(Reply(content=supported_answer(), hold_until=release))
    upstream.default = Reply(content=supported_answer())
    services = make_services(
        upstream_base_url=base_url,
        upstream_retries=0,
        upstream_max_concurrency=1,
        upstream_queue_size=queue_size,
        upstream_queue_timeout=0.3,
    )
    with running_gateway(services) as url:
        first: list[dict[str, Any]] = []
        thread = _post_in_thread(url, first)
        upstream.wait_for_requests(1)
        try:
            _, content, _raw, trust = ask(url, stream=False)
        finally:
            release.set()
        thread.join(timeout=30)
        overflow = metric(url, f'gateway_upstream_errors_total{{type="{kind}"}}')
    assert trust["summary"]["reason"] == "upstream_error"
    assert "500 mg" not in content
    assert first[0]["trust"]["summary"]["refused"] is False  # the call holding the slot was answered
    assert overflow == 1
    assert len(upstream.requests) == 1  # the refused call never reached the model
    assert services.audit.count() == 2
