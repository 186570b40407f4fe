"""How a passage is stored in Chroma: record ids, metadata, registry ids and encoded sentence vectors.

Shared by the reading side (``chroma_index``, ``store``) and the writing side (``chroma_writer``,
``ingest``); see ``store.py`` for the three collections and the commit protocol.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from gateway.domain import Passage, Span, Vector
from gateway.knowledge.chunking import Chunk
from gateway.knowledge.corpus import SourceDocument
from gateway.knowledge.lexical import LexicalIndex

STATE_ID = "__state__"
PAGE = 5000
"""Records per Chroma read/write call (Chroma's batch limit is larger; this bounds memory)."""
DUMMY_EMBEDDING = [1.0]
"""The registry and vector collections are never searched; their records carry a 1-d placeholder."""


class IndexMoved(Exception):  # control flow inside gateway.knowledge: outside the error tree
    """A read found the index changed under the version it was made for (records superseded and
    deleted by a newer commit). The store refreshes and tries once more; it never leaves the store."""


@dataclass(frozen=True)
class IngestSummary:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks_written: int = 0
    failed: tuple[tuple[str, str], ...] = ()
    """(document name, reason) of every document that was skipped."""


@dataclass(frozen=True)
class PreparedDocument:
    """A document chunked and embedded, ready to be written."""

    document: SourceDocument
    chunks: tuple[Chunk, ...]
    passage_vectors: Vector
    sentence_vectors: tuple[Vector, ...]
    title_vector: Vector | None = None
    """The document title's vector, for question matching (None: no title record is written)."""
    quarantined: int = 0
    """Sentences removed as instructions to a model or system (instructions.py); kept in the registry."""

    @property
    def record_ids(self) -> list[str]:
        return [record_id(c.id, self.document.content_hash) for c in self.chunks]


def record_id(chunk_id: str, content_hash: str) -> str:
    return f"{chunk_id}@{content_hash}"


def document_of_chunk(chunk_id: str) -> str:
    """The document id inside a chunk id ``<document>:<section>.<chunk>``."""
    return chunk_id.rsplit(":", 1)[0]


def chunk_order(rid: str) -> tuple[int, ...]:
    """Sort key of a record id by its ``<section>.<chunk>`` numbers (a document's first passage first)."""
    tail = rid.rsplit("@", 1)[0].rsplit(":", 1)[-1]
    try:
        return tuple(int(part) for part in tail.split("."))
    except ValueError:
        return (10**9,)


def document_of_record(rid: str) -> str:
    """The document id inside a record id ``<document>:<section>.<chunk>@<hash>``."""
    return document_of_chunk(rid.rsplit("@", 1)[0])


def committed(rid: str, hashes: dict[str, str]) -> bool:
    """Whether record ``rid`` belongs to its document's committed version (``hashes``: id -> hash)."""
    chunk_id, _, content_hash = rid.rpartition("@")
    return hashes.get(document_of_chunk(chunk_id)) == content_hash


def registry_id(document_id: str) -> str:
    return f"doc:{document_id}"


def lexical_text(section: str, text: str) -> str:
    """What BM25 indexes as the passage's text: its section heading and the passage (the document
    title is indexed beside it, weighted: ``LexicalIndex.add``)."""
    return f"{section} {text}"


def encode_vectors(matrix: Vector) -> str:
    return base64.b64encode(np.asarray(matrix, dtype=np.float16).tobytes()).decode("ascii")


def decode_vectors(blob: str, dimensions: int) -> Vector:
    raw = np.frombuffer(base64.b64decode(blob), dtype=np.float16)
    return raw.reshape(-1, dimensions).astype(np.float32)


def cached_ids(index: LexicalIndex) -> list[str]:
    return [rid for rid in index._ids if rid in index]


def record_metadata(document: SourceDocument, chunk: Chunk) -> dict[str, Any]:
    return {
        "chunk_id": chunk.id,
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


def record_passage(meta: dict[str, Any], text: str, score: float, vectors: Vector | None) -> Passage:
    """A stored record as the ``Passage`` retrieval returns: its score a Python float, never a numpy
    scalar, so the audit record encodes it as it is."""
    reviewed = str(meta.get("reviewed_on") or "")
    spans = tuple(Span(s, e) for s, e in json.loads(str(meta.get("sentence_spans", "[]"))))
    if vectors is not None and len(vectors) != len(spans):
        vectors = None
    return Passage(
        id=str(meta.get("chunk_id", "")),
        document_id=str(meta.get("document_id", "")),
        text=text,
        title=str(meta.get("title", "")),
        url=str(meta.get("url", "")),
        org=str(meta.get("org", "")),
        tier=str(meta.get("tier", "")),
        reviewed_on=dt.date.fromisoformat(reviewed) if reviewed else None,
        score=float(score),
        doc_type=str(meta.get("doc_type", "article")),
        sentence_spans=spans,
        sentence_vectors=vectors,
    )
