"""The knowledge store: passages with provenance and sentence embeddings in Chroma, searched hybrid.

Three collections, all under the configured name ``<name>``:

``<name>``
    One record per passage (chunk), embedded as "title - section: text". The record id is the
    chunk id plus the document's content hash (``paracetamol:1.0@3f9a...``), so a changed document's
    new passages never overwrite the old ones in place. ``Passage.id`` is the stable chunk id.
``<name>_vectors``
    One record per passage with its sentence embeddings (float16, base64) for the local verifier.
``<name>_registry``
    The commit log: one record per document naming its *committed* content hash, plus a ``__state__``
    record whose ``version`` changes at every commit.

Readers only see passages whose (document, hash) is committed in the registry. A writer stores a
document's new passages first, then flips its registry record (one record: atomic), then deletes
the superseded passages. So a reader sees the old version or the new one, never a mix or a gap, and
a run killed half-way leaves the previous index fully searchable; its orphans are collected later.

Search is hybrid: Chroma's dense ANN and an in-process BM25 index (``lexical.py``) built from the
committed passages, fused by reciprocal rank and optionally re-ranked on sentence windows
(``fusion.py``). ``Passage.score`` is the dense cosine relevance (see fusion.py for why). The BM25
index follows the registry's version: each search checks the version (one small read) and applies
the changes another process committed; it is saved beside the index (``<data_dir>/lexical``) keyed
by that version, so a restart does not re-read every passage. Chroma runs embedded
(PersistentClient, the default) or as a server (HttpClient); both are driven through this class.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

import anyio.to_thread
import numpy as np
import structlog

from gateway.domain import Passage, Span, Vector
from gateway.errors import StoreError
from gateway.knowledge.chunking import Chunk
from gateway.knowledge.corpus import SourceDocument
from gateway.knowledge.embedding import Embedder, MiniLMEmbeddingFunction
from gateway.knowledge.fusion import best_window_cosine, fuse_lists, relevance
from gateway.knowledge.lexical import LexicalIndex
from gateway.knowledge.query import Lexicon, PlannedQuery, QueryPlanner, model_words
from gateway.knowledge.titles import TitleIndex, title_record_id
from gateway.settings import RetrievalMode, Settings

log = structlog.get_logger("gateway.knowledge")

STATE_ID = "__state__"
_PAGE = 5000
"""Records per Chroma read/write call (Chroma's batch limit is larger; this bounds memory)."""
_DUMMY = [1.0]
"""The registry and vector collections are never searched; their records carry a 1-d placeholder."""
_HNSW = {"space": "cosine", "ef_construction": 64, "batch_size": 2000, "sync_threshold": 5000}
"""Passage ANN index: cosine; a larger write batch makes bulk ingestion cheaper."""


@dataclass(frozen=True)
class SearchFilters:
    """Restrict a search to passages of the listed tiers and/or organisations (empty: no limit)."""

    tiers: tuple[str, ...] = ()
    orgs: tuple[str, ...] = ()

    def where(self) -> dict[str, Any] | None:
        clauses: list[dict[str, Any]] = []
        if self.tiers:
            clauses.append({"tier": {"$in": list(self.tiers)}})
        if self.orgs:
            clauses.append({"org": {"$in": list(self.orgs)}})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}


@dataclass(frozen=True)
class SearchOptions:
    """How ``search`` ranks. Defaults are what the gateway serves with."""

    mode: RetrievalMode = "hybrid"
    """hybrid (dense + BM25, fused), dense only, or lexical only."""
    candidates: int = 30
    """Candidates taken from each retriever before fusion."""
    rerank: bool = False
    """Re-order the fused top ``rerank_depth`` by MiniLM cosine on sentence windows."""
    rerank_depth: int = 20
    """Fused candidates the re-ranker looks at."""
    focus: bool = True
    """Search the planned queries of the message (question focus, spelling, synonyms; query.py)
    when the store has a planner; off: the message as it is."""
    question_matching: bool = True
    """Also match the query against document titles (titles.py), fused with the other lists."""


class KnowledgeStore(Protocol):
    async def search(self, query: str, k: int, filters: SearchFilters | None = None) -> list[Passage]: ...

    async def count(self) -> int: ...


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

    @property
    def record_ids(self) -> list[str]:
        return [record_id(c.id, self.document.content_hash) for c in self.chunks]


