"""Real PostgreSQL and Redis servers on loopback for the tests: throw-away, random free ports (a start
that loses its port to another process starts again on a fresh one: ``tests.support.ports``).

PostgreSQL refuses to run as root (and CI runs as root), so as root the server runs as the
``postgres`` system user (``runuser``) from a temporary directory that user owns. The data directory
uses ``fsync=off``: the tests check the gateway's transactions, not the disk. Servers are skipped
with a clear reason only when the binaries are missing (``make system-deps`` installs them).
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.ports import LogFile, on_fresh_port, serving
from tests.support.waiting import DEADLINE_SECONDS, wait_until

PG_BIN = Path(os.environ.get("GATEWAY_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def _as_postgres() -> dict[str, Any]:
    """Popen arguments that run a command as the ``postgres`` user when we are root (signals then
    reach the server itself, not a wrapper)."""
    if os.geteuid() != 0:
        return {}
    return {"user": "postgres", "group": "postgres", "extra_groups": [], "cwd": "/"}


@dataclass
class PostgresServer:
    """One running PostgreSQL cluster; ``url`` reaches its ``gateway`` database over TCP."""

    directory: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    @property
    def data(self) -> Path:
        return self.directory / "data"

    @property
    def log(self) -> Path:
        return self.directory / "server.log"

    def url(self, database: str = "gateway") -> str:
        return f"postgresql://gateway:test-password@127.0.0.1:{self.port}/{database}"

    def start_on(self, port: int) -> None:
        """The first start, on ``port`` (``on_fresh_port``); later starts (``start``) keep it."""
        self.port = port
        self.start()

    def start(self) -> None:
        command = [
            str(PG_BIN / "postgres"),
            "-D",
            str(self.data),
            "-p",
            str(self.port),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            f"unix_socket_directories={self.directory}",
            "-c",
            "fsync=off",
            "-c",
            "max_connections=100",
        ]
        log = LogFile(self.log)
        log.mark()
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, **_as_postgres())
        self._wait_ready(log)

    def _wait_ready(self, log: LogFile) -> None:
        def ready() -> bool:
            assert self.process is not None
            if not serving(self.process, self.port, "postgres", log.since_mark):
                return False
            command = [str(PG_BIN / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)]
            return subprocess.run(command, capture_output=True, check=False).returncode == 0

        wait_until(ready, lambda: "postgres ready: " + log.since_mark()[-2000:], 60, 0.2)

    def stop(self, how: signal.Signals = signal.SIGINT) -> None:
        """SIGINT: fast shutdown (clients disconnected); SIGKILL: a crash."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(how)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None

    def sql(self, statement: str, database: str = "gateway") -> str:
        """Run ``statement`` as the superuser through psql; returns its unaligned output."""
        done = subprocess.run(
            [
                str(PG_BIN / "psql"),
                "-h",
                str(self.directory),
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                database,
                "-v",
                "ON_ERROR_STOP=1",
                "-At",
                "-c",
                statement,
            ],
            **_as_postgres(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"psql failed: {done.stderr}")
        return str(done.stdout).strip()


def postgres_available() -> str | None:
    """None when the server binaries are present, else the reason to skip."""
    missing = [name for name in ("initdb", "postgres", "pg_isready", "psql") if not (PG_BIN / name).is_file()]
    if missing:
        return f"PostgreSQL binaries missing in {PG_BIN} ({', '.join(missing)}): run `make system-deps`"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
    return None


@contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """A fresh cluster with a ``gateway`` role (password auth over TCP) owning a ``gateway`` database."""
    reason = postgres_available()
    if reason:
        pytest.skip(reason)
    directory = Path(tempfile.mkdtemp(prefix="gateway-pg-"))
    if os.geteuid() == 0:
        entry = pwd.getpwnam("postgres")
        os.chown(directory, entry.pw_uid, entry.pw_gid)
    server = PostgresServer(directory)
    try:
        init = subprocess.run(
            [
                str(PG_BIN / "initdb"),
                "-D",
                str(server.data),
                "-U",
                "postgres",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--no-sync",
            ],
            **_as_postgres(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed: {init.stderr}")
        on_fresh_port(server.start_on)
        server.sql("CREATE ROLE gateway LOGIN PASSWORD 'test-password'", "postgres")
        server.sql("CREATE DATABASE gateway OWNER gateway", "postgres")
        yield server
    finally:
        server.stop(signal.SIGINT)
        shutil.rmtree(directory, ignore_errors=True)


@dataclass
class RedisServer:
    directory: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = [
            REDIS_SERVER,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.directory),
            "--protected-mode",
            "yes",
        ]
        log = LogFile(self.directory / "redis.log")
        log.mark()
        with log.path.open("ab") as out:
            self.process = process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        import redis

        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1)

        def pong() -> bool:
            if not serving(process, self.port, "redis-server", log.since_mark):
                return False
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

        try:
            wait_until(pong, lambda: "redis-server started: " + self.log_text(), DEADLINE_SECONDS, 0.1)
        finally:
            client.close()

    def start_on(self, port: int) -> None:
        """The first start, on ``port`` (``on_fresh_port``); later starts (``start``) keep it."""
        self.port = port
        self.start()

    def log_text(self) -> str:
        return (self.directory / "redis.log").read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process = None


@contextmanager
def running_redis() -> Iterator[RedisServer]:
    if not Path(REDIS_SERVER).is_file():
        pytest.skip(f"redis-server is not installed ({REDIS_SERVER}): run `make system-deps`")
    directory = Path(tempfile.mkdtemp(prefix="gateway-redis-"))
    server = RedisServer(directory)
    try:
        on_fresh_port(server.start_on)
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)
