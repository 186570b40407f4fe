"""Question matching and planned queries in the real store (Chroma + MiniLM)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest

from gateway.bootstrap import open_store
from gateway.knowledge.corpus import SourceDocument
from gateway.knowledge.query import load_planner
from gateway.knowledge.search_options import SearchFilters, SearchOptions
from gateway.resources import bundled
from gateway.settings import Settings


def _doc(doc_id: str, title: str, text: str, org: str = "NIH") -> SourceDocument:
    return SourceDocument(
        id=doc_id,
        title=title,
        text=text,
        org=org,
        url=f"https://example.org/{doc_id}",
        tier="clinical_reference",
        reviewed_on=dt.date(2024, 1, 1),
    )


GOUT_TEXT = (
    "Gout is a form of arthritis in which uric acid crystals build up in a joint, often the big toe. "
    "Attacks come on suddenly and the joint becomes red, hot and swollen."
)
DOCS = [
    _doc("gout-what", "What is (are) Gout ?", GOUT_TEXT),
    _doc(
        "gout-treat",
        "What are the treatments for Gout ?",
        "Gout is a form of arthritis in which uric acid crystals build up in a joint. Doctors use "
        "colchicine, corticosteroids and anti-inflammatory medicines for attacks, and allopurinol over "
        "the long term.",
    ),
    _doc(
        "cipro",
        "Ciprofloxacin",
        "Ciprofloxacin is an antibiotic for bacterial infections such as urinary tract infections. "
        "Ciprofloxacin should not be taken together with dairy products like milk on their own.",
        org="FDA",
    ),
    _doc(
        "glaucoma-symptoms",
        "What are the symptoms of Glaucoma ?",
        "Open-angle glaucoma has no early symptoms. Over time side vision is slowly lost.",
    ),
]


@pytest.fixture(scope="module")
def question_store(embedder, tmp_path_factory):  # type: ignore[no-untyped-def]
    """A store of the module with the question-titled documents ``DOCS`` and the bundled planner."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("question-matching"))
    built = open_store(settings, embedder, planner=load_planner(bundled("policies")))
    built.upsert_documents(DOCS)
    return built


def test_titles_are_indexed_and_matched_question_to_question(question_store, embedder) -> None:  # type: ignore[no-untyped-def]
    assert question_store.titles.count() == len(DOCS)
    hits = question_store.titles.query(embedder.encode(["how do doctors treat gout?"]), 2, None)[0]
    assert hits[0].document_id == "gout-treat"
    found = question_store.search_sync("how do doctors treat gout?", 2)
    assert found[0].document_id == "gout-treat"


def test_each_question_of_a_message_gets_passages(question_store) -> None:  # type: ignore[no-untyped-def]
    message = "Hi, my dad is 70. How is gout treated? Also what are the first signs of glaucoma? Thanks!"
    found = {p.document_id for p in question_store.search_sync(message, 3)}
    assert {"gout-treat", "glaucoma-symptoms"} <= found
    plain = {
        p.document_id for p in question_store.search_sync(message, 3, options=SearchOptions(focus=False))
    }
    assert plain  # the unfocused search still returns something; focus decides the mix


def test_a_misspelt_drug_name_is_found(question_store) -> None:  # type: ignore[no-untyped-def]
    plans = question_store.plan("can I take ciprofaxin with my milk in the morning?")
    assert "ciprofloxacin" in plans[0].text
    found = question_store.search_sync("can I take ciprofaxin with my milk in the morning?", 1)
    assert found[0].document_id == "cipro"


def test_question_matching_respects_filters(question_store) -> None:  # type: ignore[no-untyped-def]
    found = question_store.search_sync(
        "what are the treatments for gout", 4, filters=SearchFilters(orgs=("FDA",))
    )
    assert {p.document_id for p in found} == {"cipro"}


def test_scores_stay_on_the_dense_cosine_scale(question_store) -> None:  # type: ignore[no-untyped-def]
    for passage in question_store.search_sync("How is gout treated? And glaucoma signs?", 4):
        assert 0.0 <= passage.score <= 1.0


def test_replaced_and_deleted_documents_take_their_titles_along(embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    question_store = open_store(Settings(data_dir=tmp_path), embedder)
    question_store.upsert_documents(DOCS[:2])
    changed = dataclasses.replace(DOCS[0], title="What is gouty arthritis ?")
    question_store.upsert_documents([changed])
    ids = {rid for rid, _ in question_store.titles.ids()}
    assert ids == {f"gout-what@{changed.content_hash}", f"gout-treat@{DOCS[1].content_hash}"}
    question_store.delete_documents(["gout-what"])
    assert {rid for rid, _ in question_store.titles.ids()} == {f"gout-treat@{DOCS[1].content_hash}"}


def test_an_index_without_titles_is_backfilled_at_the_next_ingest(embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    question_store = open_store(Settings(data_dir=tmp_path), embedder)
    question_store.upsert_documents(DOCS)
    question_store.titles.delete(
        [rid for rid, _ in question_store.titles.ids()]
    )  # as built before question matching
    assert question_store.titles.count() == 0
    summary = question_store.upsert_documents(DOCS)
    assert summary.unchanged == len(DOCS)
    assert question_store.titles.count() == len(DOCS)
    assert question_store.backfill_titles() == 0


def test_keyword_queries_are_not_matched_against_titles(question_store) -> None:  # type: ignore[no-untyped-def]
    assert question_store.plan("gout allopurinol colchicine")[0].question is False
    assert question_store.plan("what are the treatments for gout?")[0].question is True


KNEE = _doc(
    "wobbly-knee",
    "What is (are) Wobbly Knee Disorder ?",
    "Wobbly knee disorder makes the kneecap slip sideways when the thigh muscles are weak.",
)


def test_an_ingest_builds_the_planners_lexicon_and_the_next_search_does_not(embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(data_dir=tmp_path, index_refresh_seconds=0)
    question_store = open_store(settings, embedder, planner=load_planner(bundled("policies")))
    keeper = question_store.lexicons
    assert keeper is not None
    question_store.upsert_documents(DOCS)
    assert keeper.current is not None
    assert keeper.current.version == question_store.version
    built = keeper.builds
    question_store.search_sync("can I take ciprofaxin with my milk?", 1)
    assert keeper.builds == built
    assert "kneecap" not in question_store.plan("why does my kneecapp slip?")[0].text.split()

    question_store.upsert_documents(
        [KNEE]
    )  # this process commits: the table is ready when the ingest returns
    assert keeper.builds > built
    assert keeper.current.version == question_store.version
    built = keeper.builds
    assert (
        "kneecap" in question_store.plan("why does my kneecapp slip?")[0].text.split()
    )  # corrected by the new table
    assert question_store.search_sync("why does my kneecapp slip?", 1)[0].document_id == "wobbly-knee"
    assert keeper.builds == built

    # another process commits: the search that notices hands the build to the background
    open_store(settings, embedder).delete_documents(["wobbly-knee"])
    assert question_store.search_sync("how is gout treated?", 1)[0].document_id.startswith("gout")
    assert keeper.wait(60)
    assert keeper.builds == built + 1
    assert keeper.failures == 0
    assert keeper.current.version == question_store.version
    assert "kneecap" not in question_store.plan("why does my kneecapp slip?")[0].text.split()
