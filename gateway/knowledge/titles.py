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

Searching: a collection of up to ``EXACT_MAX_TITLES`` titles is searched exactly, in memory
(exact.py): its vectors are read from Chroma once per index version (the version every commit
changes) and each question is one matrix product. That is the exact nearest titles, where Chroma's
HNSW is approximate, and it saves Chroma's query round trip (about 1 ms of a request at concurrency
1; docs/benchmarks.md).
A larger collection, or a query with a metadata filter, is asked of Chroma.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gateway.domain import Vector
from gateway.errors import StoreError
from gateway.knowledge.exact import PAGE, ExactVectors

EXACT_MAX_TITLES = 20_000
"""Largest title collection searched in memory (30 MB of vectors; one product is under a millisecond)."""


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

    def __init__(self, collection: Any, exact_max_titles: int = EXACT_MAX_TITLES) -> None:
        """``exact_max_titles``: above this many titles Chroma answers instead of the exact search."""
        self._collection = collection
        self._exact_max_titles = exact_max_titles
        self.exact = ExactVectors(collection, "title", complete=False)

    def count(self) -> int:
        try:
            return int(self._collection.count())
        except Exception as err:
            raise StoreError(f"cannot count title records: {err}") from err

    def upsert(self, ids: Sequence[str], vectors: Vector, metadatas: Sequence[dict[str, Any]]) -> None:
        for start in range(0, len(ids), PAGE):
            end = start + PAGE
            self._collection.upsert(
                ids=list(ids[start:end]),
                embeddings=np.asarray(vectors[start:end], dtype=np.float32),
                metadatas=list(metadatas[start:end]),
            )

    def query(
        self,
        vectors: Vector,
        n: int,
        where: dict[str, Any] | None,
        version: str | None = None,
        committed: Callable[[], dict[str, str]] | None = None,
    ) -> list[list[TitleHit]]:
        """The ``n`` nearest titles of each query vector (committed or not: the caller filters).

        With the index ``version``, the ``committed`` documents' hashes at that version and no filter,
        a small collection is searched exactly in memory (only committed titles are read).
        """
        if len(vectors) == 0 or n <= 0:
            return []
        found = None
        if version is not None and committed is not None and where is None:
            hashes = committed

            def ids() -> list[str]:
                return [title_record_id(d, h) for d, h in hashes().items()]

            found = self.exact.nearest(vectors, n, version, ids, self._exact_max_titles)
        if found is not None:
            return [[_hit(rid, 1.0 - cosine) for rid, cosine in hits if "@" in rid] for hits in found]
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

    def ids(self, where: dict[str, Any] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        offset = 0
        while True:
            page = self._collection.get(where=where, include=["metadatas"], limit=PAGE, offset=offset)
            yield from zip(page["ids"], [m or {} for m in page["metadatas"]], strict=True)
            if len(page["ids"]) < PAGE:
                return
            offset += PAGE

    def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), PAGE):
            self._collection.delete(ids=list(ids[start : start + PAGE]))
