"""Reading a Chroma knowledge index as of one committed version: records by id, counts and the probe.

The record cache (``record_cache.py``) and the passage vectors held in memory (``exact.py``) that every
read goes through, instruction sentences dropped from every passage returned (``instructions.py``),
and a read retried once at the new version when another process committed under it (``IndexMoved``).
The hybrid search over these reads is ``store.ChromaStore``; see ``store.py`` for the whole design.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

import anyio.to_thread
import structlog

from gateway.domain import Passage
from gateway.errors import StoreError
from gateway.knowledge.chroma_index import IndexSettings
from gateway.knowledge.chroma_writer import ChromaWriter
from gateway.knowledge.exact import ExactVectors
from gateway.knowledge.instructions import InstructionDetector
from gateway.knowledge.record_cache import RecordCache
from gateway.knowledge.records import (
    IndexMoved,
    document_of_chunk,
    document_of_record,
    record_id,
    record_passage,
)

_T = TypeVar("_T")

log = structlog.get_logger("gateway.knowledge")


class ChromaReader(ChromaWriter):
    """A ``ChromaWriter`` whose committed passages are read consistently, through one record cache."""

    def __init__(self, index: IndexSettings, instructions: InstructionDetector | None = None) -> None:
        """``instructions``: the detector whose instruction sentences every passage returned drops (None:
        no check)."""
        self.instructions = instructions
        """Drops instruction sentences from every passage returned (instructions.py); None: no check."""
        super().__init__(index)
        self._records = RecordCache(self._passages, self._vectors, index.embedder.dimensions)
        self._exact_passages = ExactVectors(self._passages, "passage")

    def _reopened(self) -> None:
        records = getattr(self, "_records", None)
        if records is not None:  # None during the first open, before the readers exist
            records.rebind(self._passages, self._vectors)
            self._exact_passages.rebind(self._passages)

    # Read-only views of the parts (for tests and tools) ---------------------------------------------

    @property
    def record_cache(self) -> RecordCache:
        """The cache of passage records searches read through (``record_cache.py``)."""
        return self._records

    @property
    def exact_passages(self) -> ExactVectors:
        """The passage vectors held in memory for the exact dense search (``exact.py``)."""
        return self._exact_passages

    # Reading ------------------------------------------------------------------------------------

    async def count(self) -> int:
        return await anyio.to_thread.run_sync(self.count_sync)

    def count_sync(self) -> int:
        """Committed passages (uncommitted or superseded records are not counted)."""
        self.refresh()
        return sum(self._snapshot.counts.values())

    async def probe(self) -> int:
        """Committed passages, after proving one can be read as a search reads it (``/readyz``)."""
        return await anyio.to_thread.run_sync(self.probe_sync)

    def quarantined_count(self) -> int:
        """Sentences quarantined as instructions in the committed documents (ingest report)."""
        return sum(self._snapshot.quarantined.values())

    def _without_instructions(self, passages: list[Passage]) -> list[Passage]:
        if self.instructions is None:
            return passages
        cleaned = [self.instructions.clean_passage(p) for p in passages]
        return [p for p in cleaned if p is not None]

    def probe_sync(self) -> int:
        """Refresh, then read one committed passage record afresh (text, vector and sentence vectors);
        StoreError when that fails. Returns the committed passages."""
        passages = self.count_sync()
        with self._read_lock:
            sample = next((rids[0] for rids in self._records_by_document.values() if rids), None)
        if sample is not None:
            self._records.probe(sample)
        return passages

    def _consistent(self, read: Callable[[], _T]) -> _T:
        """``read()``; when it finds the index moved on or failed, refresh and, if another process
        committed meanwhile, read once more at the new version (else the failure stands)."""
        version = self._snapshot.version
        try:
            return read()
        except (IndexMoved, StoreError) as err:
            self.refresh()  # a store that cannot answer raises StoreError here
            if self._snapshot.version == version:
                if isinstance(err, StoreError):
                    raise
                raise StoreError("the knowledge index lost committed passages") from err
            log.info("search_retried", reason="index version changed")
        try:
            return read()
        except IndexMoved as err:
            raise StoreError("the knowledge index changed twice during one search; try again") from err

    def get_sync(self, passage_ids: Sequence[str]) -> list[Passage]:
        """Committed passages by chunk id (score 1.0), in the order asked; unknown ids are skipped."""
        self.refresh_if_due()
        return self._without_instructions(self._consistent(lambda: self._get(passage_ids)))

    def _get(self, passage_ids: Sequence[str]) -> list[Passage]:
        hashes = self._snapshot.hashes
        wanted = [
            record_id(pid, hashes[document_of_chunk(pid)])
            for pid in passage_ids
            if document_of_chunk(pid) in hashes
        ]
        stored = self._records.get(wanted)
        with self._read_lock:
            known = {r for rid in wanted for r in self._records_by_document.get(document_of_record(rid), ())}
        if any(rid not in stored and rid in known for rid in wanted):  # committed, yet gone: re-read
            raise IndexMoved(self._snapshot.version)
        found = {
            str(r.meta["chunk_id"]): record_passage(r.meta, r.text, 1.0, r.sentence_vectors)
            for r in stored.values()
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
