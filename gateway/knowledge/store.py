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

Search is hybrid: dense nearest passages and an in-process BM25 index (``lexical.py``) built from the
committed passages, fused by reciprocal rank and optionally re-ranked on sentence windows
(``fusion.py``). ``Passage.score`` is the dense cosine relevance (see fusion.py for why). The BM25
index follows the registry's version: a search checks the version (one small read, at most once per
``GATEWAY_INDEX_REFRESH_SECONDS``) and applies the changes another process committed; it is saved
beside the index (``<data_dir>/lexical``) keyed by that version, so a restart does not re-read every
passage. The dense search of a collection of up to ``EXACT_MAX_PASSAGES`` passages is exact, in
memory (``exact.py``: the vectors read once per index version); a larger one, or a search with a tier
or organisation filter, asks Chroma's HNSW index. Chroma runs embedded
(PersistentClient, the default) or as a server (HttpClient); both are driven through this class.

The store is layered by job: ``chroma_client.py`` (the embedded or server client), ``records.py``
(record ids, metadata, encoded vectors), ``chroma_index.ChromaIndex`` (the collections and the
committed state, BM25 kept in step), ``chroma_writer.ChromaWriter`` (write, commit, delete, collect),
``chroma_reader.ChromaReader`` (consistent reads of the committed records: by id, counts, the probe)
and ``ChromaStore`` here (search).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Protocol

import anyio.to_thread
import numpy as np

from gateway.domain import Passage, Vector
from gateway.errors import StoreError
from gateway.knowledge.chroma_client import connect
from gateway.knowledge.chroma_index import IndexSettings, Snapshot
from gateway.knowledge.chroma_reader import ChromaReader
from gateway.knowledge.corpus import SourceDocument
from gateway.knowledge.fusion import best_window_cosine, fuse_lists, relevance
from gateway.knowledge.ingest import Ingestor
from gateway.knowledge.instructions import InstructionDetector
from gateway.knowledge.lexical import LexicalIndex, Vocabulary
from gateway.knowledge.lexicons import LexiconKeeper
from gateway.knowledge.query import PlannedQuery, QueryPlanner, load_planner, model_words
from gateway.knowledge.records import (
    IndexMoved,
    IngestSummary,
    PreparedDocument,
    chunk_order,
    committed,
    record_passage,
)
from gateway.knowledge.search_options import SearchFilters, SearchOptions
from gateway.knowledge.titles import EXACT_MAX_TITLES, TitleIndex
from gateway.models.embedding import Embedder
from gateway.resources import bundled
from gateway.settings import Settings
from gateway.text import load_question_words

EXACT_MAX_PASSAGES = 10_000
"""Largest passage collection whose dense search is exact, in memory (15 MB of vectors). Chroma's query
costs about 0.7 ms whatever the size; the product takes 0.01 ms over 325 passages and 1.3 ms over
45,000 (docs/benchmarks.md), so past some ten thousand Chroma's HNSW is the faster."""


class KnowledgeStore(Protocol):
    async def search(self, query: str, k: int, filters: SearchFilters | None = None) -> list[Passage]: ...

    async def count(self) -> int: ...


def _looks_asked(query: str, planner: QueryPlanner | None, asking: frozenset[str]) -> bool:
    """Whether an unplanned query asks something (see ``PlannedQuery.question``): the planner's reading,
    else a question mark or one of the ``asking`` words first."""
    if planner is not None:
        return planner.asks(query)
    first = query.strip().split(" ", 1)[0].lower()
    return "?" in query or first in asking


def _policy_planner(settings: Settings) -> QueryPlanner:
    """The configured policy directory's planner (else the bundled one), as the gateway loads it."""
    return load_planner(settings.policy_dir or bundled("policies"), fallback=bundled("policies"))


