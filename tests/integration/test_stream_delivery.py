"""A streamed answer's text is written ahead to its audit row, and the row says ``answered`` only once
the final chunk and ``[DONE]`` were written (issue #33, item 7).

A real gateway on loopback over the real SQLite file or the real PostgreSQL of the test session, the
scripted upstream, and the openai SDK as the client. A recorder between the server and the app puts
the gateway's audit writes and its writes to the connection into one ordered log, so each test can
assert what the row held at the moment each piece left, which is what a ``kill -9`` at that moment
would leave behind.
"""

from __future__ import annotations

import html
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import psycopg
import pytest

from gateway.audit import AuditFilter
from gateway.audit.command import unfinished_lines
from gateway.audit.crypto import new_key_text
from gateway.audit.integrity import verify_store
from gateway.audit.ledger import CHAIN_LOCK_KEY
from gateway.settings import Secret
from gateway.testing import Reply, ScriptedUpstream, serve_in_thread
from gateway.web.app import create_app
from tests.support import cleanup_scenarios as s
from tests.support.cleanup_stack import pin_chat_verifier, policy_copy
from tests.support.stack import openai_client

HELD_REWRITE = s.contract_answer(
    f"{s.m(s.DOSE, 1)} {s.m(s.FABRICATED, 1)} {s.m(s.GAP, 1)}",
    [
        (s.DOSE, [1], s.DOSE),
        (s.FABRICATED, [1], "cures migraines within ten minutes"),
        (s.GAP, [1], s.GAP),
    ],
)
"""A verified first sentence, then a claim whose (held) rewrite keeps the stream waiting."""
CLINICIAN_KEY = "clinician-key-for-delivery-tests"
STAFF = {"authorization": f"Bearer {CLINICIAN_KEY}"}
REWRITE = json.dumps({"rewrite": s.GAP, "quote": s.GAP[:-1]})
WAIT_SECONDS = 30.0
"""Upper bound of every wait on an event (a failing test fails instead of hanging)."""


@dataclass(frozen=True)
class Entry:
    kind: str
    """``write`` (an audit write, committed) or ``sent`` (an SSE event written to the connection)."""
    outcome: str = ""
    answer: str = ""
    data: str = ""


