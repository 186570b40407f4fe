"""Live updates: a second process ingests, re-ingests, deletes and prunes while a gateway serves.

Real processes on loopback: ``trust-gateway serve`` over a ``chroma run`` server and a writer process
running the ``ingest`` command over and over (``tests/support/live_writer.py``), while clients send a
stream of retrievals and chat questions. No request may fail, and every retrieval must see one edition
of the changing document: all its passages from "edition alpha" or all from "edition beta", never
both. An embedded store is not written while a gateway serves it (the ingest is refused).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.conftest import FIXTURE_KB, REPO
from tests.support.replicas import running_chroma, running_replicas

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

ROUNDS = 1
"""Each kind of change (ingest, re-ingest, delete, prune) once while clients ask; a second round repeated
them and took a minute of CI time."""
CLIENTS = 2
PACE_SECONDS = 0.5
"""Between two requests of one client: a steady stream that overlaps every write, rather than as many
requests as the server can take (which starved the writer of CPU and made one run take minutes)."""
QUESTION = "How much water should adults drink in hot weather?"
EDITIONS = ("edition alpha", "edition beta")


@dataclass
class Seen:
    statuses: list[int] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    editions: set[str] = field(default_factory=set)
    mixed: list[list[str]] = field(default_factory=list)
    retrievals: int = 0
    chats: int = 0


def editions_of(passages: list[dict[str, object]]) -> set[str]:
    found: set[str] = set()
    for passage in passages:
        if passage["document_id"] == "hydration":
            found |= {e for e in EDITIONS if e in str(passage["text"])}
    return found


async def ask_until(url: str, written: asyncio.Event, seen: Seen, index: int) -> None:
    """Alternate retrievals and chat questions, one every ``PACE_SECONDS``, until the writer has exited."""
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        turn = index
        while not written.is_set():
            if turn > index:
                with suppress(TimeoutError):
                    await asyncio.wait_for(written.wait(), PACE_SECONDS)
            turn += 1
            if turn % 2:
                response = await client.post("/v1/retrieve", json={"query": QUESTION, "k": 10})
                seen.retrievals += 1
                seen.statuses.append(response.status_code)
                if response.status_code != 200:
                    seen.failures.append(f"retrieve {response.status_code}: {response.text[:300]}")
                    continue
                found = editions_of(response.json()["passages"])
                seen.editions |= found
                if len(found) > 1:
                    seen.mixed.append(sorted(found))
            else:
                body = {"model": "m", "messages": [{"role": "user", "content": QUESTION}]}
                response = await client.post("/v1/chat/completions", json=body)
                seen.chats += 1
                seen.statuses.append(response.status_code)
                if response.status_code != 200:
                    seen.failures.append(f"chat {response.status_code}: {response.text[:300]}")
                    continue
                summary = response.json()["trust"]["summary"]
                if summary["reason"] in ("store_error", "internal_error"):
                    seen.failures.append(f"chat refused: {summary['reason']}")
                answer = response.json()["choices"][0]["message"]["content"]
                if all(e in answer for e in EDITIONS):
                    seen.mixed.append(list(EDITIONS))


@contextmanager
def serving_replica(env: dict[str, str], log: Path) -> Iterator[str]:
    with running_replicas([(env, log)]) as [(_, url)]:
        yield url


def exercise(url: str, store_env: dict[str, str], work: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.update(store_env)
    work.mkdir(parents=True, exist_ok=True)
    writer_log = work / "writer.log"
    with writer_log.open("wb") as out:
        writer = subprocess.Popen(
            [sys.executable, "-m", "tests.support.live_writer", str(work), str(FIXTURE_KB), str(ROUNDS)],
            env=env,
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
        )

        async def clients() -> Seen:
            seen = Seen()
            written = asyncio.Event()

            async def watch() -> None:
                await asyncio.to_thread(writer.wait)
                written.set()

            await asyncio.gather(watch(), *(ask_until(url, written, seen, i) for i in range(CLIENTS)))
            return seen

        seen = asyncio.run(clients())
    log = writer_log.read_text(errors="replace")
    assert writer.returncode == 0, log[-3000:]
    assert log.count("step ") == 5 * ROUNDS, log[-3000:]
    assert seen.failures == [], seen.failures[:5]
    assert seen.mixed == []
    assert seen.retrievals > 5
    assert seen.chats > 5
    assert seen.editions == set(EDITIONS)  # both editions were served while they were current
    final = httpx.post(f"{url}/v1/retrieve", json={"query": QUESTION, "k": 10}, timeout=60).json()
    assert editions_of(final["passages"]) == {"edition beta"}  # the last step's edition
    assert "extra" not in {p["document_id"] for p in final["passages"]}  # pruned
    assert httpx.get(f"{url}/readyz", timeout=60).status_code == 200


def base_env(data: Path) -> dict[str, str]:
    return {
        "GATEWAY_DATA_DIR": str(data),
        "GATEWAY_KNOWLEDGE_DIR": str(FIXTURE_KB),
        "GATEWAY_RATE_LIMIT_PER_MINUTE": "0",
        "GATEWAY_INDEX_REFRESH_SECONDS": "0",
    }


def ingest(env: dict[str, str], *sources: str) -> subprocess.CompletedProcess[str]:
    """``trust-gateway ingest SOURCES`` in another process, against the store ``env`` names."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from gateway.cli import main; sys.exit(main())",
            "ingest",
            *sources,
        ],
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            **env,
        },
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_an_embedded_store_is_not_written_while_a_gateway_serves_it(tmp_path: Path) -> None:
    """Chroma's embedded store is not safe for two processes at once: a gateway searching while an
    ingest pruned its directory hung both (docs/knowledge.md, "Live updates"). So an ingest into a
    served embedded store is refused with a message naming the remedy, the gateway keeps serving, and
    the same ingest runs once the gateway has stopped."""
    env = base_env(tmp_path / "data")
    with serving_replica(env, tmp_path / "gateway.log") as url:
        refused = ingest(env, str(FIXTURE_KB), "--no-progress")
        assert refused.returncode == 2, refused.stderr[-2000:]
        assert "a running gateway serves the embedded store" in refused.stderr
        assert "GATEWAY_CHROMA_URL" in refused.stderr
        retrieved = httpx.post(f"{url}/v1/retrieve", json={"query": QUESTION, "k": 5}, timeout=60)
        assert retrieved.status_code == 200
        assert httpx.get(f"{url}/readyz", timeout=60).status_code == 200
    done = ingest(env, str(FIXTURE_KB), "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_chroma_server_is_updated_by_another_process_while_the_gateway_serves(tmp_path: Path) -> None:
    (tmp_path / "chroma").mkdir()
    with running_chroma(tmp_path / "chroma") as chroma:
        env = {**base_env(tmp_path / "data"), "GATEWAY_CHROMA_URL": chroma.url}
        with serving_replica(env, tmp_path / "gateway.log") as url:
            exercise(
                url,
                {"GATEWAY_CHROMA_URL": chroma.url, "GATEWAY_DATA_DIR": str(tmp_path / "writer")},
                tmp_path / "work",
            )
