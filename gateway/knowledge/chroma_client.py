"""The Chroma client a knowledge store talks through: embedded (``chroma_path``) or a server
(``chroma_url``), with where its BM25 cache lives and how an embedded store is reopened."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from gateway.errors import StoreError
from gateway.knowledge.embedded import locked, open_embedded
from gateway.settings import Settings


@dataclass(frozen=True)
class Connection:
    client: Any
    cache_dir: Path
    """Where the BM25 index is cached (``chroma_index.py``)."""
    reopen: Callable[[], Any] | None
    """Opens the embedded store afresh (None for a server, which always answers as committed)."""


def connect(settings: Settings) -> Connection:
    """The configured Chroma client; StoreError when it cannot be reached."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    reopen: Callable[[], Any] | None = None
    client: Any
    try:
        if settings.chroma_url:
            url = urlparse(settings.chroma_url)
            client = chromadb.HttpClient(
                host=url.hostname or "127.0.0.1",
                port=url.port or (443 if url.scheme == "https" else 8000),
                ssl=url.scheme == "https",
                settings=chroma_settings,
            )
            key = hashlib.sha256(settings.chroma_url.encode("utf-8")).hexdigest()[:12]
            cache_dir = settings.data_dir / "lexical" / f"server-{key}"
        else:
            path = settings.resolved_chroma_path
            path.mkdir(parents=True, exist_ok=True)
            client = locked(path, partial(chromadb.PersistentClient, str(path), chroma_settings))
            cache_dir = path / "lexical"
            reopen = partial(locked, path, partial(open_embedded, path))
    except Exception as err:
        raise StoreError(f"cannot reach the Chroma store: {err}") from err
    return Connection(client, cache_dir, reopen)
