"""BM25's analyzer and the query planner's word rules of #32 (lexical.py, query.py): Snowball stems,
the title weight, repeated query terms, the saved index's analyzer, spelling conventions, plural
vocabulary keys and fragment questions. No model needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.knowledge.lexical import LexicalIndex, tokenize
from gateway.knowledge.query import QueryPlanner
from gateway.stemming import stem


def test_bm25_and_the_verifier_share_the_snowball_stemmer() -> None:
    from tests.support.checks import CHECK_DATA

    verifier_stem = CHECK_DATA.words.stem
    assert tokenize("Reduces reduced reducing") == [stem("reduces")] * 3 == ["reduc"] * 3
    assert verifier_stem("swellings") == stem("swellings") == "swell"  # no synonym group: the bare stem


def test_the_title_counts_title_weight_times() -> None:
    def ranked(weight: int) -> list[str]:
        index = LexicalIndex(title_weight=weight)
        index.add(
            "passing", "Gout can flare after surgery. Rest, fluids and ice help the joint.", title="Surgery"
        )
        index.add("about", "Rest, fluids and ice help the joint; see a doctor if it lasts.", title="Gout")
        for n in range(20):
            index.add(f"other{n}", f"Unrelated passage {n} about fluids and rest.", title="Other")
        return [h.record_id for h in index.search("gout joint", 2)]

    assert ranked(1)[0] == "passing"  # title counted once: the passage mentioning gout in passing wins
    assert ranked(4)[0] == "about"  # counted 4 times: the section titled by the topic wins


def test_a_repeated_query_term_counts_up_to_three_times() -> None:
    index = LexicalIndex()
    index.add("a", "reflux and heartburn")
    index.add("b", "asthma and wheezing in children")
    index.add("c", "heartburn treatment")
    for n in range(20):
        index.add(f"f{n}", f"filler {n} text")
    once = {h.record_id: h.score for h in index.search("reflux asthma", 3)}
    twice = {h.record_id: h.score for h in index.search("reflux reflux asthma", 3)}
    many = {h.record_id: h.score for h in index.search("reflux reflux reflux reflux reflux asthma", 3)}
    assert twice["a"] == pytest.approx(2 * once["a"])
    assert many["a"] == pytest.approx(3 * once["a"])
    assert twice["b"] == pytest.approx(once["b"])


def test_a_saved_index_of_another_analyzer_is_not_loaded(tmp_path: Path) -> None:
    index = LexicalIndex(title_weight=4)
    index.add("a", "gout and allopurinol", title="Gout")
    path = tmp_path / "bm25.npz"
    index.save(path, "v1")
    assert LexicalIndex.load(path, "v1", title_weight=4) is not None
    assert LexicalIndex.load(path, "v1", title_weight=1) is None  # counts made with another weight
    assert LexicalIndex.load(path, "v2", title_weight=4) is None
    with pytest.raises(ValueError, match="title_weight"):
        LexicalIndex(title_weight=0)


def _lexicon(planner: QueryPlanner, *texts: str):  # type: ignore[no-untyped-def]
    index = LexicalIndex()
    for number, text in enumerate(texts):
        index.add(f"r{number}", text)
    for n in range(40):
        index.add(f"f{n}", f"Filler record {n} about the weather.")
    return planner.lexicon(index.vocabulary())


def test_british_spellings_and_sound_alike_endings_become_the_knowledge_bases(planner: QueryPlanner) -> None:
    lexicon = _lexicon(
        planner, "Anemia and esophagus tumor.", "Immunization at the center.", "Kidney infection."
    )
    assert lexicon.correct("anaemia") == "anemia"
    assert lexicon.correct("oesophagus") == "esophagus"
    assert lexicon.correct("tumours") == "tumors"
    assert lexicon.correct("immunisation") == "immunization"
    assert lexicon.correct("centre") == "center"
    assert lexicon.correct("infecshun") == "infection"
    # only when the knowledge base uses the result: no "hemoglobin" here, so "haemoglobin" stays
    assert lexicon.correct("haemoglobin") is None


def test_a_vocabulary_key_is_found_in_the_plural(planner: QueryPlanner) -> None:
    lexicon = _lexicon(planner, "Urinary tract infection and cystitis.")
    plan = planner.plan("I keep getting bladder infections, what can I do?", lexicon)
    assert "urinary tract infection" in plan[0].lexical
    assert "bladder infections" in plan[0].text  # the patient's words kept


def test_fragment_questions_are_backstory_of_the_longer_question(planner: QueryPlanner) -> None:
    message = (
        "Got diagnosed with diabetes last week and my wife is asking what I can eat. Bread? Fruit? "
        "Potatoes? Is there an actual eating plan for diabetics?"
    )
    plans = planner.plan(message)
    texts = [p.text for p in plans]
    assert not any(t.startswith(("Bread", "Fruit", "Potatoes")) for t in texts)
    assert any(t.startswith("Is there an actual eating plan") for t in texts)
