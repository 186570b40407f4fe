"""Two gateways, one service: two ``trust-gateway serve`` processes share one Chroma server, one
PostgreSQL audit trail and one Redis, all real and on loopback.

A document ingested through replica A (its start-up ingestion into the shared Chroma) is retrieved
through replica B; both write to one audit trail; A is killed with SIGKILL under load and B keeps
serving. Then the trail is counted: every request that got a 200 (and every stream that completed)
has exactly one complete row, and no row is partial (a stream A was sending when it was killed is
``delivering``, holding the text written ahead of what was sent).
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.bench_gateway import five_claim_answer
from gateway.testing import running_upstream
from gateway.web.client_keys import hash_key
from gateway.web.disclosure import Disclosure
from tests.conftest import FIXTURE_KB
from tests.support.replicas import running_chroma, running_replicas
from tests.support.waiting import EventLog

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

KEY = "replica-test-client-key"
STAFF_KEY = "replica-test-clinician-key"
QUESTIONS = (
    "How much paracetamol can an adult take?",
    "How should I use eye drops after cataract surgery?",
    "What are the side effects of ibuprofen?",
)
LOAD_AFTER_KILL_SECONDS = 6.0
"""How long the clients go on after the SIGKILL (the kill comes once both replicas have answered), at
least: they go on until B has answered a request sent after ``AFTER_KILL_SECONDS``, for at most
``MAX_LOAD_AFTER_KILL_SECONDS`` (on a slow machine a request may take longer than the window)."""
AFTER_KILL_SECONDS = 0.5
"""A request sent this long after the kill cannot have been on its way to A when A died."""
MAX_LOAD_AFTER_KILL_SECONDS = 120.0
CLIENTS = 8


DISCLOSURE = Disclosure().suffix


@dataclass
class Outcome:
    replica: str
    sent_at: float
    status: int | None = None
    request_id: str | None = None
    answer: str | None = None
    stream: bool = False
    complete: bool = False
    error: str | None = None


async def one_request(client: httpx.AsyncClient, name: str, url: str, index: int, started: float) -> Outcome:
    stream = index % 4 == 0
    body = {
        "model": "m",
        "stream": stream,
        "messages": [{"role": "user", "content": QUESTIONS[index % len(QUESTIONS)]}],
    }
    outcome = Outcome(name, time.monotonic() - started, stream=stream)
    try:
        if stream:
            async with client.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
                outcome.status = response.status_code
                outcome.request_id = response.headers.get("x-request-id")
                text, done, trust = [], False, None
                async for line in response.aiter_lines():
                    if line == "data: [DONE]":
                        done = True
                    elif line.startswith("data: {"):
                        chunk = json.loads(line[6:])
                        text.append(chunk["choices"][0]["delta"].get("content") or "")
                        trust = chunk.get("trust", trust)
                outcome.answer = "".join(text)
                outcome.complete = done and trust is not None
        else:
            response = await client.post(f"{url}/v1/chat/completions", json=body)
            outcome.status = response.status_code
            if response.status_code == 200:
                data = response.json()
                outcome.request_id = data["trust"]["request_id"]
                outcome.answer = data["choices"][0]["message"]["content"]
                outcome.complete = True
    except httpx.HTTPError as err:
        outcome.error = type(err).__name__
    return outcome


def answered_after_kill(outcomes: list[Outcome], killed_at: float) -> bool:
    """B answered a request sent after the kill (with time for A's connections to be gone)."""
    return any(
        o.replica == "b" and o.status == 200 and o.sent_at > killed_at + AFTER_KILL_SECONDS for o in outcomes
    )


async def load(replicas: dict[str, str], victim: Any) -> tuple[list[Outcome], float]:
    """CLIENTS workers spread over the live replicas (as a Service would); A is SIGKILLed once both
    replicas have answered, the workers go on at least LOAD_AFTER_KILL_SECONDS after it and until B
    answered a request sent after it, and a worker whose request to A failed moves to B (as the
    Service would once A's endpoint is gone)."""
    outcomes: list[Outcome] = []
    alive = dict(replicas)
    started = time.monotonic()
    counter = iter(range(10**9))
    killed_at = 0.0
    answered = EventLog()
    """The replicas that answered a request whole, one entry per answer."""

    async def killer() -> None:
        nonlocal killed_at
        for name in ("a", "b"):
            await answered.reached(name, f"replica {name} answered before the kill")
        victim.send_signal(signal.SIGKILL)
        killed_at = time.monotonic() - started

    def loading() -> bool:
        if not killed_at:
            return True
        since_kill = time.monotonic() - started - killed_at
        return since_kill < LOAD_AFTER_KILL_SECONDS or (
            since_kill < MAX_LOAD_AFTER_KILL_SECONDS and not answered_after_kill(outcomes, killed_at)
        )

    async def worker(client: httpx.AsyncClient) -> None:
        while loading():
            index = next(counter)
            names = sorted(alive)
            name = names[index % len(names)]
            outcome = await one_request(client, name, alive[name], index, started)
            outcomes.append(outcome)
            if outcome.status == 200 and outcome.complete:
                answered.append(name)
            if outcome.error and name == "a":
                alive.pop("a", None)

    headers = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(timeout=60, headers=headers) as client:
        await asyncio.gather(killer(), *(worker(client) for _ in range(CLIENTS)))
    return outcomes, killed_at


def test_two_replicas_share_store_audit_and_limits_and_survive_a_sigkill(
    tmp_path: Path, audit_url: str, redis_server
) -> None:  # type: ignore[no-untyped-def]
    import psycopg

    keys = tmp_path / "keys.txt"
    keys.write_text(f"replica-test:{hash_key(KEY)}\n")
    with running_chroma(tmp_path) as chroma, running_upstream() as (scripted, upstream_url):
        chroma_url = chroma.url
        scripted.responder = five_claim_answer
        common = {
            "GATEWAY_CHROMA_URL": chroma_url,
            "GATEWAY_AUDIT_URL": audit_url,
            "GATEWAY_REDIS_URL": redis_server.url,
            "GATEWAY_UPSTREAM_BASE_URL": upstream_url,
            "GATEWAY_UPSTREAM_RETRIES": "0",
            "GATEWAY_API_KEYS_FILE": str(keys),
            "GATEWAY_CLINICIAN_KEYS": STAFF_KEY,
            "GATEWAY_RATE_LIMIT_PER_MINUTE": "1000000",
            "GATEWAY_RATE_LIMIT_BURST": "100000",
            "GATEWAY_KNOWLEDGE_DIR": str(FIXTURE_KB),
        }
        # A ingests the corpus into the shared Chroma at start-up; B never ingests anything.
        a_log, b_log = tmp_path / "a.log", tmp_path / "b.log"
        a_env = {**common, "GATEWAY_DATA_DIR": str(tmp_path / "a")}
        b_env = {**common, "GATEWAY_DATA_DIR": str(tmp_path / "b"), "GATEWAY_BUILD_INDEX_IF_MISSING": "false"}
        with running_replicas([(a_env, a_log), (b_env, b_log)]) as [(a, a_url), (_, b_url)]:
            assert "building_index" in a_log.read_text()
            assert "building_index" not in b_log.read_text()
            headers = {"Authorization": f"Bearer {KEY}"}
            query = {"query": "How long do I use eye drops after cataract surgery?", "k": 3}
            through_b = httpx.post(f"{b_url}/v1/retrieve", json=query, headers=headers, timeout=60)
            assert through_b.status_code == 200
            assert through_b.json()["passages"][0]["document_id"] == "cataract-recovery"
            for url in (a_url, b_url):
                ready = httpx.get(f"{url}/readyz").json()
                assert (ready["audit"], ready["rate_limits"]) == ("postgres", "redis")

            outcomes, killed_at = asyncio.run(load({"a": a_url, "b": b_url}, a))
            assert a.wait(timeout=10) == -signal.SIGKILL

            # B kept serving: it answered after the kill, and never with a server error
            from_b = [o for o in outcomes if o.replica == "b"]
            assert [o for o in from_b if o.error or (o.status or 0) >= 500] == []
            assert answered_after_kill(outcomes, killed_at)
            ok = [o for o in outcomes if o.status == 200 and o.complete]
            assert {o.replica for o in ok} == {"a", "b"}  # both wrote to the one trail

            # a request answered by A is readable on B's audit pages
            answered_by_a = next(o for o in ok if o.replica == "a")
            staff = {"Authorization": f"Bearer {STAFF_KEY}"}
            page = httpx.get(f"{b_url}/audit/{answered_by_a.request_id}", headers=staff, timeout=30)
            assert page.status_code == 200

    with psycopg.connect(audit_url) as conn:
        rows = conn.execute("SELECT id, outcome, question, answer, record FROM audit_requests").fetchall()
    by_id: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        by_id.setdefault(row[0], []).append(row)
    # no partial record: every row is either whole and consistent with its own record, or the row of
    # a request A was serving when it was killed, marked as such: `incomplete` (nothing sent), or
    # `delivering` (a stream: the text written ahead of each piece sent, or the whole record before
    # its final chunk, whose delivery A could not confirm)
    unfinished = set()
    for row_id, outcome, question, answer, record_text in rows:
        record = json.loads(record_text)
        assert record["request_id"] == row_id
        assert record["question"] == question
        if outcome == "incomplete":
            assert (record["status"], answer) == ("incomplete", "")
            unfinished.add(row_id)
            continue
        if outcome == "delivering":
            assert record["status"] == "delivering"
            assert answer == (record["answer"] if "trust" in record else record["sent"])
            if "trust" not in record:
                unfinished.add(row_id)
            continue
        assert record["answer"] == answer
        assert record["trust"] is not None
        assert outcome in {"answered", "rewritten", "refused", "emergency", "error"}
    # no answered request is left unfinished (a stream killed between its [DONE] and its final write
    # keeps the whole record, `delivering`: its delivery was never confirmed)
    assert not unfinished & {o.request_id for o in ok}
    # no record lost: every 200 (and every completed stream) has exactly one row, with its answer
    for o in ok:
        assert o.request_id is not None
        assert len(by_id.get(o.request_id, [])) == 1, f"{o.replica} request {o.request_id} has no single row"
        assert o.answer is not None
        assert o.answer.endswith(DISCLOSURE)  # shown to the patient; the record keeps the answer itself
        assert by_id[o.request_id][0][3] == o.answer.removesuffix(DISCLOSURE)
    # the only rows beyond the answered requests are those of requests cut off by the kill
    cut_off = [o for o in outcomes if not (o.status == 200 and o.complete)]
    assert len(rows) - len(ok) <= len(cut_off)
    assert all(o.replica == "a" for o in cut_off)
    print(
        f"\n{len(outcomes)} requests, {len(ok)} answered ({sum(o.replica == 'b' for o in ok)} by B), "
        f"{len(cut_off)} cut off by the SIGKILL at {killed_at:.1f} s, {len(rows)} audit rows"
    )
