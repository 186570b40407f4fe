"""Exact nearest neighbours in memory over one Chroma collection's vectors, read once per index version.

For a collection of up to some thousands of records, one matrix product finds the exact nearest
vectors faster than a Chroma query finds approximate ones through its HNSW index (Chroma's call is
about 0.7 ms of Python and SQLite whatever the size; the product over 325 vectors takes 0.01 ms;
docs/benchmarks.md). The vectors are read from Chroma on the first search of each index version
(every commit changes the version), so a search never sees vectors older than the version it names.
Only the records committed at that version are read, by id: records a writer has stored but not yet
committed are never touched (an embedded client cannot read the vectors of records another process
added since it opened; chroma_index.py reopens it at each commit it sees).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gateway.domain import Vector
from gateway.errors import StoreError
from gateway.knowledge.records import IndexMoved

PAGE = 5000


@dataclass(frozen=True)
class _Loaded:
    """A collection's ids and unit vectors as of one index version."""

    version: str
    ids: tuple[str, ...]
    vectors: np.ndarray


class ExactVectors:
    """Exact cosine search over the vectors of ``collection`` (stored unit length), for ``what`` records."""

    def __init__(self, collection: Any, what: str, complete: bool = True) -> None:
        self._collection = collection
        self._what = what
        self._complete = complete
        """Every id asked must be found (else the index moved on: IndexMoved)."""
        self._loaded: _Loaded | None = None
        self._oversized: str | None = None
        """The last index version at which the collection held too many records to keep."""
        self._loading = threading.Lock()
        self.reads = 0
        """Times the vectors were read from Chroma (once per index version searched, unless forgotten)."""

    def rebind(self, collection: Any) -> None:
        """Read from ``collection`` from now on (the store was reopened); the next search reloads."""
        with self._loading:
            self._collection = collection
            self._loaded = None
            self._oversized = None

    def forget(self) -> None:
        """Drop the vectors held, as a fresh process has none: the next search reads them again."""
        with self._loading:
            self._loaded = None

    def nearest(
        self,
        queries: Vector,
        n: int,
        version: str,
        ids: Callable[[], Sequence[str]],
        max_records: int,
    ) -> list[list[tuple[str, float]]] | None:
        """Each query's ``n`` nearest record ids and cosines, best first; None when the version has
        more than ``max_records`` records (too many to keep in memory: ask Chroma). ``ids`` gives the
        records committed at ``version``; it is called only when the vectors are (re)loaded."""
        loaded = self._load(version, ids, max_records)
        if loaded is None:
            return None
        if not loaded.ids:
            return [[] for _ in queries]
        cosines = np.asarray(queries, dtype=np.float32) @ loaded.vectors.T
        result: list[list[tuple[str, float]]] = []
        for row in cosines:
            nearest = np.argpartition(-row, n - 1)[:n] if n < len(row) else np.arange(len(row))
            order = nearest[np.argsort(-row[nearest], kind="stable")]
            result.append([(loaded.ids[i], float(row[i])) for i in order])
        return result

    def loaded_version(self) -> str | None:
        """The index version whose vectors are held (None: none held)."""
        return self._loaded.version if self._loaded is not None else None

    def _load(self, version: str, ids: Callable[[], Sequence[str]], max_records: int) -> _Loaded | None:
        loaded = self._loaded
        if (loaded is None or loaded.version != version) and self._oversized != version:
            with self._loading:
                loaded = self._loaded
                if (loaded is None or loaded.version != version) and self._oversized != version:
                    loaded = self._read(version, list(ids()), max_records)
        if loaded is None or loaded.version != version or len(loaded.ids) > max_records:
            return None
        return loaded

    def _read(self, version: str, wanted: list[str], max_records: int) -> _Loaded | None:
        """Read the vectors of ``wanted`` from Chroma (None: more than ``max_records``, noted for
        ``version`` so that its searches do not count again)."""
        if len(wanted) > max_records:
            self._oversized = version
            return None
        self.reads += 1
        ids: list[str] = []
        pages: list[np.ndarray] = []
        try:
            for start in range(0, len(wanted), PAGE):
                page = self._collection.get(ids=wanted[start : start + PAGE], include=["embeddings"])
                if page["ids"]:
                    ids += page["ids"]
                    vectors = np.asarray(page["embeddings"], dtype=np.float32)
                    pages.append(vectors.reshape(len(page["ids"]), -1))
        except Exception as err:
            raise StoreError(f"cannot read the {self._what} vectors: {err}") from err
        if self._complete and len(ids) < len(set(wanted)):
            raise IndexMoved(version)  # committed records deleted: a newer commit superseded them
        matrix = np.concatenate(pages) if pages else np.zeros((0, 0), dtype=np.float32)
        self._loaded = _Loaded(version, tuple(ids), matrix)
        return self._loaded
