"""Stored passages by record id, read from Chroma once and then kept in memory (bounded LRU).

A record id is ``<chunk id>@<content hash>`` and the hash covers everything a passage record stores
(records.py), so a record never changes under its id: a changed document is written under new ids.
That makes the cache safe without invalidation. Searching asks Chroma only for ids and distances and
reads text, metadata, passage embedding and sentence vectors here: a search over the bundled corpus
then makes two small Chroma queries instead of four calls that each decode metadata
(docs/benchmarks.md, "Retrieval round trips").
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from cachetools import LRUCache

from gateway.domain import Vector
from gateway.errors import StoreError
from gateway.knowledge.records import decode_vectors

DEFAULT_RECORDS = 4096
"""Records kept: about 5-20 kB each (text, metadata, one passage vector, its sentence vectors)."""


@dataclass(frozen=True)
class StoredRecord:
    """One passage record as Chroma stores it."""

    text: str
    meta: dict[str, Any]
    embedding: Vector
    sentence_vectors: Vector | None


class RecordCache:
    """Reads passage records (and their sentence vectors) through a thread-safe LRU cache."""

    def __init__(self, passages: Any, vectors: Any, dimensions: int, size: int = DEFAULT_RECORDS) -> None:
        self._passages = passages
        self._vectors = vectors
        self._dimensions = dimensions
        self._cache: LRUCache[str, StoredRecord] = LRUCache(maxsize=max(1, size))
        self._lock = threading.Lock()
        self.reads = 0
        """Chroma reads made so far (a cache miss costs two: passages and sentence vectors)."""

    def __len__(self) -> int:
        with self._lock:
            return len(self._cache)

    def rebind(self, passages: Any, vectors: Any) -> None:
        """Read from these collections from now on (the store was reopened); records stay cached,
        since a record never changes under its id."""
        with self._lock:
            self._passages = passages
            self._vectors = vectors

    def probe(self, rid: str) -> None:
        """Read record ``rid`` from Chroma, bypassing the cache; StoreError unless it is there."""
        if rid not in self._read([rid]):
            raise StoreError(f"passage record {rid} is committed but cannot be read")

    def get(self, ids: Sequence[str]) -> dict[str, StoredRecord]:
        """The stored records among ``ids`` (ids Chroma does not hold are left out)."""
        found: dict[str, StoredRecord] = {}
        with self._lock:
            for rid in ids:
                record = self._cache.get(rid)
                if record is not None:
                    found[rid] = record
        missing = list(dict.fromkeys(rid for rid in ids if rid not in found))
        if missing:
            read = self._read(missing)
            with self._lock:
                for rid, record in read.items():
                    self._cache[rid] = record
            found.update(read)
        return found

    def _read(self, ids: list[str]) -> dict[str, StoredRecord]:
        self.reads += 2
        with self._lock:
            passages, vectors = self._passages, self._vectors
        try:
            rows = passages.get(ids=ids, include=["documents", "metadatas", "embeddings"])
            sentences = vectors.get(ids=ids, include=["metadatas"])
        except Exception as err:
            raise StoreError(f"passage lookup failed: {err}") from err
        sentence_vectors = {
            rid: decode_vectors(str(meta["vectors"]), self._dimensions)
            for rid, meta in zip(sentences["ids"], sentences["metadatas"], strict=True)
            if meta and meta.get("vectors")
        }
        return {
            rid: StoredRecord(
                text=text,
                meta=meta or {},
                embedding=np.asarray(embedding, dtype=np.float32),
                sentence_vectors=sentence_vectors.get(rid),
            )
            for rid, text, meta, embedding in zip(
                rows["ids"], rows["documents"], rows["metadatas"], rows["embeddings"], strict=True
            )
        }
