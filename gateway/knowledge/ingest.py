"""Ingestion: loaded documents in, committed passages out, in batches, idempotently.

For each batch of new or changed documents: chunk them, encode every distinct sentence and heading once
(MiniLM, batched across documents), quarantine the sentences the instruction detector flags
(instructions.py: removed before anything is written, listed in the report), write the passages under
content-hash versioned ids, commit them (the registry flip), drop what they replaced. A passage's dense
vector is built from vectors the verifier needs anyway (see ``passage_vector``), so no passage is
encoded as a whole. Unchanged documents (same content hash as committed) cost nothing. A document that
cannot be chunked is reported and skipped; a failure of the store or the model stops the run, and
whatever was committed before stays usable.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from gateway.domain import Vector, unit_rows
from gateway.knowledge.chroma_writer import ChromaWriter
from gateway.knowledge.chunking import Chunk, chunk_document
from gateway.knowledge.corpus import SourceDocument
from gateway.knowledge.instructions import InstructionDetector, InstructionPolicy
from gateway.knowledge.loaders import Loaded, LoadFailure
from gateway.knowledge.records import IngestSummary, PreparedDocument
from gateway.models.embedding import Embedder

BATCH_DOCUMENTS = 256
"""Documents encoded and committed together: large enough to batch the model, small enough to stream."""


def heading_text(document: SourceDocument, chunk: Chunk) -> str:
    """The passage's topic: its document title, and its section heading when it has one."""
    return f"{document.title} - {chunk.section}" if chunk.section else document.title


def passage_vector(sentence_vectors: Vector, heading_vector: Vector) -> Vector:
    """Unit sum of the passage's unit mean sentence vector and its heading vector (equal weights).

    Encoding each passage whole would more than double the tokens MiniLM reads at ingest (passages
    overlap and run to ~150 tokens); content and topic from already-computed vectors rank as well on
    MedQuAD (docs/knowledge.md, "Passage vectors").
    """
    return unit_rows(unit_rows(sentence_vectors.mean(axis=0)) + heading_vector)


@dataclass
class IngestReport:
    summary: IngestSummary
    seconds: float = 0.0
    sentences: int = 0
    """Sentences in the written passages."""
    texts_encoded: int = 0
    """Distinct sentences and headings actually encoded (duplicates are encoded once)."""
    failures: list[LoadFailure] = field(default_factory=list)
    instructions: list[tuple[str, str]] = field(default_factory=list)
    """(document id, sentence) of every sentence quarantined as an instruction to a model or system
    (``instructions.py``: the policy's rules and exemplar bank). Not indexed; reported so a curator can
    remove it from the source."""


