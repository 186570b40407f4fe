"""Writing a Chroma knowledge index: store passages, commit them in one registry flip, delete, collect.

A writer stores a document's new passages first (``write``), then flips its registry record
(``commit``: one record, atomic), then deletes the superseded passages; see ``store.py``.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
import structlog

from gateway.domain import Vector
from gateway.errors import StoreError
from gateway.knowledge.chroma_index import ChromaIndex, Snapshot
from gateway.knowledge.records import (
    DUMMY_EMBEDDING,
    PAGE,
    STATE_ID,
    PreparedDocument,
    document_of_record,
    encode_vectors,
    lexical_text,
    record_id,
    record_metadata,
    registry_id,
)
from gateway.knowledge.titles import title_record_id

log = structlog.get_logger("gateway.knowledge")


class ChromaWriter(ChromaIndex):
    """A ``ChromaIndex`` that can write, commit and delete documents. One writer at a time per store."""

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
                metadatas.append(record_metadata(item.document, chunk))
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
                for start in range(0, len(ids), PAGE):
                    end = start + PAGE
                    self._vectors.upsert(
                        ids=ids[start:end],
                        embeddings=[DUMMY_EMBEDDING] * len(ids[start:end]),
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
                    ids=[registry_id(p.document.id) for p in prepared],
                    embeddings=[DUMMY_EMBEDDING] * len(prepared),
                    metadatas=[
                        {
                            "kind": "document",
                            "document_id": p.document.id,
                            "doc_hash": p.document.content_hash,
                            "passages": len(p.chunks),
                            "quarantined": p.quarantined,
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
                quarantined = dict(self._snapshot.quarantined)
                for item in prepared:
                    document = item.document
                    self._lexical.remove(self._records_by_document.pop(document.id, []))
                    rids = item.record_ids
                    for rid, chunk in zip(rids, item.chunks, strict=True):
                        self._lexical.add(
                            rid,
                            lexical_text(chunk.section, chunk.text),
                            document.tier,
                            document.org,
                            document.title,
                        )
                    self._records_by_document[document.id] = rids
                    hashes[document.id] = document.content_hash
                    counts[document.id] = len(item.chunks)
                    quarantined[document.id] = item.quarantined
                self._snapshot = Snapshot(version, hashes, counts, quarantined)
            replaced = {
                p.document.id: p.document.content_hash
                for p in prepared
                if previous.get(p.document.id) not in (None, p.document.content_hash)
            }
            self._drop_superseded(replaced)

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        """Remove documents: first from the registry (readers stop seeing them), then their records."""
        with self._write_lock:
            known = self.committed_hashes()
            present = [d for d in document_ids if d in known]
            if present:
                try:
                    self._registry.delete(ids=[registry_id(d) for d in present])
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
                if document_of_record(rid) not in hashes
                or not rid.endswith("@" + hashes[document_of_record(rid)])
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
            ids=[STATE_ID], embeddings=[DUMMY_EMBEDDING], metadatas=[{"kind": "state", "version": version}]
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
            for start in range(0, len(ids), PAGE):
                self._passages.delete(ids=ids[start : start + PAGE])
                self._vectors.delete(ids=ids[start : start + PAGE])
        except Exception as err:
            raise StoreError(f"cannot delete superseded passages: {err}") from err
