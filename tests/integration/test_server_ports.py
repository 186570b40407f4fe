"""Servers started as separate processes take a port that was free a moment earlier
(``tests.support.ports``): one that finds the port taken starts again on a fresh one, and a readiness
check never mistakes another process's server on that port for its own."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.ports import PortTaken, listens_on, on_fresh_port, serving
from tests.support.services import REDIS_SERVER, RedisServer


def test_a_start_that_lost_its_port_starts_again_on_a_fresh_one() -> None:
    tried: list[int] = []

    def start(port: int) -> int:
        tried.append(port)
        if len(tried) == 1:
            raise PortTaken("taken")
        return port

    assert on_fresh_port(start) == tried[1]
    assert len(tried) == 2


def test_a_start_failing_otherwise_is_not_retried() -> None:
    tried: list[int] = []

    def start(port: int) -> None:
        tried.append(port)
        raise RuntimeError("the server is broken")

    with pytest.raises(RuntimeError, match="broken"):
        on_fresh_port(start)
    assert len(tried) == 1


def test_only_the_process_holding_the_listening_socket_listens_on_the_port() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        assert not listens_on(os.getpid(), port)  # bound, not listening
        held.listen()
        assert listens_on(os.getpid(), port)
        other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        try:
            assert not listens_on(other.pid, port)
            assert not serving(other, port, "sleeper", lambda: "")
        finally:
            other.kill()
            other.wait(timeout=10)


def test_a_redis_server_on_a_port_another_process_holds_reports_it_taken() -> None:
    if not Path(REDIS_SERVER).is_file():
        pytest.skip(f"redis-server is not installed ({REDIS_SERVER}): run `make system-deps`")
    server = RedisServer(Path(tempfile.mkdtemp(prefix="gateway-redis-")))
    with socket.socket() as held:
        held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        held.bind(("127.0.0.1", 0))
        held.listen()
        try:
            with pytest.raises(PortTaken):
                server.start_on(held.getsockname()[1])
        finally:
            server.stop()
