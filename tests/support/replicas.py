"""Gateway replicas as real processes (``trust-gateway serve``) and a real Chroma server, on loopback.

Used by the two-replica integration test and by ``bench/load_test.py --replicas 2``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.support.servers import free_port

BIN = Path(sys.executable).parent
CHROMA = BIN / "chroma"


@contextmanager
def running_chroma(directory: Path | None = None) -> Iterator[str]:
    """``chroma run`` on a free loopback port; yields its URL."""
    if not CHROMA.is_file():
        pytest.skip("the chroma CLI is not installed next to the interpreter")
    path = directory or Path(tempfile.mkdtemp(prefix="gateway-chroma-"))
    port = free_port()
    log = (path / "chroma.log").open("wb")
    process = subprocess.Popen(
        [str(CHROMA), "run", "--path", str(path / "data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    "chroma did not start: " + (path / "chroma.log").read_text(errors="replace")
                )
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


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
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"the gateway exited ({process.returncode}): {log.read_text(errors='replace')}"
            )
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(
        f"the gateway at {url} did not become ready: {log.read_text(errors='replace')[-3000:]}"
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
