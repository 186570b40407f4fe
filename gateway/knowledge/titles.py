"""Question matching: one MiniLM vector per document title, searched question-to-question.

Many vetted sections are titled by the question they answer (MedQuAD: "What are the treatments for
Gout ?"). A patient's question is closer to that title than to the passage text, whose wording is an
answer's. The title vector costs nothing extra at ingestion: a document without section headings has
its title as the heading its passage vectors are built from, and the ingestor encodes each distinct
text once (ingest.py).

Records live in ``<collection>_titles``: id ``<document id>@<content hash>`` (like passages, so a
changed document's new title never overwrites the committed one), metadata ``document_id``,
``doc_hash``, ``tier``, ``org``. Readers keep only hits whose (document, hash) is committed, exactly as
for passages; the store deletes superseded and orphaned title records with its passages.

Searching: a collection of up to ``EXACT_MAX_TITLES`` titles is searched exactly, in memory: its
vectors are read from Chroma once per index version (the version every commit changes) and each
question is one matrix product. That is the exact nearest titles, where Chroma's HNSW is approximate,
and it saves Chroma's query round trip (about 1 ms of a request at concurrency 1; docs/benchmarks.md).
A larger collection, or a query with a metadata filter, is asked of Chroma.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gateway.domain import Vector
from gateway.errors import StoreError

_PAGE = 5000
EXACT_MAX_TITLES = 20_000
"""Largest title collection searched in memory (30 MB of vectors; one product is under a millisecond)."""


@dataclass(frozen=True)
class _Loaded:
    """The title vectors of one index version, for exact search."""

    version: str
    ids: tuple[str, ...]
    vectors: np.ndarray


@dataclass(frozen=True)
class TitleHit:
    document_id: str
    doc_hash: str
    cosine: float


def title_record_id(document_id: str, content_hash: str) -> str:
    return f"{document_id}@{content_hash}"


def _hit(rid: str, distance: float) -> TitleHit:
    """A title record's hit, read from its id ``<document id>@<content hash>`` (no metadata read)."""
    document_id, _, doc_hash = rid.rpartition("@")
    return TitleHit(document_id, doc_hash, 1.0 - distance)


class TitleIndex:
    """The ``<collection>_titles`` Chroma collection (cosine HNSW)."""

    def __init__(self, collection: Any) -> None:
        self._collection = collection
        self._loaded: _Loaded | None = None
        self._loading = threading.Lock()

    def count(self) -> int:
        try:
            return int(self._collection.count())
        except Exception as err:
            raise StoreError(f"cannot count title records: {err}") from err

    def upsert(self, ids: Sequence[str], vectors: Vector, metadatas: Sequence[dict[str, Any]]) -> None:
        for start in range(0, len(ids), _PAGE):
            end = start + _PAGE
            self._collection.upsert(
                ids=list(ids[start:end]),
                embeddings=np.asarray(vectors[start:end], dtype=np.float32),
                metadatas=list(metadatas[start:end]),
            )

    def query(
        self, vectors: Vector, n: int, where: dict[str, Any] | None, version: str | None = None
    ) -> list[list[TitleHit]]:
        """The ``n`` nearest titles of each query vector (committed or not: the caller filters).

        With the index ``version`` and no filter, a small collection is searched exactly in memory.
        """
        if len(vectors) == 0 or n <= 0:
            return []
        loaded = self._exact(version) if version is not None and where is None else None
        if loaded is not None:
            return _nearest(loaded, np.asarray(vectors, dtype=np.float32), n)
        try:
            result = self._collection.query(
                query_embeddings=np.asarray(vectors, dtype=np.float32),
                n_results=n,
                where=where,
                include=["distances"],
            )
        except Exception as err:
            raise StoreError(f"title query failed: {err}") from err
        return [
            [_hit(rid, float(distance)) for rid, distance in zip(ids, distances, strict=True) if "@" in rid]
            for ids, distances in zip(result["ids"], result["distances"], strict=True)
        ]

    def _exact(self, version: str) -> _Loaded | None:
        """The title vectors of ``version`` (read from Chroma on its first search), or None when the
        collection is too large to hold."""
        loaded = self._loaded
        if loaded is not None and loaded.version == version:
            return loaded
        with self._loading:
            loaded = self._loaded
            if loaded is not None and loaded.version == version:
                return loaded
            if self.count() > EXACT_MAX_TITLES:
                return None
            ids: list[str] = []
            pages: list[np.ndarray] = []
            try:
                for offset in range(0, EXACT_MAX_TITLES + _PAGE, _PAGE):
                    page = self._collection.get(include=["embeddings"], limit=_PAGE, offset=offset)
                    ids += page["ids"]
                    pages.append(np.asarray(page["embeddings"], dtype=np.float32).reshape(-1, _width(page)))
                    if len(page["ids"]) < _PAGE:
                        break
            except Exception as err:
                raise StoreError(f"cannot read the title vectors: {err}") from err
            matrix = np.concatenate(pages) if pages else np.zeros((0, 0), dtype=np.float32)
            self._loaded = _Loaded(version, tuple(ids), matrix)
            return self._loaded

    def ids(self, where: dict[str, Any] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        offset = 0
        while True:
            page = self._collection.get(where=where, include=["metadatas"], limit=_PAGE, offset=offset)
            yield from zip(page["ids"], [m or {} for m in page["metadatas"]], strict=True)
            if len(page["ids"]) < _PAGE:
                return
            offset += _PAGE

    def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), _PAGE):
            self._collection.delete(ids=list(ids[start : start + _PAGE]))


def _width(page: dict[str, Any]) -> int:
    embeddings = page["embeddings"]
    return len(embeddings[0]) if len(embeddings) else 0


def _nearest(loaded: _Loaded, queries: np.ndarray, n: int) -> list[list[TitleHit]]:
    """Each query's ``n`` nearest titles by cosine (the stored vectors are unit length), best first."""
    if not loaded.ids:
        return [[] for _ in queries]
    cosines = queries @ loaded.vectors.T
    result: list[list[TitleHit]] = []
    for row in cosines:
        nearest = np.argpartition(-row, n - 1)[:n] if n < len(row) else np.arange(len(row))
        order = nearest[np.argsort(-row[nearest], kind="stable")]
        result.append([_hit(loaded.ids[i], 1.0 - float(row[i])) for i in order if "@" in loaded.ids[i]])
    return result