def record_id(chunk_id: str, content_hash: str) -> str:
    return f"{chunk_id}@{content_hash}"


def _chunk_document(chunk_id: str) -> str:
    """The document id inside a chunk id ``<document>:<section>.<chunk>``."""
    return chunk_id.rsplit(":", 1)[0]


def _looks_asked(query: str, planner: QueryPlanner | None) -> bool:
    """Whether an unplanned query asks something (see ``PlannedQuery.question``)."""
    if planner is not None:
        return planner.asks(query)
    first = query.strip().split(" ", 1)[0].lower()
    return "?" in query or first in _QUESTION_WORDS


_QUESTION_WORDS = frozenset(
    [
        "what",
        "how",
        "why",
        "when",
        "where",
        "which",
        "who",
        "is",
        "are",
        "can",
        "could",
        "should",
        "does",
        "do",
        "did",
        "will",
        "would",
    ]
)


def _chunk_order(rid: str) -> tuple[int, ...]:
    """Sort key of a record id by its ``<section>.<chunk>`` numbers (a document's first passage first)."""
    tail = rid.rsplit("@", 1)[0].rsplit(":", 1)[-1]
    try:
        return tuple(int(part) for part in tail.split("."))
    except ValueError:
        return (10**9,)


def _record_document(rid: str) -> str:
    """The document id inside a record id ``<document>:<section>.<chunk>@<hash>``."""
    return _chunk_document(rid.rsplit("@", 1)[0])


def _registry_id(document_id: str) -> str:
    return f"doc:{document_id}"


def _lexical_text(title: str, section: str, text: str) -> str:
    """What BM25 indexes: the passage with its document title and section heading."""
    return f"{title} {section} {text}"


def encode_vectors(matrix: Vector) -> str:
    return base64.b64encode(np.asarray(matrix, dtype=np.float16).tobytes()).decode("ascii")


def decode_vectors(blob: str, dimensions: int) -> Vector:
    raw = np.frombuffer(base64.b64decode(blob), dtype=np.float16)
    return raw.reshape(-1, dimensions).astype(np.float32)


@dataclass
class _Snapshot:
    """What this process believes is committed: the registry version and each document's hash."""

    version: str = ""
    hashes: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    """Passages per committed document."""


