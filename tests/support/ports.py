"""Servers started as separate processes on a port free a moment earlier (``free_port``), and what to do
when another process takes that port first.

Between ``free_port`` and the server binding the port, another process (an xdist worker's server) may
take it. Then either the server fails to bind and exits (its log says "address already in use") or,
worse, the readiness probe reaches the *other* process's server. So a readiness check asks that the
server's own process holds a listening socket on the port (``/proc``), never just that something answers
there; ``on_fresh_port`` starts again on a fresh port when the start fails with ``PortTaken``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from gateway.testing import free_port

T = TypeVar("T")
PORT_ATTEMPTS = 5
"""Starts tried on fresh ports before giving up (each lost only to a process that took the port)."""
IN_USE = "address already in use"


class PortTaken(RuntimeError):
    """The server exited because another process held its port (a fresh port may succeed)."""


def on_fresh_port(start: Callable[[int], T], attempts: int = PORT_ATTEMPTS) -> T:
    """``start(port)`` on a port free a moment ago; again on a fresh one when it raises ``PortTaken``."""
    for attempt in range(1, attempts + 1):
        try:
            return start(free_port())
        except PortTaken:
            if attempt == attempts:
                raise
    raise AssertionError("unreachable")


def _listening_inodes(port: int) -> set[str]:
    """The inodes of loopback sockets listening on TCP ``port`` (any process)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(f"socket:[{fields[9]}]")
    return inodes


def listens_on(pid: int, port: int) -> bool:
    """Whether process ``pid`` itself holds a socket listening on ``port``."""
    inodes = _listening_inodes(port)
    if not inodes:
        return False
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            if str(fd.readlink()) in inodes:
                return True
        except OSError:
            continue
    return False


def serving(process: subprocess.Popen[bytes], port: int, name: str, log: Callable[[], str]) -> bool:
    """For a readiness wait: whether ``process`` listens on ``port`` itself. Raises if it has exited:
    ``PortTaken`` when ``log()`` (its output since this start) says the address was in use."""
    if process.poll() is not None:
        text = log()
        if IN_USE in text.lower():
            raise PortTaken(f"{name} could not bind port {port}: {text[-1000:]}")
        raise RuntimeError(f"{name} exited ({process.returncode}): {text[-3000:]}")
    return listens_on(process.pid, port)


class LogFile:
    """A server's log file, read from where it ended when ``mark`` was called (this start's output)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._start = 0

    def mark(self) -> None:
        self._start = self.path.stat().st_size if self.path.exists() else 0

    def since_mark(self) -> str:
        with self.path.open("rb") as handle:
            handle.seek(self._start)
            return handle.read().decode(errors="replace")


def stop_process(process: subprocess.Popen[bytes], grace: float = 30) -> None:
    """Stops a server started as a separate process: SIGTERM, then SIGKILL after ``grace`` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
