"""Gateway replicas as real processes (``trust-gateway serve``) and a real Chroma server, on loopback.

Used by the two-replica integration test and by ``bench/load_test.py --replicas 2``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from gateway.testing import free_port
from tests.support.waiting import answers_ok, wait_until

BIN = Path(sys.executable).parent
CHROMA = BIN / "chroma"


class ChromaServer:
    """``chroma run`` on a loopback port, with its data in ``directory`` (kept across restarts)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = (self.directory / "chroma.log").open("ab")
        command = [str(CHROMA), "run", "--path", str(self.directory / "data"), "--host", "127.0.0.1"]
        self.process = subprocess.Popen(
            [*command, "--port", str(self.port)], stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        process = self.process

        def recent_log() -> str:
            return (self.directory / "chroma.log").read_text(errors="replace")[-3000:]

        def up() -> bool:
            if process.poll() is not None:
                raise RuntimeError("chroma exited: " + recent_log())
            return answers_ok(f"{self.url}/api/v2/heartbeat", 1)

        wait_until(up, lambda: "chroma started: " + recent_log(), 90, 0.2)

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
        server.start()
        yield server
    finally:
        server.stop()


def start_replica(env: Mapping[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``trust-gateway serve`` on a free port with ``env`` added; returns it and its URL at once
    (call ``wait_ready``)."""
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
    """Wait until ``/readyz`` answers 200 (model loaded, store filled, audit and limiter answering)."""

    def ready() -> bool:
        if process.poll() is not None:
            raise RuntimeError(
                f"the gateway exited ({process.returncode}): {log.read_text(errors='replace')}"
            )
        return answers_ok(f"{url}/readyz", 2)

    wait_until(
        ready, lambda: f"the gateway at {url} ready: {log.read_text(errors='replace')[-3000:]}", timeout, 0.5
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