class ChromaStore:
    def __init__(
        self,
        client: Any,
        collection: str,
        embedder: Embedder,
        options: SearchOptions | None = None,
        cache_dir: Path | None = None,
        planner: QueryPlanner | None = None,
    ) -> None:
        self._embedder = embedder
        self.options = options or SearchOptions()
        self.planner = planner
        self._lexicon: tuple[str, Lexicon] | None = None
        self._collection = collection
        self._cache_dir = cache_dir
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._snapshot = _Snapshot()
        self._lexical = LexicalIndex()
        self._records_by_document: dict[str, list[str]] = {}
        self.path: Path | None = None
        """The embedded store's directory (None for a Chroma server); ``gateway.health`` checks it."""
        function = MiniLMEmbeddingFunction(embedder)
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
                )
            )
        except Exception as err:
            raise StoreError(f"cannot open Chroma collection {collection!r}: {err}") from err
        self.refresh()

    @classmethod
    def open(
        cls,
        settings: Settings,
        embedder: Embedder,
        options: SearchOptions | None = None,
        planner: QueryPlanner | None = None,
    ) -> ChromaStore:
        """Embedded (``chroma_path``) or server (``chroma_url``) store; ``options`` default from settings."""
        if options is None:
            options = SearchOptions(mode=settings.retrieval_mode, rerank=settings.retrieval_rerank)
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
                key = hashlib.sha256(settings.chroma_url.encode("utf-8")).hexdigest()[:12]
                cache_dir = settings.data_dir / "lexical" / f"server-{key}"
            else:
                path = settings.resolved_chroma_path
                path.mkdir(parents=True, exist_ok=True)
                client = chromadb.PersistentClient(path=str(path), settings=chroma_settings)
                cache_dir = path / "lexical"
        except Exception as err:
            raise StoreError(f"cannot reach the Chroma store: {err}") from err
        store = cls(
            client, settings.collection, embedder, options=options, cache_dir=cache_dir, planner=planner
        )
        store.path = None if settings.chroma_url else settings.resolved_chroma_path
        return store

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
        version = self._read_version()
        if version == self._snapshot.version:
            return
        with self._read_lock:
            if version == self._snapshot.version:
                return
            self._catch_up(version)

    def _catch_up(self, version: str) -> None:
        hashes: dict[str, str] = {}
        counts: dict[str, int] = {}
        try:
            for _, meta in self._scan(self._registry, include=["metadatas"]):
                if meta.get("kind") == "document":
                    hashes[str(meta["document_id"])] = str(meta["doc_hash"])
                    counts[str(meta["document_id"])] = int(meta.get("passages", 0))
        except Exception as err:
            raise StoreError(f"cannot read the index registry: {err}") from err
        previous = self._snapshot.hashes
        first_load = not previous and not len(self._lexical)
        cached = self._load_lexical(version) if first_load else None
        if cached is not None:
            self._lexical = cached
            self._records_by_document = {}
            for rid in cached_ids(cached):
                self._records_by_document.setdefault(_record_document(rid), []).append(rid)
        else:
            changed = [d for d, h in hashes.items() if previous.get(d) != h]
            gone = [d for d in previous if d not in hashes or hashes[d] != previous[d]]
            for document_id in gone:
                self._lexical.remove(self._records_by_document.pop(document_id, []))
            self._index_documents(changed, hashes)
            self._save_lexical(version)
        self._snapshot = _Snapshot(version=version, hashes=hashes, counts=counts)
        log.debug("index_refreshed", version=version, documents=len(hashes))

    def _index_documents(self, document_ids: Sequence[str], hashes: dict[str, str]) -> None:
        """Add the committed passages of ``document_ids`` to the BM25 index."""
        if not document_ids:
            return
        wanted = set(document_ids)
        if len(wanted) > 200:
            rows: Iterable[tuple[str, dict[str, Any], str]] = self._scan_passages(None)
        else:
            rows = self._scan_passages({"document_id": {"$in": sorted(wanted)}})
        for rid, meta, text in rows:
            document_id = str(meta.get("document_id", ""))
            if document_id not in wanted or hashes.get(document_id) != meta.get("doc_hash"):
                continue
            self._lexical.add(
                rid,
                _lexical_text(str(meta.get("title", "")), str(meta.get("section", "")), text),
                str(meta.get("tier", "")),
                str(meta.get("org", "")),
            )
            self._records_by_document.setdefault(document_id, []).append(rid)

    def _scan(
        self, collection: Any, include: list[str], where: dict[str, Any] | None = None
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        offset = 0
        while True:
            page = collection.get(where=where, include=include, limit=_PAGE, offset=offset)
            for rid, meta in zip(page["ids"], page["metadatas"] or [{}] * len(page["ids"]), strict=True):
                yield rid, meta or {}
            if len(page["ids"]) < _PAGE:
                return
            offset += _PAGE

    def _scan_passages(self, where: dict[str, Any] | None) -> Iterator[tuple[str, dict[str, Any], str]]:
        offset = 0
        while True:
            try:
                page = self._passages.get(
                    where=where, include=["metadatas", "documents"], limit=_PAGE, offset=offset
                )
            except Exception as err:
                raise StoreError(f"cannot read passages: {err}") from err
            yield from zip(page["ids"], page["metadatas"], page["documents"], strict=True)
            if len(page["ids"]) < _PAGE:
                return
            offset += _PAGE

    def _lexical_path(self, version: str) -> Path | None:
        if self._cache_dir is None or not version:
            return None
        return self._cache_dir / f"{self._collection}.bm25.npz"

    def _load_lexical(self, version: str) -> LexicalIndex | None:
        path = self._lexical_path(version)
        return LexicalIndex.load(path, version) if path else None

    def _save_lexical(self, version: str) -> None:
        path = self._lexical_path(version)
        if path is None:
            return
        try:
            self._lexical.save(path, version)
        except OSError as err:  # a cache: failing to write it only costs the next start-up
            log.warning("lexical_cache_not_saved", path=str(path), error=str(err))

    # Searching ------------------------------------------------------------------------------------

    async def count(self) -> int:
        return await anyio.to_thread.run_sync(self.count_sync)

    def count_sync(self) -> int:
        """Committed passages (uncommitted or superseded records are not counted)."""
        self.refresh()
        return sum(self._snapshot.counts.values())

    async def search(self, query: str, k: int, filters: SearchFilters | None = None) -> list[Passage]:
        return await anyio.to_thread.run_sync(self.search_sync, query, k, filters)

    def search_sync(
        self,
        query: str,
        k: int,
        filters: SearchFilters | None = None,
        options: SearchOptions | None = None,
    ) -> list[Passage]:
        """The ``k`` best committed passages for ``query``; ``score`` is the dense cosine relevance.

        With a planner (and ``options.focus``) the message is first turned into its planned queries
        (query.py); every query is searched by each retriever and all the ranked lists are fused by
        reciprocal rank, so each question of a message gets its passages. A passage's score is its
        best cosine against any of the queries.
        """
        options = options or self.options
        filters = filters or SearchFilters()
        self.refresh()
        hashes = self._snapshot.hashes
        if not hashes:
            return []
        plans = self.plan(query, options)
        vectors = self._embedder.encode([p.text for p in plans])  # one batch for every query
        width = max(k, options.candidates)
        records: dict[str, tuple[str, dict[str, Any], float]] = {}
        lists: list[list[str]] = []
        if options.mode != "lexical":
            for hits in self._dense(vectors, width, filters):
                ranked: list[str] = []
                for rid, text, meta, cosine in hits:
                    if hashes.get(str(meta.get("document_id"))) == meta.get("doc_hash"):
                        if rid not in records or records[rid][2] < cosine:
                            records[rid] = (text, meta, cosine)
                        ranked.append(rid)
                lists.append(ranked)
        if options.mode != "dense":
            with self._read_lock:
                for plan in plans:
                    found = self._lexical.search(plan.lexical, width, filters.tiers, filters.orgs)
                    lists.append([h.record_id for h in found])
        asking = [i for i, p in enumerate(plans) if p.question]
        if options.question_matching and options.mode != "lexical" and asking:
            lists.extend(self._title_lists(vectors[asking], width, filters, lists))
        fused = fuse_lists(lists)
        depth = max(k, options.rerank_depth) if options.rerank else k
        top = fused[:depth]
        self._fetch_missing([rid for rid in top if rid not in records], vectors, records)
        top = [rid for rid in top if rid in records]
        sentence_vectors = self._sentence_vectors(top)
        if options.rerank:
            key = {
                rid: 0.5 * records[rid][2]
                + 0.5
                * max(best_window_cosine(v, sentence_vectors.get(rid)) or records[rid][2] for v in vectors)
                for rid in top
            }
            top = sorted(top, key=lambda rid: -key[rid])
        return [
            _passage(records[rid][1], records[rid][0], relevance(records[rid][2]), sentence_vectors.get(rid))
            for rid in top[:k]
        ]

    def plan(self, query: str, options: SearchOptions | None = None) -> list[PlannedQuery]:
        """The queries searched for ``query``: the planner's (see query.py), or ``query`` itself."""
        options = options or self.options
        if self.planner is not None and options.focus:
            plans = self.planner.plan(query, self._current_lexicon())
            if plans:
                return plans
        return [PlannedQuery(query, query, _looks_asked(query, self.planner))]

    def _current_lexicon(self) -> Lexicon | None:
        """The planner's view of the indexed vocabulary, rebuilt when the committed index changes."""
        if self.planner is None:
            return None
        with self._read_lock:
            version = self._snapshot.version
            if self._lexicon is None or self._lexicon[0] != version:
                dictionary = model_words(getattr(self._embedder, "model_path", None))
                self._lexicon = (version, self.planner.lexicon(self._lexical.vocabulary(), dictionary))
            return self._lexicon[1]

    def _title_lists(
        self, vectors: Vector, width: int, filters: SearchFilters, lists: list[list[str]]
    ) -> list[list[str]]:
        """Per query, the passages of the documents whose titles are nearest the question.

        A matched document counts through one passage: its best-ranked one among the other lists,
        else its first passage. Tier and org filters are applied through the BM25 index's labels.
        """
        hashes = self._snapshot.hashes
        ranked_elsewhere = {rid: rank for ranked in lists for rank, rid in enumerate(ranked)}
        result: list[list[str]] = []
        for hits in self._titles.query(vectors, width, None):
            ranked: list[str] = []
            with self._read_lock:
                for hit in hits:
                    if hashes.get(hit.document_id) != hit.doc_hash:
                        continue
                    rids = [
                        r for r in self._records_by_document.get(hit.document_id, ()) if r in self._lexical
                    ]
                    if not rids or not self._lexical.allowed(rids[0], filters.tiers, filters.orgs):
                        continue
                    seen = [r for r in rids if r in ranked_elsewhere]
                    ranked.append(
                        min(seen, key=ranked_elsewhere.__getitem__) if seen else min(rids, key=_chunk_order)
                    )
            result.append(ranked)
        return result

    def _dense(
        self, vectors: Vector, width: int, filters: SearchFilters
    ) -> list[list[tuple[str, str, dict[str, Any], float]]]:
        try:
            result = self._passages.query(
                query_embeddings=np.asarray(vectors, dtype=np.float32),
                n_results=width + 8,
                where=filters.where(),
                include=["documents", "metadatas", "distances"],
            )
        except Exception as err:
            raise StoreError(f"passage query failed: {err}") from err
        return [
            [
                (rid, text, meta or {}, 1.0 - float(distance))
                for rid, text, meta, distance in zip(ids, texts, metas, distances, strict=True)
            ]
            for ids, texts, metas, distances in zip(
                result["ids"], result["documents"], result["metadatas"], result["distances"], strict=True
            )
        ]

    def _fetch_missing(
        self, ids: list[str], vectors: Vector, records: dict[str, tuple[str, dict[str, Any], float]]
    ) -> None:
        """Passages not found densely: read them with their embedding to score them (best query)."""
        if not ids:
            return
        try:
            result = self._passages.get(ids=ids, include=["documents", "metadatas", "embeddings"])
        except Exception as err:
            raise StoreError(f"passage lookup failed: {err}") from err
        for rid, text, meta, embedding in zip(
            result["ids"], result["documents"], result["metadatas"], result["embeddings"], strict=True
        ):
            cosine = float(
                (np.asarray(vectors, dtype=np.float32) @ np.asarray(embedding, dtype=np.float32)).max()
            )
            records[rid] = (text, meta or {}, cosine)

    def _sentence_vectors(self, ids: list[str]) -> dict[str, Vector]:
        if not ids:
            return {}
        try:
            result = self._vectors.get(ids=ids, include=["metadatas"])
        except Exception as err:
            raise StoreError(f"sentence vector lookup failed: {err}") from err
        dimensions = self._embedder.dimensions
        return {
            rid: decode_vectors(str(meta["vectors"]), dimensions)
            for rid, meta in zip(result["ids"], result["metadatas"], strict=True)
            if meta and meta.get("vectors")
        }

    def get_sync(self, passage_ids: Sequence[str]) -> list[Passage]:
        """Committed passages by chunk id (score 1.0), in the order asked; unknown ids are skipped."""
        self.refresh()
        hashes = self._snapshot.hashes
        wanted = [
            record_id(pid, hashes[_chunk_document(pid)])
            for pid in passage_ids
            if _chunk_document(pid) in hashes
        ]
        if not wanted:
            return []
        try:
            result = self._passages.get(ids=wanted, include=["documents", "metadatas"])
        except Exception as err:
            raise StoreError(f"passage lookup failed: {err}") from err
        vectors = self._sentence_vectors(list(result["ids"]))
        found = {
            str(meta["chunk_id"]): _passage(meta, text, 1.0, vectors.get(rid))
            for rid, text, meta in zip(result["ids"], result["documents"], result["metadatas"], strict=True)
        }
        return [found[p] for p in passage_ids if p in found]

    def attach_sentence_vectors(self, passages: list[Passage]) -> list[Passage]:
        """Compatibility: passages from ``search``/``get_sync`` already carry their sentence vectors."""
        missing = [p.id for p in passages if p.sentence_vectors is None]
        if not missing:
            return passages
        found = {p.id: p for p in self.get_sync(missing)}
        return [
            replace(p, sentence_vectors=found[p.id].sentence_vectors) if p.id in found else p
            for p in passages
        ]

    # Writing --------------------------------------------------------------------------------------

    def upsert_documents(self, documents: Iterable[SourceDocument]) -> IngestSummary:
        """Add new documents, replace changed ones, skip unchanged ones (by content hash)."""
        from gateway.knowledge.ingest import Ingestor

        return Ingestor(self, self._embedder).run(documents).summary

    def write(self, prepared: Sequence[PreparedDocument]) -> int:
        """Store the passages of ``prepared`` under their versioned ids, *without* committing them."""
        ids: list[str] = []
        embeddings: list[Vector] = []
        texts: list[str] = []
        metadatas: list[dict[str, Any]] = []
        vector_meta: list[dict[str, Any]] = []
        for item in prepared:
            for index, chunk in enumerate(item.chunks):
                ids.append(record_id(chunk.id, item.document.content_hash))
                embeddings.append(item.passage_vectors[index])
                texts.append(chunk.text)
                metadatas.append(_metadata(item.document, chunk))
                vector_meta.append(
                    {
                        "document_id": item.document.id,
                        "doc_hash": item.document.content_hash,
                        "vectors": encode_vectors(item.sentence_vectors[index]),
                    }
                )
        titled = [p for p in prepared if p.title_vector is not None]
        with self._write_lock:
            try:
                if titled:
                    self._titles.upsert(
                        [title_record_id(p.document.id, p.document.content_hash) for p in titled],
                        np.stack([np.asarray(p.title_vector, dtype=np.float32) for p in titled]),
                        [{"document_id": p.document.id, "doc_hash": p.document.content_hash} for p in titled],
                    )
                for start in range(0, len(ids), _PAGE):
                    end = start + _PAGE
                    self._vectors.upsert(
                        ids=ids[start:end],
                        embeddings=[_DUMMY] * len(ids[start:end]),
                        metadatas=vector_meta[start:end],
                    )
                    self._passages.upsert(
                        ids=ids[start:end],
                        embeddings=np.asarray(embeddings[start:end], dtype=np.float32),
                        documents=texts[start:end],
                        metadatas=metadatas[start:end],
                    )
            except Exception as err:
                raise StoreError(f"cannot write passages: {err}") from err
        return len(ids)

    def commit(self, prepared: Sequence[PreparedDocument], source: str = "") -> None:
        """Make the written versions of ``prepared`` the visible ones, then drop what they replace.

        The registry records flip in one upsert; this process's snapshot and BM25 index are updated
        in place (other processes catch up through the version). One writer at a time per store.
        """
        if not prepared:
            return
        with self._write_lock:
            previous = dict(self._snapshot.hashes)
            try:
                self._registry.upsert(
                    ids=[_registry_id(p.document.id) for p in prepared],
                    embeddings=[_DUMMY] * len(prepared),
                    metadatas=[
                        {
                            "kind": "document",
                            "document_id": p.document.id,
                            "doc_hash": p.document.content_hash,
                            "passages": len(p.chunks),
                            "title": p.document.title,
                            "source": source,
                            "committed_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                        }
                        for p in prepared
                    ],
                )
                version = self._bump_version()
            except Exception as err:
                raise StoreError(f"cannot commit documents: {err}") from err
            with self._read_lock:
                hashes = dict(self._snapshot.hashes)
                counts = dict(self._snapshot.counts)
                for item in prepared:
                    document = item.document
                    self._lexical.remove(self._records_by_document.pop(document.id, []))
                    rids = item.record_ids
                    for rid, chunk in zip(rids, item.chunks, strict=True):
                        self._lexical.add(
                            rid,
                            _lexical_text(document.title, chunk.section, chunk.text),
                            document.tier,
                            document.org,
                        )
                    self._records_by_document[document.id] = rids
                    hashes[document.id] = document.content_hash
                    counts[document.id] = len(item.chunks)
                self._snapshot = _Snapshot(version=version, hashes=hashes, counts=counts)
            replaced = {
                p.document.id: p.document.content_hash
                for p in prepared
                if previous.get(p.document.id) not in (None, p.document.content_hash)
            }
            self._drop_superseded(replaced)

    def save_lexical_cache(self) -> None:
        """Persist the BM25 index for the current version (the next start-up loads it)."""
        with self._read_lock:
            self._save_lexical(self._snapshot.version)

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        """Remove documents: first from the registry (readers stop seeing them), then their records."""
        with self._write_lock:
            known = self.committed_hashes()
            present = [d for d in document_ids if d in known]
            if present:
                try:
                    self._registry.delete(ids=[_registry_id(d) for d in present])
                    self._bump_version()
                except Exception as err:
                    raise StoreError(f"cannot delete documents: {err}") from err
                self._drop_superseded(dict.fromkeys(present, ""))
        self.refresh()
        return len(present)

    def collect_garbage(self) -> int:
        """Delete records no commit refers to (left by an interrupted run). Returns how many."""
        with self._write_lock:
            hashes = self.committed_hashes()
            orphans = [
                rid
                for rid, meta in self._scan(self._passages, include=["metadatas"])
                if hashes.get(str(meta.get("document_id"))) != meta.get("doc_hash")
            ]
            orphans += [
                rid
                for rid, meta in self._scan(self._vectors, include=[])
                if _record_document(rid) not in hashes
                or not rid.endswith("@" + hashes[_record_document(rid)])
            ]
            self._delete_ids(sorted(set(orphans)))
            stale_titles = [
                rid
                for rid, meta in self._titles.ids()
                if hashes.get(str(meta.get("document_id"))) != meta.get("doc_hash")
            ]
            self._delete_titles(stale_titles)
            return len(set(orphans)) + len(stale_titles)

    def _bump_version(self) -> str:
        version = uuid.uuid4().hex
        self._registry.upsert(
            ids=[STATE_ID], embeddings=[_DUMMY], metadatas=[{"kind": "state", "version": version}]
        )
        return version

    def _drop_superseded(self, current: dict[str, str]) -> None:
        """Delete the records of ``current``'s documents whose hash is not the current one."""
        names = sorted(current)
        stale: list[str] = []
        for start in range(0, len(names), 500):
            where = {"document_id": {"$in": names[start : start + 500]}}
            for rid, meta in self._scan(self._passages, include=["metadatas"], where=where):
                if meta.get("doc_hash") != current.get(str(meta.get("document_id"))):
                    stale.append(rid)
        self._delete_ids(stale)
        stale_titles: list[str] = []
        for start in range(0, len(names), 500):
            where = {"document_id": {"$in": names[start : start + 500]}}
            for rid, meta in self._titles.ids(where):
                if meta.get("doc_hash") != current.get(str(meta.get("document_id"))):
                    stale_titles.append(rid)
        self._delete_titles(stale_titles)

    def _delete_titles(self, ids: list[str]) -> None:
        try:
            self._titles.delete(ids)
        except Exception as err:
            raise StoreError(f"cannot delete superseded titles: {err}") from err

    def backfill_titles(self) -> int:
        """Write the title record of every committed document that has none (an index built before
        question matching, or a run interrupted between writes). Returns how many were written."""
        self.refresh()
        hashes = self._snapshot.hashes
        if self._titles.count() >= len(hashes):
            return 0
        present = {rid for rid, _ in self._titles.ids()}
        missing: dict[str, str] = {}
        for _, meta in self._scan(self._registry, include=["metadatas"]):
            document_id = str(meta.get("document_id", ""))
            if meta.get("kind") != "document" or hashes.get(document_id) != meta.get("doc_hash"):
                continue
            if title_record_id(document_id, hashes[document_id]) not in present:
                missing[document_id] = str(meta.get("title", ""))
        if not missing:
            return 0
        texts = list(dict.fromkeys(missing.values()))
        encoded = dict(zip(texts, self._embedder.encode(texts), strict=True))
        names = sorted(missing)
        with self._write_lock:
            try:
                self._titles.upsert(
                    [title_record_id(d, hashes[d]) for d in names],
                    np.stack([encoded[missing[d]] for d in names]),
                    [{"document_id": d, "doc_hash": hashes[d]} for d in names],
                )
            except Exception as err:
                raise StoreError(f"cannot write titles: {err}") from err
        log.info("titles_backfilled", documents=len(names))
        return len(names)

    def _delete_ids(self, ids: list[str]) -> None:
        try:
            for start in range(0, len(ids), _PAGE):
                self._passages.delete(ids=ids[start : start + _PAGE])
                self._vectors.delete(ids=ids[start : start + _PAGE])
        except Exception as err:
            raise StoreError(f"cannot delete superseded passages: {err}") from err


def cached_ids(index: LexicalIndex) -> list[str]:
    return [rid for rid in index._ids if rid in index]


def _metadata(document: SourceDocument, chunk: Chunk) -> dict[str, Any]:
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


def _passage(meta: dict[str, Any], text: str, score: float, vectors: Vector | None) -> Passage:
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
        score=score,
        doc_type=str(meta.get("doc_type", "article")),
        sentence_spans=spans,
        sentence_vectors=vectors,
    )