class ChromaStore(ChromaReader):
    """The knowledge store the gateway searches: a ``ChromaReader`` with hybrid search."""

    def __init__(
        self,
        index: IndexSettings,
        options: SearchOptions | None = None,
        planner: QueryPlanner | None = None,
        instructions: InstructionDetector | None = None,
        exact_max_passages: int = EXACT_MAX_PASSAGES,
    ) -> None:
        """``index``: the index to open (its ``title_weight``, the BM25 weight of a document's title, is
        the planner's ``query.yaml`` ``bm25_title_weight``: ``open`` sets it); ``exact_max_passages``:
        above this many passages Chroma answers the dense search (``index.exact_max_titles``: the title
        search). Without a ``planner`` the question words are read here, when the store is built."""
        self._exact_max_passages = exact_max_passages
        self.options = options or SearchOptions()
        self.planner = planner
        self._asking = load_question_words() if planner is None else frozenset()
        self._lexicons: LexiconKeeper | None = None
        if planner is not None:
            dictionary = model_words(getattr(index.embedder, "model_path", None))
            self._lexicons = LexiconKeeper(self._vocabulary, partial(planner.lexicon, dictionary=dictionary))
        super().__init__(index, instructions)

    @classmethod
    def open(
        cls,
        settings: Settings,
        embedder: Embedder,
        options: SearchOptions | None = None,
        planner: QueryPlanner | None = None,
        exact_max_passages: int = EXACT_MAX_PASSAGES,
        exact_max_titles: int = EXACT_MAX_TITLES,
        *,
        instructions: InstructionDetector,
        clock: Callable[[], float] = time.monotonic,
    ) -> ChromaStore:
        """Embedded (``chroma_path``) or server (``chroma_url``) store; ``options`` default from settings;
        ``instructions`` the quarantine's detector (``bootstrap.open_store`` builds it from the policy).

        Without a ``planner`` (``ingest``) the BM25 title weight is still the policy's, so the BM25
        cache an ingest saves is the one the gateway loads."""
        if options is None:
            options = SearchOptions(mode=settings.retrieval_mode, rerank=settings.retrieval_rerank)
        connection = connect(settings)
        index = IndexSettings(
            connection.client,
            settings.collection,
            embedder,
            cache_dir=connection.cache_dir,
            refresh_interval=settings.index_refresh_seconds,
            reopen=connection.reopen,
            title_weight=(planner or _policy_planner(settings)).words.bm25_title_weight,
            exact_max_titles=exact_max_titles,
            clock=clock,
        )
        store = cls(
            index,
            options=options,
            planner=planner,
            instructions=instructions,
            exact_max_passages=exact_max_passages,
        )
        store.path = None if settings.chroma_url else settings.resolved_chroma_path
        return store

    # Read-only views of the parts (for tests and tools; the search code uses the attributes) --------

    @property
    def titles(self) -> TitleIndex:
        """The document titles' index (question matching, ``titles.py``)."""
        return self._titles

    @property
    def lexical(self) -> LexicalIndex:
        """The in-process BM25 index, at the committed version."""
        return self._lexical

    def dense_hits(
        self, vectors: Vector, width: int, filters: SearchFilters, version: str
    ) -> list[list[tuple[str, float]]]:
        """The dense retriever alone: per query vector, (record id, cosine) of its nearest passages."""
        return self._dense(vectors, width, filters, version)

    # Searching ------------------------------------------------------------------------------------

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
        self.refresh_if_due()
        return self._without_instructions(self._consistent(lambda: self._search(query, k, filters, options)))

    def _search(self, query: str, k: int, filters: SearchFilters, options: SearchOptions) -> list[Passage]:
        snapshot = self._snapshot
        hashes = snapshot.hashes
        if not hashes:
            return []
        plans = self.plan(query, options)
        vectors = self._embedder.encode([p.text for p in plans])  # one batch for every query
        width = max(k, options.candidates)
        cosines: dict[str, float] = {}
        lists: list[list[str]] = []
        if options.mode != "lexical":
            for hits in self._dense(vectors, width, filters, snapshot.version):
                ranked: list[str] = []
                for rid, cosine in hits:
                    if committed(rid, hashes):
                        cosines[rid] = max(cosine, cosines.get(rid, cosine))
                        ranked.append(rid)
                lists.append(ranked)
        if options.mode != "dense":
            with self._read_lock:
                for plan in plans:
                    found = self._lexical.search(plan.lexical, width, filters.tiers, filters.orgs)
                    lists.append([h.record_id for h in found])
        asking = [i for i, p in enumerate(plans) if p.question]
        if options.question_matching and options.mode != "lexical" and asking:
            lists.extend(self._title_lists(vectors[asking], width, filters, lists, snapshot))
        fused = self._by_section_kind(plans, lists)
        depth = max(k, options.rerank_depth) if options.rerank else k
        stored = self._records.get(fused[:depth])
        if any(rid not in stored for rid in fused[:depth]):
            raise IndexMoved(snapshot.version)  # committed at our version, deleted since: re-read
        top = fused[:depth]
        for rid in top:
            if rid not in cosines:  # found by BM25 or its title only: score it against the best query
                cosines[rid] = float((np.asarray(vectors, dtype=np.float32) @ stored[rid].embedding).max())
        if options.rerank:
            key = {
                rid: 0.5 * cosines[rid]
                + 0.5
                * max(best_window_cosine(v, stored[rid].sentence_vectors) or cosines[rid] for v in vectors)
                for rid in top
            }
            top = sorted(top, key=lambda rid: -key[rid])
        return [
            record_passage(
                stored[rid].meta, stored[rid].text, relevance(cosines[rid]), stored[rid].sentence_vectors
            )
            for rid in top[:k]
        ]

    def _by_section_kind(self, plans: list[PlannedQuery], lists: list[list[str]]) -> list[str]:
        """The fused records, those headed by the kind of answer the questions ask moved up a little."""
        if self.planner is None:
            return fuse_lists(lists)
        with self._read_lock:
            return self.planner.order(plans, lists, self._lexical.title)

    def plan(self, query: str, options: SearchOptions | None = None) -> list[PlannedQuery]:
        """The queries searched for ``query``: the planner's (see query.py), or ``query`` itself."""
        options = options or self.options
        if self.planner is not None and options.focus:
            lexicon = self._lexicons.lexicon if self._lexicons is not None else None
            plans = self.planner.plan(query, lexicon)
            if plans:
                return plans
        return [PlannedQuery(query, query, _looks_asked(query, self.planner, self._asking))]

    # Keeping the planner's lexicon (lexicons.py) in step with the committed index ------------------

    @property
    def lexicons(self) -> LexiconKeeper | None:
        """The planner's lexicon per index version, built off the request path (None: no planner)."""
        return self._lexicons

    def _vocabulary(self) -> tuple[str, Vocabulary]:
        with self._read_lock:
            return self._snapshot.version, self._lexical.vocabulary()

    def refresh(self) -> None:
        """``ChromaIndex.refresh``; a version committed by another process gets its lexicon built in
        the background (the first one, at open, at once)."""
        super().refresh()
        if self._lexicons is not None:
            self._lexicons.follow(self._snapshot.version)

    def commit(self, prepared: Sequence[PreparedDocument], source: str = "") -> None:
        """``ChromaWriter.commit``; the new version's lexicon is built in the background, and at the
        end of an ingest run at once (``searches_ready``)."""
        super().commit(prepared, source)
        if self._lexicons is not None:
            self._lexicons.follow(self._snapshot.version)

    def searches_ready(self) -> None:
        """Wait for a background lexicon build, then build the committed version's if still missing."""
        if self._lexicons is not None:
            self._lexicons.wait()
            self._lexicons.follow(self._snapshot.version, now=True)

    def _title_lists(
        self,
        vectors: Vector,
        width: int,
        filters: SearchFilters,
        lists: list[list[str]],
        snapshot: Snapshot,
    ) -> list[list[str]]:
        """Per query, the passages of the documents whose titles are nearest the question.

        A matched document counts through one passage: its best-ranked one among the other lists,
        else its first passage. Tier and org filters are applied through the BM25 index's labels.
        """
        hashes = snapshot.hashes
        ranked_elsewhere: dict[str, int] = {}  # each record's best rank in any list (not its last)
        for ranked_list in lists:
            for rank, rid in enumerate(ranked_list):
                ranked_elsewhere[rid] = min(rank, ranked_elsewhere.get(rid, rank))
        result: list[list[str]] = []
        for hits in self._titles.query(vectors, width, None, snapshot.version, lambda: hashes):
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
                        min(seen, key=ranked_elsewhere.__getitem__) if seen else min(rids, key=chunk_order)
                    )
            result.append(ranked)
        return result

    def _dense(
        self, vectors: Vector, width: int, filters: SearchFilters, version: str
    ) -> list[list[tuple[str, float]]]:
        """Per query, the nearest passage records and their cosines (ids only: text is read if kept)."""
        where = filters.where()
        if where is None:
            found = self._exact_passages.nearest(
                vectors,
                width + 8,
                version,
                partial(self.committed_record_ids, version),
                self._exact_max_passages,
            )
            if found is not None:
                return found
        try:
            result = self._passages.query(
                query_embeddings=np.asarray(vectors, dtype=np.float32),
                n_results=width + 8,
                where=where,
                include=["distances"],
            )
        except Exception as err:
            raise StoreError(f"passage query failed: {err}") from err
        return [
            [(rid, 1.0 - float(distance)) for rid, distance in zip(ids, distances, strict=True)]
            for ids, distances in zip(result["ids"], result["distances"], strict=True)
        ]

    # Writing --------------------------------------------------------------------------------------

    def upsert_documents(self, documents: Iterable[SourceDocument]) -> IngestSummary:
        """Add new documents, replace changed ones, skip unchanged ones (by content hash)."""
        return Ingestor(self, self._embedder, detector=self.instructions).run(documents).summary
