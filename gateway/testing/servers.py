"""Run an ASGI app on a free loopback port in a background thread (real HTTP, real sockets)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


def free_port() -> int:
    """A port free a moment ago, for a server started in another process (which binds it itself);
    in-process servers hold theirs (``serve_in_thread``)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


STOP_SECONDS = 60.0
"""How long a stopping server may take (its graceful shutdown is 2 s) before the test fails."""


def listening_socket(port: int = 0) -> socket.socket:
    """A socket bound to 127.0.0.1 (``port`` 0: a free one), for a server to listen on: the port is
    held from the moment it is chosen, so no other process can take it before the server starts."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        raise
    return sock


@contextmanager
def refused_port() -> Iterator[int]:
    """A loopback port where a connection is refused for as long as the context lasts: bound, never
    listening (``free_port`` only says a port was free a moment ago; another process may take it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


@contextmanager
def serve_in_thread(app: Any, port: int | None = None, startup_timeout: float = 60.0) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 (``port``, else a free one, bound before the server starts); yields
    its base URL and stops the server on exit, failing if it has not stopped within ``STOP_SECONDS``."""
    sock = listening_socket(port or 0)
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("server thread exited during start-up")
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start in time")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=STOP_SECONDS)
        sock.close()
    if thread.is_alive():  # a test reading what the server recorded on its way out would race it
        raise RuntimeError(f"server on port {port} did not stop within {STOP_SECONDS:g} s")