class Ledger:
    """The gateway's audit writes and the events it wrote to the connection, in the order they
    happened; ``wait`` blocks until a condition on it holds (no sleeps)."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self._changed = threading.Condition()
        self.client_gone = threading.Event()
        """Set: the connection reports the client gone (as the server does once it knows)."""
        self.gone_after: str | None = None
        """The client is reported gone once an event containing this was written."""

    def add(self, entry: Entry) -> None:
        with self._changed:
            self.entries.append(entry)
            self._changed.notify_all()

    def wait(self, condition: Callable[[list[Entry]], bool]) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: condition(self.entries), WAIT_SECONDS)

    def writes(self) -> list[Entry]:
        return [e for e in self.entries if e.kind == "write"]

    def watch(self, store: Any) -> None:
        """Log every committed write of ``store`` (every write goes through ``write_sync``)."""
        original = store.write_sync

        def write_sync(row: Any, record: Any) -> None:
            original(row, record)
            self.add(Entry("write", row["outcome"], row["answer"]))

        store.write_sync = write_sync

    def app(self, inner: Any) -> Any:
        """``inner`` with its body writes logged once written, and the client reported gone once
        ``client_gone`` is set (as uvicorn answers ``receive`` after a disconnect)."""

        async def app(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await inner(scope, receive, send)
                return

            async def logged_send(message: Any) -> None:
                await send(message)
                if message["type"] == "http.response.body" and message.get("body"):
                    for event in message["body"].decode().split("\n\n"):
                        if event.strip():
                            self.add(Entry("sent", data=event.strip()))
                        if self.gone_after is not None and self.gone_after in event:
                            self.client_gone.set()

            async def gone_receive() -> Any:
                if self.client_gone.is_set():
                    return {"type": "http.disconnect"}
                return await receive()

            await inner(scope, gone_receive, logged_send)

        return app


@pytest.fixture
def stack(upstream, make_services, tmp_path, request):  # type: ignore[no-untyped-def]
    """``start(backend)``: a gateway over SQLite or PostgreSQL with the upstream rewriter; yields
    (scripted, services, url, ledger)."""
    scripted, base_url = upstream
    scripted.reset()

    @contextmanager
    def start(
        backend: str = "sqlite", sealed: bool = False
    ) -> Iterator[tuple[ScriptedUpstream, Any, str, Ledger]]:
        settings: dict[str, Any] = {
            "upstream_base_url": base_url,
            "upstream_retries": 0,
            "policy_dir": policy_copy(tmp_path / "policies", rewriter="upstream"),
            "clinician_keys": (Secret(CLINICIAN_KEY),),
        }
        if sealed:
            settings["audit_key"] = Secret(new_key_text("k1"))
        if backend == "postgres":
            settings.update(audit_url=Secret(request.getfixturevalue("audit_url")), audit_timeout=1.0)
        services = pin_chat_verifier(make_services(**settings))
        assert services.audit.backend == backend
        ledger = Ledger()
        ledger.watch(services.audit)
        app = ledger.app(create_app(services.settings, services=services))
        with serve_in_thread(app) as url:
            yield scripted, services, url, ledger

    return start


def content_of(entry: Entry) -> str:
    """The text a chat chunk or a Responses delta carries ("" for any other event)."""
    data = next((line[6:] for line in entry.data.splitlines() if line.startswith("data: ")), "")
    if not data.startswith("{"):
        return ""
    payload = json.loads(data)
    if payload.get("type") == "response.output_text.delta":
        return str(payload["delta"])
    choices = payload.get("choices") or [{}]
    return str(choices[0].get("delta", {}).get("content") or "")


def assert_written_ahead(ledger: Ledger, notice: str = "") -> str:
    """Every piece of text was in the row (outcome ``delivering``) before it was written to the
    connection; returns the text sent (without the AI notice, which the record leaves out)."""
    sent = ""
    held = ""
    for entry in ledger.entries:
        if entry.kind == "write":
            held = entry.answer if entry.outcome == "delivering" else held
            continue
        piece = content_of(entry)
        if piece and piece != notice:
            sent += piece
            assert held.startswith(sent), f"{piece!r} left before its row held it"
    return sent


def request_id(services: Any) -> str:
    (row,) = services.audit.list(AuditFilter())
    return str(row.id)


@pytest.mark.parametrize("endpoint", ["chat", "responses"])
def test_completed_stream_is_answered_only_after_its_last_event_was_written(stack, endpoint) -> None:  # type: ignore[no-untyped-def]
    with stack() as (scripted, services, url, ledger):
        scripted.queue(s.SUPPORTED)
        client = openai_client(url)
        if endpoint == "chat":
            chunks = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": s.PARACETAMOL_Q}], stream=True
            )
            trust = [c.model_extra["trust"] for c in chunks if c.choices[0].finish_reason]
            last = "[DONE]"
        else:
            events = list(client.responses.create(model="m", input=s.PARACETAMOL_Q, stream=True))
            assert events[-1].type == "response.completed"
            trust = [events[-1].response.model_extra["trust"]]
            last = "response.completed"
        ledger.wait(lambda entries: entries[-1].kind == "write" and entries[-1].outcome == "answered")
    notice = trust[0]["ai_disclosure"]["notice"] if endpoint == "chat" else ""
    sent = assert_written_ahead(ledger, f"\n\n{notice}" if notice else "")
    assert sent == s.SUPPORTED_TEXT
    outcomes = [w.outcome for w in ledger.writes()]
    # provisional, one write-ahead per released piece, the whole record, then the final outcome
    assert outcomes == ["incomplete", "delivering", "delivering", "delivering", "answered"]
    final_at = ledger.entries.index(ledger.writes()[-1])
    last_at = max(i for i, e in enumerate(ledger.entries) if e.kind == "sent" and last in e.data)
    assert last_at < final_at  # answered only once the last event was on the connection
    record = services.audit.get(request_id(services))
    assert "status" not in record
    assert record["sent"] == record["answer"] == sent
    report = verify_store(services.audit, None)
    assert report.intact
    assert report.entries == 5


def test_client_gone_after_the_last_chunk_is_recorded_client_disconnected(stack) -> None:  # type: ignore[no-untyped-def]
    """The server already knows the client left when [DONE] was written (then a server drops the
    write): the row says ``client_disconnected``, with the whole record and what was handed over."""
    with stack() as (scripted, services, url, ledger):
        scripted.queue(s.SUPPORTED)
        ledger.gone_after = "[DONE]"  # the client vanishes as [DONE] is written
        chunks = openai_client(url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": s.PARACETAMOL_Q}], stream=True
        )
        assert [c.choices[0].finish_reason for c in chunks][-1] == "stop"
        ledger.wait(lambda entries: entries[-1].kind == "write" and entries[-1].outcome != "delivering")
    assert ledger.writes()[-1].outcome == "client_disconnected"
    record = services.audit.get(request_id(services))
    assert record["interruption"] == "client_disconnected"
    assert record["sent"] == s.SUPPORTED_TEXT
    assert record["trust"]["summary"]["supported"] == 2  # the whole record is kept


def test_client_disconnect_mid_answer_records_exactly_what_was_sent(stack) -> None:  # type: ignore[no-untyped-def]
    """With an audit key: the text written ahead is sealed like the rest (not in the file's bytes)."""
    release = threading.Event()
    with stack(sealed=True) as (scripted, services, url, ledger):
        scripted.queue(HELD_REWRITE, Reply(content=REWRITE, hold_until=release))
        received = ""
        chunks = openai_client(url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": s.PARACETAMOL_Q}], stream=True
        )
        for chunk in chunks:
            received += chunk.choices[0].delta.content or ""
            if received:
                chunks.close()  # the client goes away while the rewrite is still held
                break
        ledger.wait(lambda entries: any(e.outcome == "client_disconnected" for e in entries))
        release.set()
    assert [w.outcome for w in ledger.writes()] == ["incomplete", "delivering", "client_disconnected"]
    assert received == s.m(s.DOSE, 1)
    record = services.audit.get(request_id(services))
    assert record["sent"] == record["answer"] == received
    assert verify_store(services.audit, None).intact
    path = services.settings.resolved_audit_path
    stored = b"".join(p.read_bytes() for p in (path, path.with_name(path.name + "-wal")) if p.exists())
    assert s.DOSE[:30].encode() not in stored


@contextmanager
def store_locked(backend: str, services: Any) -> Iterator[None]:
    """Another connection holds the audit store's write lock: SQLite ``BEGIN EXCLUSIVE`` on the file;
    PostgreSQL the chain's advisory lock (the gateway's write then times out, ``audit_timeout``)."""
    if backend == "sqlite":
        holder = sqlite3.connect(str(services.settings.resolved_audit_path), isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            yield
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        return
    with psycopg.connect(services.settings.audit_url.reveal(), autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (CHAIN_LOCK_KEY,))
        try:
            yield
        finally:
            holder.execute("SELECT pg_advisory_unlock(%s)", (CHAIN_LOCK_KEY,))


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_audit_store_failing_mid_stream_stops_the_text(stack, backend) -> None:  # type: ignore[no-untyped-def]
    """The row holds everything that was sent, and nothing more is sent."""
    release = threading.Event()
    pieces: list[str] = []

    def read(chunks: Any, services: Any, ledger: Ledger) -> None:
        for chunk in chunks:
            pieces.append(chunk.choices[0].delta.content or "")
            if "".join(pieces) and not release.is_set():
                with store_locked(backend, services):
                    release.set()  # the rest is verified now, and its write-ahead meets the lock
                    ledger.wait(lambda entries: any('"audit_unavailable"' in e.data for e in entries))

    with stack(backend) as (scripted, services, url, ledger):
        scripted.queue(HELD_REWRITE, Reply(content=REWRITE, hold_until=release))
        chunks = openai_client(url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": s.PARACETAMOL_Q}], stream=True
        )
        with pytest.raises(openai.APIError) as failed:
            read(chunks, services, ledger)
        metrics = httpx.get(f"{url}/metrics").text
        (row,) = services.audit.list(AuditFilter())
        page = httpx.get(f"{url}/audit/{row.id}", headers=STAFF).text
    received = "".join(pieces)
    assert failed.value.code == "audit_unavailable"
    assert received == s.m(s.DOSE, 1)  # nothing after the failed write-ahead, no trust, no [DONE]
    assert not any("[DONE]" in e.data or '"trust"' in e.data for e in ledger.entries)
    assert [w.outcome for w in ledger.writes()] == ["incomplete", "delivering"]
    assert 'gateway_audit_errors_total{operation="deliver"} 1.0' in metrics
    assert (row.outcome, row.answer) == ("delivering", received)
    record = services.audit.get(row.id)
    assert record["status"] == "delivering"
    assert record["sent"] == received
    report = verify_store(services.audit, None)
    assert report.intact
    assert report.unfinished == ((row.id, "delivering"),)
    (line,) = unfinished_lines(report.unfinished)
    assert line.startswith("unfinished: 1 delivering (a stream whose delivery was not confirmed")
    assert row.id in line
    assert "Delivery not confirmed" in page  # the audit page says what happened, and shows what was sent
    assert html.escape(received) in page
