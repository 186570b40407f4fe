"""The committed state of a Chroma knowledge index, as one process sees it.

``ChromaIndex`` opens the collections, follows the registry's version (``refresh``) and keeps the
in-process BM25 index and its on-disk cache in step with the committed passages. Writing is
``chroma_writer.ChromaWriter``; searching is ``store.ChromaStore``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from gateway.errors import StoreError
from gateway.knowledge.lexical import LexicalIndex
from gateway.knowledge.records import (
    PAGE,
    STATE_ID,
    IndexMoved,
    cached_ids,
    document_of_record,
    lexical_text,
)
from gateway.knowledge.titles import EXACT_MAX_TITLES, TitleIndex
from gateway.models.embedding import Embedder, MiniLMEmbeddingFunction

log = structlog.get_logger("gateway.knowledge")

CATCH_UP_ATTEMPTS = 5
"""Consistent reads of the registry tried before a refresh gives up (each retry follows a commit)."""

_HNSW = {"space": "cosine", "ef_construction": 64, "batch_size": 2000, "sync_threshold": 5000}
"""Passage ANN index: cosine; a larger write batch makes bulk ingestion cheaper."""


@dataclass
class Snapshot:
    """What this process believes is committed: the registry version and each document's hash."""

    version: str = ""
    hashes: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    """Passages per committed document."""
    quarantined: dict[str, int] = field(default_factory=dict)
    """Sentences quarantined as instructions, per committed document (instructions.py)."""


@dataclass(frozen=True)
class IndexSettings:
    """What opening one knowledge index takes: stated once here, for ``ChromaIndex`` and every class
    built on it (the writer, the reader, the store)."""

    client: Any
    """The Chroma client the collections are opened through (``chroma_client.connect``)."""
    collection: str
    embedder: Embedder
    cache_dir: Path | None = None
    """Where the BM25 index is cached on disk (None: not cached)."""
    refresh_interval: float = 0.0
    """Seconds between reads of the registry's version (0: before every read)."""
    reopen: Callable[[], Any] | None = None
    """A new client, for when the one in use fails (None: keep it)."""
    title_weight: int = 1
    """BM25 weight of a document's title."""
    exact_max_titles: int = EXACT_MAX_TITLES
    """Above this many titles Chroma answers the title search."""
    clock: Callable[[], float] = time.monotonic
    """Seconds, for ``refresh_interval`` (tests drive it; default the monotonic clock)."""


