"""The embedded Chroma store (PersistentClient): opened afresh, and one process at a time inside it.

``chromadb.PersistentClient(path)`` hands every caller of one process the same cached client, whose
vector indexes were loaded when it first opened them and never see what another process adds later
(an ``ingest`` run beside a serving gateway). ``open_embedded`` builds a new client over the same
directory, which loads the indexes as they are on disk now; ``chroma_index.ChromaIndex`` calls it
whenever it sees a commit made by another process. The new client replaces the cached one for later
``PersistentClient(path)`` calls of this process; clients already handed out keep working.

Chroma's embedded store is not safe for two processes at once (its maintainers say so; a gateway
searching while an ``ingest`` pruned the same directory hung both processes in our tests). Every call
into it therefore goes through ``locked``: a file lock in the store's directory that readers share and
a writer holds alone, taken per call, so a search waits at most for one write batch of an ingest.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

LOCK_FILE = "trust-gateway.lock"
SERVING_FILE = "trust-gateway.serving"
"""Locked (shared) by every gateway serving the store, (exclusively) by an ``ingest`` writing it."""

WRITES = frozenset(
    {
        "add",
        "upsert",
        "update",
        "delete",
        "modify",
        "create_collection",
        "get_or_create_collection",
        "delete_collection",
        "reset",
    }
)
"""Client and collection methods that change the store (held alone); every other call shares."""


class StoreLock:
    """A shared/exclusive lock on a file, across processes and threads alike.

    Each hold opens its own descriptor: ``flock`` locks belong to an open file description, so two
    threads of one process conflict exactly as two processes do.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def hold(self, exclusive: bool) -> Iterator[None]:
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield
        finally:
            os.close(descriptor)  # releases the lock


class Locked:
    """A Chroma client or collection whose every method call holds the store's lock."""

    def __init__(self, target: Any, lock: StoreLock) -> None:
        self._target = target
        self._lock = lock

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not callable(value):
            return value
        exclusive = name in WRITES

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock.hold(exclusive):
                result = value(*args, **kwargs)
            return Locked(result, self._lock) if _is_collection(result) else result

        return call


def _is_collection(value: Any) -> bool:
    from chromadb.api.models.Collection import Collection

    return isinstance(value, Collection)


def locked(path: Path, open_client: Callable[[], Any]) -> Locked:
    """``open_client()`` (which opens the store at ``path``) under the lock, the client wrapped."""
    lock = StoreLock(path / LOCK_FILE)
    with lock.hold(exclusive=True):
        return Locked(open_client(), lock)


class StoreServed(Exception):
    """An ``ingest`` was asked to write an embedded store that a running gateway serves."""


def _serving_descriptor(path: Path) -> int:
    path.mkdir(parents=True, exist_ok=True)
    return os.open(path / SERVING_FILE, os.O_RDWR | os.O_CREAT, 0o600)


def serve_store(path: Path) -> int:
    """Mark the embedded store at ``path`` as served by this process until it ends (a shared lock:
    several gateways may serve one store). Waits while an ``ingest`` writes it. Returns the lock's
    descriptor (closing it ends the mark)."""
    descriptor = _serving_descriptor(path)
    fcntl.flock(descriptor, fcntl.LOCK_SH)
    return descriptor


@contextmanager
def writing_store(path: Path) -> Iterator[None]:
    """Hold the embedded store at ``path`` for an ``ingest``; StoreServed when a gateway serves it.

    Chroma's embedded store is not safe for two processes at once, and a gateway searching while an
    ingest pruned the same directory hung both in our tests (docs/knowledge.md, "Live updates"):
    live updates need the Chroma server; an embedded store is updated while no gateway serves it.
    """
    descriptor = _serving_descriptor(path)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreServed(
                f"a running gateway serves the embedded store at {path}: Chroma's embedded store cannot "
                "be written by a second process while it is read, so stop the gateway(s) first, or "
                "serve from a Chroma server (GATEWAY_CHROMA_URL) to update the knowledge base live"
            ) from None
        yield
    finally:
        os.close(descriptor)


def open_embedded(path: Path) -> Any:
    """A new embedded Chroma client over ``path`` that does not share the process's cached one."""
    from chromadb.api import ServerAPI
    from chromadb.api.client import Client
    from chromadb.config import Settings as ChromaSettings
    from chromadb.config import System
    from chromadb.telemetry.product import ProductTelemetryClient

    settings = ChromaSettings(anonymized_telemetry=False, is_persistent=True, persist_directory=str(path))
    system = System(settings)
    system.instance(ProductTelemetryClient)  # type: ignore[type-abstract]
    system.instance(ServerAPI)  # type: ignore[type-abstract]
    system.start()
    return Client.from_system(system)