class Ingestor:
    def __init__(
        self,
        store: ChromaWriter,
        embedder: Embedder,
        batch_documents: int = BATCH_DOCUMENTS,
        progress: bool = False,
        source: str = "",
        instruction_patterns: tuple[str, ...] = (),
        detector: InstructionDetector | None = None,
    ) -> None:
        if detector is None and instruction_patterns:
            detector = InstructionDetector(instruction_patterns, InstructionPolicy(), None)
        self._detector = detector
        self._store = store
        self._embedder = embedder
        self._batch = max(1, batch_documents)
        self._progress = progress
        self._source = source

    def run(
        self,
        items: Iterable[Loaded],
        *,
        prune: bool = False,
        delete: Iterable[str] = (),
        total: int | None = None,
    ) -> IngestReport:
        """Ingest ``items``; with ``prune``, delete committed documents not among them."""
        from tqdm import tqdm

        started = time.perf_counter()
        committed = self._store.committed_hashes()
        report = IngestReport(IngestSummary())
        counts = {"added": 0, "updated": 0, "unchanged": 0, "written": 0}
        seen: set[str] = set()
        pending: list[SourceDocument] = []
        bar = tqdm(total=total, disable=not self._progress, unit="doc", desc="ingest", dynamic_ncols=True)
        try:
            for item in items:
                bar.update(1)
                if isinstance(item, LoadFailure):
                    report.failures.append(item)
                    if item.document_id:
                        seen.add(item.document_id)
                    continue
                if item.id in seen:
                    report.failures.append(LoadFailure(item.id, "duplicate document id in this run", item.id))
                    continue
                seen.add(item.id)
                if committed.get(item.id) == item.content_hash:
                    counts["unchanged"] += 1
                    continue
                pending.append(item)
                if len(pending) >= self._batch:
                    self._flush(pending, committed, counts, report)
                    pending = []
                    bar.set_postfix(written=counts["written"], failed=len(report.failures))
            self._flush(pending, committed, counts, report)
        finally:
            bar.close()
        deleted = 0
        doomed = [d for d in delete if d]
        if prune:
            doomed += [d for d in committed if d not in seen]
        if doomed:
            deleted = self._store.delete_documents(sorted(set(doomed)))
        if counts["written"] or deleted:
            self._store.collect_garbage()
        self._store.backfill_titles()
        self._store.save_lexical_cache()
        self._store.searches_ready()
        report.summary = IngestSummary(
            added=counts["added"],
            updated=counts["updated"],
            unchanged=counts["unchanged"],
            deleted=deleted,
            chunks_written=counts["written"],
            failed=tuple((f.name, f.reason) for f in report.failures),
        )
        report.seconds = time.perf_counter() - started
        return report

    def _flush(
        self,
        documents: list[SourceDocument],
        committed: dict[str, str],
        counts: dict[str, int],
        report: IngestReport,
    ) -> None:
        chunked: list[tuple[SourceDocument, list[Chunk]]] = []
        for document in documents:
            try:
                chunks = chunk_document(document)
            except (ValueError, IndexError) as err:
                report.failures.append(LoadFailure(document.id, f"cannot be chunked: {err}", document.id))
                continue
            if not chunks:
                report.failures.append(LoadFailure(document.id, "no text left after cleaning", document.id))
                continue
            chunked.append((document, chunks))
        if not chunked:
            return
        prepared = self.prepare(chunked, report)
        counts["written"] += self._store.write(prepared)
        self._store.commit(prepared, source=self._source)
        for item in prepared:
            counts["updated" if item.document.id in committed else "added"] += 1

    def prepare(
        self, chunked: list[tuple[SourceDocument, list[Chunk]]], report: IngestReport | None = None
    ) -> list[PreparedDocument]:
        """Encode the distinct sentences, headings and titles of a batch of documents, in one pass.

        A title is usually also a heading (a document without sections), so it costs no encoding.
        """
        text_index: dict[str, int] = {}
        title_rows = [text_index.setdefault(document.title, len(text_index)) for document, _ in chunked]
        heading_rows: list[int] = []
        sentence_rows: list[list[int]] = []
        for document, chunks in chunked:
            for chunk in chunks:
                heading_rows.append(text_index.setdefault(heading_text(document, chunk), len(text_index)))
                sentence_rows.append(
                    [
                        text_index.setdefault(chunk.text[s.start : s.end], len(text_index))
                        for s in chunk.sentence_spans
                    ]
                )
        vectors = self._embedder.encode(list(text_index))
        sentence_vectors = [vectors[rows] for rows in sentence_rows]
        if report is not None:
            report.sentences += sum(len(r) for r in sentence_rows)
            report.texts_encoded += len(text_index)
        prepared: list[PreparedDocument] = []
        row = 0
        for (document, chunks), title_row in zip(chunked, title_rows, strict=True):
            kept: list[Chunk] = []
            kept_vectors: list[Vector] = []
            kept_passages: list[Vector] = []
            quarantined = 0
            for offset, chunk in enumerate(chunks):
                matrix = sentence_vectors[row + offset]
                if self._detector is not None:
                    cleaned, matrix, dropped = self._detector.clean_chunk(chunk, matrix)
                    quarantined += len(dropped)
                    if report is not None:
                        report.instructions += [(document.id, text) for text in dropped]
                    if cleaned is None:
                        continue
                    chunk = cleaned
                kept.append(chunk)
                kept_vectors.append(matrix)
                kept_passages.append(passage_vector(matrix, vectors[heading_rows[row + offset]]))
            row += len(chunks)
            if not kept:
                continue  # nothing but instructions: the document is not written (reported above)
            prepared.append(
                PreparedDocument(
                    document=document,
                    chunks=tuple(kept),
                    passage_vectors=np.stack(kept_passages),
                    sentence_vectors=tuple(kept_vectors),
                    title_vector=vectors[title_row],
                    quarantined=quarantined,
                )
            )
        return prepared