class ChromaIndex:
    """The collections of one knowledge index and this process's view of what is committed."""

    def __init__(self, index: IndexSettings) -> None:
        self._clock = index.clock
        self._embedder = index.embedder
        self._exact_max_titles = index.exact_max_titles
        self._title_weight = index.title_weight
        self._reopen = index.reopen
        self._retired: list[Any] = []
        self._refresh_interval = index.refresh_interval
        self._version_read_at = -float("inf")
        self._collection = index.collection
        self._cache_dir = index.cache_dir
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._snapshot = Snapshot()
        self._lexical = LexicalIndex(index.title_weight)
        self._records_by_document: dict[str, list[str]] = {}
        self.path: Path | None = None
        """The embedded store's directory (None for a Chroma server); ``gateway.health`` checks it."""
        self._open_collections(index.client)
        self.refresh()

    def _open_collections(self, client: Any) -> None:
        """Open (or create) the four collections through ``client``."""
        collection = self._collection
        function = MiniLMEmbeddingFunction(self._embedder)
        self._client = client
        try:
            self._passages = client.get_or_create_collection(
                collection, embedding_function=function, configuration={"hnsw": _HNSW}
            )
            self._vectors = client.get_or_create_collection(
                f"{collection}_vectors",
                embedding_function=function,
                configuration={"hnsw": {"space": "cosine"}},
            )
            self._registry = client.get_or_create_collection(
                f"{collection}_registry",
                embedding_function=function,
                configuration={"hnsw": {"space": "cosine"}},
            )
            self._titles = TitleIndex(
                client.get_or_create_collection(
                    f"{collection}_titles",
                    embedding_function=function,
                    configuration={"hnsw": {"space": "cosine"}},
                ),
                self._exact_max_titles,
            )
        except Exception as err:
            raise StoreError(f"cannot open Chroma collection {collection!r}: {err}") from err

    def _reconnect(self) -> None:
        """Open the embedded store afresh (called with the read lock held, on another process's commit).

        An embedded Chroma client keeps each collection's vector index in memory and never sees
        records another process adds: reading their vectors fails ("Error finding id") and its
        nearest-neighbour queries miss them. A fresh client loads the index as committed on disk.
        The previous client is kept until the next reconnection, so searches still running on it
        finish; the one before that is released.
        """
        if self._reopen is None:
            return
        try:
            client = self._reopen()
        except Exception as err:
            raise StoreError(f"cannot reopen the Chroma store: {err}") from err
        previous = self._client
        self._open_collections(client)
        self._retired = [previous]
        self._reopened()
        log.info("store_reopened", reason="index changed by another process")

    def _reopened(self) -> None:
        """Hook: the collections were replaced by ``_reconnect`` (subclasses rebind their readers)."""

    # Reading the committed state -------------------------------------------------------------------

    @property
    def version(self) -> str:
        return self._snapshot.version

    def committed_hashes(self) -> dict[str, str]:
        """document id -> committed content hash (refreshed from the registry)."""
        self.refresh()
        return dict(self._snapshot.hashes)

    def _read_version(self) -> str:
        try:
            result = self._registry.get(ids=[STATE_ID], include=["metadatas"])
        except Exception as err:
            raise StoreError(f"cannot read the index registry: {err}") from err
        if not result["ids"]:
            return ""
        return str((result["metadatas"][0] or {}).get("version", ""))

    def refresh(self) -> None:
        """Catch up with commits made by any process: registry snapshot and BM25 index."""
        self._version_read_at = self._clock()
        version = self._read_version()
        if version == self._snapshot.version:
            return
        with self._read_lock:
            if version == self._snapshot.version:
                return
            if self._snapshot.version:  # not the first load: another process committed
                self._reconnect()
            self._catch_up(version)

    def refresh_if_due(self) -> None:
        """``refresh`` unless the version was read less than ``refresh_interval`` seconds ago.

        Searches call this: reading the version is a Chroma round trip (about 0.5 ms), and another
        process's commit may be seen up to the interval late. Writes, counts and ``committed_hashes``
        refresh at once, so this process always sees its own commits.
        """
        if self._clock() - self._version_read_at >= self._refresh_interval:
            self.refresh()

    def _catch_up(self, version: str) -> None:
        """Bring the snapshot and the BM25 index to the committed state, read consistently.

        The registry is read between two reads of the version record (which every commit writes
        last); if a commit landed in between, it is read again. The changed documents' passages are
        then read and counted against the registry's passage counts: a document whose count falls
        short was superseded (its old passages deleted) after the registry was read, so everything is
        read again at the newer version. Nothing is applied until a consistent read is in hand.
        """
        for _ in range(CATCH_UP_ATTEMPTS):
            hashes, counts, quarantined = self._read_registry()
            latest = self._read_version()
            if latest != version:
                version = latest
                continue
            previous = self._snapshot.hashes
            first_load = not previous and not len(self._lexical)
            cached = self._load_lexical(version) if first_load else None
            if cached is not None:
                self._lexical = cached
                by_document: dict[str, list[str]] = {}
                for rid in cached_ids(cached):
                    by_document.setdefault(document_of_record(rid), []).append(rid)
                self._records_by_document = by_document
                self._snapshot = Snapshot(version, hashes, counts, quarantined)
                log.debug("index_refreshed", version=version, documents=len(hashes), cached=True)
                return
            changed = [d for d, h in hashes.items() if previous.get(d) != h]
            rows = self._committed_rows(changed, hashes)
            found: dict[str, int] = {}
            for document_id, *_ in rows:
                found[document_id] = found.get(document_id, 0) + 1
            short = [d for d in changed if counts.get(d) and found.get(d, 0) < counts[d]]
            if short:
                latest = self._read_version()
                if latest != version:  # superseded while being read: read the newer version
                    version = latest
                    continue
                log.warning("index_incomplete", documents=short[:10], missing=len(short))
            gone = [d for d in previous if d not in hashes or hashes[d] != previous[d]]
            for document_id in gone:
                self._lexical.remove(self._records_by_document.pop(document_id, []))
            for document_id, rid, title, text, tier, org in rows:
                self._lexical.add(rid, text, tier, org, title)
                self._records_by_document.setdefault(document_id, []).append(rid)
            self._save_lexical(version)
            self._snapshot = Snapshot(version, hashes, counts, quarantined)
            log.debug("index_refreshed", version=version, documents=len(hashes))
            return
        raise StoreError("the knowledge index kept changing while it was read; try again")

    def _read_registry(self) -> tuple[dict[str, str], dict[str, int], dict[str, int]]:
        hashes: dict[str, str] = {}
        counts: dict[str, int] = {}
        quarantined: dict[str, int] = {}
        try:
            for _, meta in self._scan(self._registry, include=["metadatas"]):
                if meta.get("kind") == "document":
                    hashes[str(meta["document_id"])] = str(meta["doc_hash"])
                    counts[str(meta["document_id"])] = int(meta.get("passages", 0))
                    quarantined[str(meta["document_id"])] = int(meta.get("quarantined", 0))
        except Exception as err:
            raise StoreError(f"cannot read the index registry: {err}") from err
        return hashes, counts, quarantined

    def _committed_rows(
        self, document_ids: Sequence[str], hashes: dict[str, str]
    ) -> list[tuple[str, str, str, str, str, str]]:
        """(document id, record id, title, BM25 text, tier, org) of the committed passages of
        ``document_ids``."""
        if not document_ids:
            return []
        wanted = set(document_ids)
        if len(wanted) > 200:
            rows: Iterable[tuple[str, dict[str, Any], str]] = self._scan_passages(None)
        else:
            rows = self._scan_passages({"document_id": {"$in": sorted(wanted)}})
        found: list[tuple[str, str, str, str, str, str]] = []
        for rid, meta, text in rows:
            document_id = str(meta.get("document_id", ""))
            if document_id not in wanted or hashes.get(document_id) != meta.get("doc_hash"):
                continue
            found.append(
                (
                    document_id,
                    rid,
                    str(meta.get("title", "")),
                    lexical_text(str(meta.get("section", "")), text),
                    str(meta.get("tier", "")),
                    str(meta.get("org", "")),
                )
            )
        return found

    def committed_record_ids(self, version: str) -> list[str]:
        """Every committed passage record id at index ``version`` (IndexMoved: the index moved on)."""
        with self._read_lock:
            if self._snapshot.version != version:
                raise IndexMoved(version)
            return [rid for rids in self._records_by_document.values() for rid in rids]

    def _scan(
        self, collection: Any, include: list[str], where: dict[str, Any] | None = None
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        offset = 0
        while True:
            page = collection.get(where=where, include=include, limit=PAGE, offset=offset)
            for rid, meta in zip(page["ids"], page["metadatas"] or [{}] * len(page["ids"]), strict=True):
                yield rid, meta or {}
            if len(page["ids"]) < PAGE:
                return
            offset += PAGE

    def _scan_passages(self, where: dict[str, Any] | None) -> Iterator[tuple[str, dict[str, Any], str]]:
        offset = 0
        while True:
            try:
                page = self._passages.get(
                    where=where, include=["metadatas", "documents"], limit=PAGE, offset=offset
                )
            except Exception as err:
                raise StoreError(f"cannot read passages: {err}") from err
            yield from zip(page["ids"], page["metadatas"], page["documents"], strict=True)
            if len(page["ids"]) < PAGE:
                return
            offset += PAGE

    def _lexical_path(self, version: str) -> Path | None:
        if self._cache_dir is None or not version:
            return None
        return self._cache_dir / f"{self._collection}.bm25.npz"

    def _load_lexical(self, version: str) -> LexicalIndex | None:
        path = self._lexical_path(version)
        return LexicalIndex.load(path, version, self._title_weight) if path else None

    def _save_lexical(self, version: str) -> None:
        path = self._lexical_path(version)
        if path is None:
            return
        try:
            self._lexical.save(path, version)
        except OSError as err:  # a cache: failing to write it only costs the next start-up
            log.warning("lexical_cache_not_saved", path=str(path), error=str(err))

    def searches_ready(self) -> None:
        """Hook: an ingest run has committed; ready what searches derive from the index before it
        ends (``ChromaStore``: the query planner's lexicon), so no search has to."""

    def save_lexical_cache(self) -> None:
        """Persist the BM25 index for the current version (the next start-up loads it)."""
        with self._read_lock:
            self._save_lexical(self._snapshot.version)
