"""Ingestion into Chroma: idempotency, atomic replacement, deletion, interrupted runs, hybrid search."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from gateway.bootstrap import open_store
from gateway.errors import StoreError
from gateway.knowledge.corpus import SourceDocument
from gateway.knowledge.fusion import best_window_cosine, reciprocal_rank_fusion
from gateway.knowledge.ingest import Ingestor
from gateway.knowledge.lexical import LexicalIndex, tokenize
from gateway.knowledge.loaders import LoadFailure
from gateway.knowledge.search_options import SearchFilters, SearchOptions
from gateway.knowledge.store import ChromaStore
from gateway.settings import Settings

TEXTS = {
    "gout": (
        "Gout",
        "NHS",
        "clinical_reference",
        "# Gout\n\nGout causes sudden severe pain in the big toe. Urate crystals form in the joint.\n\n"
        "## Treatment\n\nColchicine or anti-inflammatory painkillers ease a gout attack.",
    ),
    "asthma": (
        "Asthma",
        "NHLBI",
        "guideline",
        "# Asthma\n\nAsthma is a long-term lung condition that makes breathing hard. "
        "An inhaler relieves wheezing.",
    ),
    "shingles": (
        "Shingles",
        "CDC",
        "guideline",
        "Shingles is a painful rash caused by the varicella zoster virus. Antiviral tablets help.",
    ),
}


def doc(doc_id: str, text: str | None = None) -> SourceDocument:
    title, org, tier, body = TEXTS[doc_id]
    return SourceDocument(
        id=doc_id,
        title=title,
        text=text or body,
        org=org,
        url=f"https://example.org/{doc_id}",
        tier=tier,
        reviewed_on=dt.date(2024, 1, 1),
    )


@pytest.fixture
def leaflet_store(embedder, tmp_path: Path) -> ChromaStore:  # type: ignore[no-untyped-def]
    """A store of this test with three leaflets ingested (gout, asthma, shingles)."""
    store = open_store(Settings(data_dir=tmp_path), embedder)
    Ingestor(store, embedder).run([doc("gout"), doc("asthma"), doc("shingles")])
    return store


def texts(leaflet_store: ChromaStore, query: str, k: int = 10, **kw: object) -> list[str]:
    return [p.text for p in leaflet_store.search_sync(query, k, **kw)]  # type: ignore[arg-type]


def test_reingesting_unchanged_documents_writes_nothing(leaflet_store, embedder) -> None:  # type: ignore[no-untyped-def]
    version = leaflet_store.version
    report = Ingestor(leaflet_store, embedder).run([doc("gout"), doc("asthma"), doc("shingles")])
    assert report.summary.unchanged == 3
    assert report.summary.chunks_written == 0
    assert report.summary.added == 0
    assert leaflet_store.version == version
    assert leaflet_store.count_sync() == 4


def test_changed_document_replaces_its_chunks_without_mix_or_gap(leaflet_store, embedder) -> None:  # type: ignore[no-untyped-def]
    new_text = "# Gout\n\nGout treatment now starts with allopurinol tablets taken daily."
    calls: list[list[str]] = []
    original_commit = leaflet_store.commit

    def observing_commit(prepared, source=""):  # type: ignore[no-untyped-def]
        # New passages are written but not committed: readers still see only the old version.
        calls.append(texts(leaflet_store, "gout treatment"))
        original_commit(prepared, source)

    leaflet_store.commit = observing_commit  # type: ignore[method-assign]
    report = Ingestor(leaflet_store, embedder).run([doc("gout", new_text), doc("asthma"), doc("shingles")])
    assert report.summary.updated == 1
    assert report.summary.unchanged == 2
    before = [t for t in calls[0] if "Gout" in t or "gout" in t]
    assert before
    assert all("allopurinol" not in t for t in before)
    after = texts(leaflet_store, "gout treatment")
    gout_after = [t for t in after if "out" in t]
    assert any("allopurinol" in t for t in gout_after)
    assert all("Colchicine" not in t and "big toe" not in t for t in after)
    assert leaflet_store.count_sync() == 3
    # superseded records are gone from Chroma, not just hidden
    assert leaflet_store.collect_garbage() == 0
    assert [p.id for p in leaflet_store.get_sync(["gout:0.0"])] == ["gout:0.0"]


def test_delete_and_prune(leaflet_store, embedder) -> None:  # type: ignore[no-untyped-def]
    assert leaflet_store.delete_documents(["shingles", "unknown"]) == 1
    assert all("Shingles" not in t for t in texts(leaflet_store, "shingles rash"))
    report = Ingestor(leaflet_store, embedder).run([doc("gout")], prune=True)
    assert report.summary.deleted == 1
    assert report.summary.unchanged == 1
    assert set(leaflet_store.committed_hashes()) == {"gout"}
    report = Ingestor(leaflet_store, embedder).run([], delete=["gout"])
    assert report.summary.deleted == 1
    assert leaflet_store.count_sync() == 0
    assert leaflet_store.search_sync("gout", 5) == []


def test_bad_documents_are_reported_and_the_rest_ingested(embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    leaflet_store = open_store(Settings(data_dir=tmp_path), embedder)
    items = [
        doc("gout"),
        LoadFailure("broken.pdf", "not a readable PDF", "broken"),
        doc("gout"),
        doc("asthma", "   "),
    ]
    report = Ingestor(leaflet_store, embedder).run(items)
    reasons = {f.name: f.reason for f in report.failures}
    assert reasons == {
        "broken.pdf": "not a readable PDF",
        "gout": "duplicate document id in this run",
        "asthma": "no text left after cleaning",
    }
    assert report.summary.added == 1
    assert set(leaflet_store.committed_hashes()) == {"gout"}


def test_interrupted_run_leaves_previous_index_searchable(leaflet_store, embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    before = {p.id: p.text for q in ("gout", "asthma", "shingles") for p in leaflet_store.search_sync(q, 10)}
    assert len(before) == 4

    def interrupted() -> Iterator[SourceDocument]:
        yield doc("gout", "Gout is now described differently in this new version of the text.")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Ingestor(leaflet_store, embedder, batch_documents=1).run(interrupted())
    # the first batch (gout) was committed before the interruption; now a run that dies after
    # writing its passages but before committing them
    leaflet_store.commit = _raise  # type: ignore[method-assign]
    with pytest.raises(StoreError):
        Ingestor(leaflet_store, embedder).run(
            [
                doc("asthma", "Asthma text rewritten, never committed."),
                doc("shingles", "Shingles, never committed."),
            ]
        )
    assert all("never" not in p.text for p in leaflet_store.search_sync("never committed", 10))
    reopened = open_store(Settings(data_dir=tmp_path), embedder)
    after = {p.id: p.text for q in ("gout", "asthma", "shingles") for p in reopened.search_sync(q, 10)}
    assert set(after) == {"gout:0.0", "asthma:0.0", "shingles:0.0"}
    assert after["asthma:0.0"] == before["asthma:0.0"]
    assert after["shingles:0.0"] == before["shingles:0.0"]
    assert "new version" in after["gout:0.0"]
    # the orphans of the interrupted runs are collected, and a re-run completes the work
    assert reopened.collect_garbage() >= 2
    report = Ingestor(reopened, embedder).run(
        [
            doc("gout", "Gout is now described differently in this new version of the text."),
            doc("asthma", "Asthma text rewritten for the new version of the leaflet."),
            doc("shingles"),
        ]
    )
    assert (report.summary.updated, report.summary.unchanged) == (1, 2)


def _raise(*_: object, **__: object) -> None:
    raise StoreError("simulated crash before commit")


def test_hybrid_search_filters_and_scores(leaflet_store) -> None:  # type: ignore[no-untyped-def]
    found = leaflet_store.search_sync("big toe pain urate crystals", 3)
    assert found[0].document_id == "gout"
    assert all(0.0 <= p.score <= 1.0 for p in found)
    assert found[0].sentence_vectors is not None
    assert len(found[0].sentence_vectors) == len(found[0].sentence_spans)
    only_cdc = leaflet_store.search_sync("painful rash virus", 5, SearchFilters(orgs=("CDC",)))
    assert {p.org for p in only_cdc} == {"CDC"}
    guideline = leaflet_store.search_sync("gout", 5, SearchFilters(tiers=("guideline",)))
    assert guideline
    assert all(p.tier == "guideline" for p in guideline)
    # dense and lexical modes both work on their own; the score is the dense cosine in every mode
    dense = leaflet_store.search_sync("colchicine", 1, options=SearchOptions(mode="dense"))
    lexical = leaflet_store.search_sync("colchicine", 1, options=SearchOptions(mode="lexical", rerank=False))
    assert lexical[0].id == "gout:1.0"
    assert dense
    assert 0.0 <= lexical[0].score <= 1.0


def test_lexical_index_survives_restart_via_cache(leaflet_store, embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    leaflet_store.save_lexical_cache()
    assert (tmp_path / "chroma" / "lexical" / "vetted_passages.bm25.npz").is_file()
    reopened = open_store(Settings(data_dir=tmp_path), embedder)
    assert len(reopened.lexical) == 4
    hits = reopened.search_sync("inhaler wheezing", 1, options=SearchOptions(mode="lexical", rerank=False))
    assert hits[0].document_id == "asthma"


def test_second_store_sees_commits_of_the_first(leaflet_store, embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    other = open_store(Settings(data_dir=tmp_path, index_refresh_seconds=0), embedder)
    Ingestor(leaflet_store, embedder).run([doc("gout", "Gout: a brand new sentence about febuxostat.")])
    hits = other.search_sync("febuxostat", 1, options=SearchOptions(mode="lexical", rerank=False))
    assert hits
    assert "febuxostat" in hits[0].text


def test_searches_read_the_version_at_most_once_per_interval(leaflet_store, embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    other = open_store(Settings(data_dir=tmp_path, index_refresh_seconds=60), embedder)
    lexical = SearchOptions(mode="lexical", rerank=False)
    Ingestor(leaflet_store, embedder).run([doc("gout", "Gout: a brand new sentence about febuxostat.")])
    assert leaflet_store.search_sync(
        "febuxostat", 1, options=lexical
    )  # the writer sees its own commit at once
    assert other.search_sync("febuxostat", 1, options=lexical) == []  # within the interval: not yet
    assert other.count_sync() == leaflet_store.count_sync()  # a count reads the version at once: caught up
    hits = other.search_sync("febuxostat", 1, options=lexical)
    assert hits
    assert "febuxostat" in hits[0].text


def test_bm25_ranks_rare_terms_and_respects_filters() -> None:
    index = LexicalIndex()
    index.add("a", "paracetamol dose for adults", tier="t1", org="NHS")
    index.add("b", "ibuprofen dose for adults with asthma", tier="t2", org="NHS")
    index.add("c", "asthma inhalers", tier="t2", org="CDC")
    assert next(h.record_id for h in index.search("asthma inhaler", 3)) == "c"
    assert [h.record_id for h in index.search("asthma", 3, orgs=["NHS"])] == ["b"]
    assert index.search("zebra", 3) == []
    index.remove(["c"])
    assert [h.record_id for h in index.search("asthma", 3)] == ["b"]
    assert tokenize("The Tablets were taken") == ["tablet", "taken"]


def test_reciprocal_rank_fusion_and_windows() -> None:
    fused = reciprocal_rank_fusion(["a", "b", "c"], ["c", "d"])
    assert [f.record_id for f in fused][:2] == ["c", "a"]
    query = np.asarray([1.0, 0.0], dtype=np.float32)
    sentences = np.asarray([[0.0, 1.0], [1.0, 0.0]], dtype=np.float32)
    assert best_window_cosine(query, sentences) == pytest.approx(1.0)
    assert best_window_cosine(query, None) is None
