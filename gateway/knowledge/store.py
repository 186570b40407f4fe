"""The knowledge store: passages with their provenance and sentence embeddings, in Chroma.

Two collections: ``<name>`` holds one record per passage (embedded as "title - section: text"), and
``<name>_sentences`` one record per passage sentence, whose embeddings the local verifier reuses so
that request-time work is the claims only. Chroma runs embedded (PersistentClient, the default) or as
a server (HttpClient); both are driven through the same class.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol
from urllib.parse import urlparse

import anyio.to_thread
import numpy as np

from gateway.domain import Passage, Span
from gateway.errors import StoreError
from gateway.knowledge.chunking import Chunk, chunk_document
from gateway.knowledge.corpus import SourceDocument
from gateway.knowledge.embedding import Embedder, MiniLMEmbeddingFunction
from gateway.settings import Settings

_WRITE_BATCH = 2000


class KnowledgeStore(Protocol):
    async def search(self, query: str, k: int) -> list[Passage]: ...

    async def count(self) -> int: ...


@dataclass(frozen=True)
class IngestSummary:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks_written: int = 0


def _relevance(distance: float) -> float:
    """Cosine distance (0..2) to a relevance in 0..1 (the cosine similarity, floored at 0)."""
    return float(min(1.0, max(0.0, 1.0 - distance)))


class ChromaStore:
    def __init__(self, client: Any, collection: str, embedder: Embedder) -> None:
        self._embedder = embedder
        self._lock = threading.Lock()
        function = MiniLMEmbeddingFunction(embedder)
        try:
            self._passages = client.get_or_create_collection(
                collection, embedding_function=function, configuration={"hnsw": {"space": "cosine"}}
            )
            self._sentences = client.get_or_create_collection(
                f"{collection}_sentences",
                embedding_function=function,
                configuration={"hnsw": {"space": "cosine"}},
            )
        except Exception as err:
            raise StoreError(f"cannot open Chroma collection {collection!r}: {err}") from err

    @classmethod
    def open(cls, settings: Settings, embedder: Embedder) -> ChromaStore:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        chroma_settings = ChromaSettings(anonymized_telemetry=False)
        try:
            if settings.chroma_url:
                url = urlparse(settings.chroma_url)
                client = chromadb.HttpClient(
                    host=url.hostname or "127.0.0.1",
                    port=url.port or (443 if url.scheme == "https" else 8000),
                    ssl=url.scheme == "https",
                    settings=chroma_settings,
                )
            else:
                path = settings.resolved_chroma_path
                path.mkdir(parents=True, exist_ok=True)
                client = chromadb.PersistentClient(path=str(path), settings=chroma_settings)
        except Exception as err:
            raise StoreError(f"cannot reach the Chroma store: {err}") from err
        return cls(client, settings.collection, embedder)

    async def count(self) -> int:
        return await anyio.to_thread.run_sync(self.count_sync)

    def count_sync(self) -> int:
        try:
            return int(self._passages.count())
        except Exception as err:
            raise StoreError(f"cannot count passages: {err}") from err

    async def search(self, query: str, k: int) -> list[Passage]:
        return await anyio.to_thread.run_sync(self.search_sync, query, k)

    def search_sync(self, query: str, k: int) -> list[Passage]:
        vector = self._embedder.encode([query])
        try:
            result = self._passages.query(
                query_embeddings=vector, n_results=k, include=["documents", "metadatas", "distances"]
            )
        except Exception as err:
            raise StoreError(f"passage query failed: {err}") from err
        ids = result["ids"][0]
        passages = [
            _passage(pid, text, meta, _relevance(dist))
            for pid, text, meta, dist in zip(
                ids, result["documents"][0], result["metadatas"][0], result["distances"][0], strict=True
            )
        ]
        return self.attach_sentence_vectors(passages)

    def get_sync(self, passage_ids: Sequence[str]) -> list[Passage]:
        """Passages by id (score 1.0), in the order asked; unknown ids are skipped."""
        try:
            result = self._passages.get(ids=list(passage_ids), include=["documents", "metadatas"])
        except Exception as err:
            raise StoreError(f"passage lookup failed: {err}") from err
        found = {
            pid: _passage(pid, text, meta, 1.0)
            for pid, text, meta in zip(result["ids"], result["documents"], result["metadatas"], strict=True)
        }
        return self.attach_sentence_vectors([found[p] for p in passage_ids if p in found])

    def attach_sentence_vectors(self, passages: list[Passage]) -> list[Passage]:
        if not passages:
            return passages
        try:
            result = self._sentences.get(
                where={"chunk_id": {"$in": [p.id for p in passages]}}, include=["embeddings", "metadatas"]
            )
        except Exception as err:
            raise StoreError(f"sentence lookup failed: {err}") from err
        rows: dict[str, list[tuple[int, Any]]] = {}
        for meta, vector in zip(result["metadatas"], result["embeddings"], strict=True):
            rows.setdefault(str(meta["chunk_id"]), []).append((int(meta["index"]), vector))
        attached = []
        for passage in passages:
            found = sorted(rows.get(passage.id, []), key=lambda r: r[0])
            if len(found) == len(passage.sentence_spans) and found:
                matrix = np.asarray([v for _, v in found], dtype=np.float32)
                passage = replace(passage, sentence_vectors=matrix)
            attached.append(passage)
        return attached

    def document_hashes(self) -> dict[str, str]:
        result = self._passages.get(include=["metadatas"])
        return {str(m["document_id"]): str(m["doc_hash"]) for m in result["metadatas"]}

    def upsert_documents(self, documents: Iterable[SourceDocument]) -> IngestSummary:
        """Add new documents, replace changed ones, skip unchanged ones (by content hash)."""
        with self._lock:
            existing = self.document_hashes()
            added = updated = unchanged = written = 0
            for document in documents:
                previous = existing.get(document.id)
                if previous == document.content_hash:
                    unchanged += 1
                    continue
                written += self._write_document(document)
                if previous is None:
                    added += 1
                else:
                    updated += 1
            return IngestSummary(added=added, updated=updated, unchanged=unchanged, chunks_written=written)

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        with self._lock:
            for document_id in document_ids:
                self._passages.delete(where={"document_id": document_id})
                self._sentences.delete(where={"document_id": document_id})
            return len(document_ids)

    def _write_document(self, document: SourceDocument) -> int:
        chunks = chunk_document(document)
        old_ids = set(self._passages.get(where={"document_id": document.id}, include=[])["ids"])
        if old_ids:
            self._sentences.delete(where={"document_id": document.id})
        if chunks:
            self._write_chunks(document, chunks)
        stale = sorted(old_ids - {c.id for c in chunks})
        if stale:
            self._passages.delete(ids=stale)
            self._sentences.delete(where={"chunk_id": {"$in": stale}})
        return len(chunks)

    def _write_chunks(self, document: SourceDocument, chunks: list[Chunk]) -> None:
        passage_vectors = self._embedder.encode(
            [
                f"{document.title} - {c.section}: {c.text}" if c.section else f"{document.title}: {c.text}"
                for c in chunks
            ]
        )
        sentence_ids: list[str] = []
        sentence_texts: list[str] = []
        sentence_meta: list[dict[str, Any]] = []
        for chunk in chunks:
            for index, span in enumerate(chunk.sentence_spans):
                sentence_ids.append(f"{chunk.id}/{index}")
                sentence_texts.append(chunk.text[span.start : span.end])
                sentence_meta.append({"chunk_id": chunk.id, "document_id": document.id, "index": index})
        sentence_vectors = self._embedder.encode(sentence_texts)
        for start in range(0, len(sentence_ids), _WRITE_BATCH):
            end = start + _WRITE_BATCH
            self._sentences.upsert(
                ids=sentence_ids[start:end],
                embeddings=sentence_vectors[start:end],
                documents=sentence_texts[start:end],
                metadatas=sentence_meta[start:end],
            )
        self._passages.upsert(
            ids=[c.id for c in chunks],
            embeddings=passage_vectors,
            documents=[c.text for c in chunks],
            metadatas=[_metadata(document, c) for c in chunks],
        )


def _metadata(document: SourceDocument, chunk: Chunk) -> dict[str, Any]:
    return {
        "document_id": document.id,
        "title": document.title,
        "url": document.url,
        "org": document.org,
        "tier": document.tier,
        "doc_type": document.doc_type,
        "reviewed_on": document.reviewed_on.isoformat() if document.reviewed_on else "",
        "section": chunk.section,
        "doc_hash": document.content_hash,
        "sentence_spans": json.dumps([[s.start, s.end] for s in chunk.sentence_spans]),
    }


def _passage(passage_id: str, text: str, meta: dict[str, Any], score: float) -> Passage:
    reviewed = str(meta.get("reviewed_on") or "")
    return Passage(
        id=passage_id,
        document_id=str(meta.get("document_id", "")),
        text=text,
        title=str(meta.get("title", "")),
        url=str(meta.get("url", "")),
        org=str(meta.get("org", "")),
        tier=str(meta.get("tier", "")),
        reviewed_on=dt.date.fromisoformat(reviewed) if reviewed else None,
        score=score,
        doc_type=str(meta.get("doc_type", "article")),
        sentence_spans=tuple(Span(s, e) for s, e in json.loads(str(meta.get("sentence_spans", "[]")))),
    )
