"""The Chroma store: chunk ids, idempotent upserts, replacement and sentence vectors."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

from gateway.bootstrap import open_store
from gateway.knowledge.chunking import chunk_document, sections
from gateway.knowledge.corpus import SourceDocument
from gateway.settings import Settings

DOC = SourceDocument(
    id="gout",
    title="Gout",
    text="# Gout\n\n## Symptoms\nGout causes sudden severe pain in a joint,\noften the big toe.\n"
    "- Swelling\n- Redness\n\n## Treatment\nAnti-inflammatory painkillers can ease a gout attack.",
    org="NHS",
    url="https://www.nhs.uk/conditions/gout/",
    tier="clinical_reference",
    reviewed_on=dt.date(2024, 2, 1),
)


def test_sections_join_wrapped_lines_and_split_bullets() -> None:
    assert sections(DOC.text) == [
        (
            "Symptoms",
            "Gout causes sudden severe pain in a joint, often the big toe.\n\nSwelling.\n\nRedness.",
        ),
        ("Treatment", "Anti-inflammatory painkillers can ease a gout attack."),
    ]


def test_chunk_ids_are_stable_and_spans_index_the_text() -> None:
    first, second = chunk_document(DOC), chunk_document(DOC)
    assert [c.id for c in first] == [c.id for c in second] == ["gout:0.0", "gout:1.0"]
    for chunk in first:
        assert all(chunk.text[s.start : s.end].strip() for s in chunk.sentence_spans)


def test_upsert_is_idempotent_and_replaces_changed_documents(embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store = open_store(Settings(data_dir=tmp_path), embedder)
    assert store.upsert_documents([DOC]).added == 1
    assert store.upsert_documents([DOC]).unchanged == 1
    shorter = dataclasses.replace(DOC, text="# Gout\n\n## Treatment\nColchicine can treat a gout attack.")
    summary = store.upsert_documents([shorter])
    assert summary.updated == 1
    assert store.count_sync() == 1
    found = store.search_sync("medicine for a gout attack", 3)
    assert found[0].text == "Colchicine can treat a gout attack."
    assert found[0].sentence_vectors is not None
    assert found[0].sentence_vectors.shape == (1, 384)
    assert 0.0 <= found[0].score <= 1.0
    assert store.delete_documents(["gout"]) == 1
    assert store.count_sync() == 0


def test_reopened_store_keeps_passages(embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    open_store(Settings(data_dir=tmp_path), embedder).upsert_documents([DOC])
    reopened = open_store(Settings(data_dir=tmp_path), embedder)
    assert reopened.count_sync() == 2
    assert reopened.search_sync("big toe pain", 1)[0].document_id == "gout"


def test_search_reads_stored_passages_once_and_serves_a_changed_document(embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store = open_store(Settings(data_dir=tmp_path), embedder)
    store.upsert_documents([DOC])
    first = store.search_sync("what eases a gout attack", 2)
    reads = store.record_cache.reads
    again = store.search_sync("what eases a gout attack", 2)
    assert store.record_cache.reads == reads  # text, metadata and vectors came from the record cache
    assert [(p.id, p.text, p.score) for p in again] == [(p.id, p.text, p.score) for p in first]
    assert store.get_sync([first[0].id])[0].text == first[0].text
    assert store.record_cache.reads == reads
    # A changed document is stored under new record ids, so the warm cache cannot serve the old text.
    changed = dataclasses.replace(
        DOC, text="# Gout\n\n## Treatment\nColchicine taken early can shorten a gout attack."
    )
    store.upsert_documents([changed])
    found = store.search_sync("what eases a gout attack", 2)
    assert [p.text for p in found] == ["Colchicine taken early can shorten a gout attack."]
    assert store.get_sync(["gout:0.0"])[0].text == "Colchicine taken early can shorten a gout attack."


def titled(doc_id: str, title: str) -> SourceDocument:
    return dataclasses.replace(DOC, id=doc_id, title=title, text=f"# {title}\n\n{title} is described here.")


def test_titles_are_searched_exactly_in_memory_per_index_version(embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store = open_store(Settings(data_dir=tmp_path), embedder)
    store.upsert_documents(
        [DOC, titled("asthma", "What is asthma?"), titled("flu", "How long does flu last?")]
    )
    index = store.titles
    questions = embedder.encode(["how long will my flu go on", "big toe pain", "wheezing and asthma"])
    version = store.version
    exact = index.query(questions, 3, None, version, store.committed_hashes)
    from_chroma = index.query(questions, 3, None)
    assert [[h.document_id for h in hits] for hits in exact] == [
        [h.document_id for h in hits] for hits in from_chroma
    ]
    assert [hits[0].document_id for hits in exact] == ["flu", "gout", "asthma"]
    for hits, chroma_hits in zip(exact, from_chroma, strict=True):
        assert [round(h.cosine, 4) for h in hits] == [round(h.cosine, 4) for h in chroma_hits]
    assert index.exact.loaded_version() == version
    reads = index.exact.reads
    index.query(questions, 3, None, version, store.committed_hashes)
    assert index.exact.reads == reads  # read once per version

    store.upsert_documents([titled("gout", "Gout and uric acid")])  # a commit: a new version
    assert store.version != version
    found = store.search_sync("what is gout and uric acid", 1)
    assert index.exact.loaded_version() == store.version
    assert found[0].document_id == "gout"

    capped = open_store(Settings(data_dir=tmp_path), embedder, exact_max_titles=2)
    hits = capped.titles.query(questions[:1], 1, None, "another", capped.committed_hashes)[0]
    assert [h.document_id for h in hits] == ["flu"]  # too many to hold: Chroma answers
    assert capped.titles.exact.loaded_version() is None


def test_passages_are_searched_exactly_in_memory_unless_filtered_or_too_many(
    embedder, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from gateway.knowledge.search_options import SearchFilters

    store = open_store(Settings(data_dir=tmp_path), embedder)
    store.upsert_documents(
        [DOC, titled("asthma", "What is asthma?"), titled("flu", "How long does flu last?")]
    )
    questions = embedder.encode(["sudden pain in the big toe", "wheezing and asthma"])
    exact = store.dense_hits(questions, 5, SearchFilters(), store.version)
    assert store.exact_passages.loaded_version() == store.version

    capped = open_store(Settings(data_dir=tmp_path), embedder, exact_max_passages=2)
    from_chroma = capped.dense_hits(questions, 5, SearchFilters(), capped.version)  # too many: Chroma answers
    assert capped.exact_passages.loaded_version() is None
    assert [[rid for rid, _ in hits] for hits in exact] == [[rid for rid, _ in hits] for hits in from_chroma]
    for hits, chroma_hits in zip(exact, from_chroma, strict=True):
        assert [round(c, 4) for _, c in hits] == [round(c, 4) for _, c in chroma_hits]
    assert exact[0][0][0].startswith("gout:0.0@")  # the symptoms passage
    assert exact[1][0][0].startswith("asthma:")

    store.exact_passages.forget()
    filtered = SearchFilters(orgs=("CDC",))  # filtered: Chroma answers
    assert store.dense_hits(questions, 5, filtered, store.version) == [[], []]
    assert store.exact_passages.loaded_version() is None

    version = store.version
    store.upsert_documents([titled("flu", "Flu and fever")])  # a commit: new vectors at a new version
    assert store.version != version
    assert store.search_sync("flu and fever", 1)[0].document_id == "flu"
    assert store.exact_passages.loaded_version() == store.version
