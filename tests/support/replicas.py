"""Gateway replicas as real processes (``trust-gateway serve``) and a real Chroma server, on loopback.

Used by the two-replica integration test and by ``bench/load_test.py --replicas 2``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from gateway.testing import free_port
from tests.support.ports import PORT_ATTEMPTS, LogFile, PortTaken, on_fresh_port, serving, stop_process
from tests.support.waiting import answers_ok, wait_until

BIN = Path(sys.executable).parent
CHROMA = BIN / "chroma"


class ChromaServer:
    """``chroma run`` on a loopback port, with its data in ``directory`` (kept across restarts)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start_on(self, port: int) -> None:
        """The first start, on ``port`` (``on_fresh_port``); later starts (``start``) keep it."""
        self.port = port
        self.start()

    def start(self) -> None:
        log = LogFile(self.directory / "chroma.log")
        log.mark()
        command = [str(CHROMA), "run", "--path", str(self.directory / "data"), "--host", "127.0.0.1"]
        with log.path.open("ab") as out:
            self.process = process = subprocess.Popen(
                [*command, "--port", str(self.port)], stdout=out, stderr=subprocess.STDOUT
            )

        def up() -> bool:
            return serving(process, self.port, "chroma", log.since_mark) and answers_ok(
                f"{self.url}/api/v2/heartbeat", 1
            )

        wait_until(up, lambda: "chroma started: " + log.since_mark()[-3000:], 90, 0.2)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None


@contextmanager
def running_chroma(directory: Path | None = None) -> Iterator[ChromaServer]:
    """A Chroma server on a free loopback port (skipped when the chroma CLI is missing)."""
    if not CHROMA.is_file():
        pytest.skip("the chroma CLI is not installed next to the interpreter")
    server = ChromaServer(directory or Path(tempfile.mkdtemp(prefix="gateway-chroma-")))
    try:
        on_fresh_port(server.start_on)
        yield server
    finally:
        server.stop()


def start_replica(env: Mapping[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``trust-gateway serve`` on a free port with ``env`` added; returns it and its URL at once
    (call ``wait_ready``, or use ``running_replicas``, which starts again when the port was taken)."""
    port = free_port()
    full = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "ANONYMIZED_TELEMETRY": "False",
        **env,
    }
    command = [str(BIN / "trust-gateway"), "serve", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=full, stdout=out, stderr=subprocess.STDOUT)
    return process, f"http://127.0.0.1:{port}"


def wait_ready(process: subprocess.Popen[bytes], url: str, log: Path, timeout: float = 600) -> None:
    """Wait until the replica itself listens on its port and ``/readyz`` answers 200 (model loaded,
    store filled, audit and limiter answering); ``PortTaken`` if another process had the port."""
    port = int(url.rsplit(":", 1)[1])

    def text() -> str:
        return log.read_text(errors="replace")

    def ready() -> bool:
        return serving(process, port, "the gateway", text) and answers_ok(f"{url}/readyz", 2)

    wait_until(ready, lambda: f"the gateway at {url} ready: {text()[-3000:]}", timeout, 0.5)


@contextmanager
def running_replicas(
    specs: Sequence[tuple[Mapping[str, str], Path]],
) -> Iterator[list[tuple[subprocess.Popen[bytes], str]]]:
    """Replicas for ``(env, log)`` specs, started at once (they load in parallel), each ready (one that
    lost its port to another process starts again on a fresh one); all stopped on exit."""
    started = [start_replica(env, log) for env, log in specs]
    try:
        for index, (env, log) in enumerate(specs):
            for attempt in range(1, PORT_ATTEMPTS + 1):
                try:
                    wait_ready(*started[index], log)
                    break
                except PortTaken:
                    if attempt == PORT_ATTEMPTS:
                        raise
                    started[index] = start_replica(env, log)
        yield started
    finally:
        for process, _ in started:
            stop_process(process)
