"""Other names mined from the knowledge base's own passages (gateway/knowledge/aliases.py)."""

from __future__ import annotations

from pathlib import Path

from gateway.knowledge.aliases import AliasTable, mine_aliases
from gateway.knowledge.lexical import LexicalIndex
from gateway.knowledge.query import load_planner
from gateway.resources import bundled


def test_an_also_called_clause_naming_the_title_gives_an_alias_of_the_title() -> None:
    text = "Wobbly knee disorder, also known as patellar drift, makes the kneecap slip sideways."
    assert mine_aliases(text, "What is (are) Wobbly Knee Disorder ?") == [
        ("patellar drift", "What is (are) Wobbly Knee Disorder ?")
    ]


def test_an_also_called_clause_about_something_else_is_not_an_alias_of_the_title() -> None:
    text = "If your sugar is high, sometimes called hyperglycaemia, tell the nurse."
    assert mine_aliases(text, "What are the treatments for Wobbly Knee Disorder ?") == []


def test_an_acronym_is_read_from_the_initials_of_the_words_before_it() -> None:
    text = "Children with chronic pink-eye syndrome (CPES) may need drops. The results (ok) vary."
    assert ("CPES", "chronic pink-eye syndrome") in mine_aliases(text, "Eye care")
    assert all(alias != "OK" for alias, _ in mine_aliases(text, "Eye care"))


def test_the_table_adds_the_topic_words_and_leaves_the_question_wording() -> None:
    aliases = {
        "patellar drift": ("What is (are) Wobbly Knee Disorder ?",),
        "CPES": ("chronic pink-eye syndrome",),
    }
    others = {f"What is (are) Topic{i} ?": None for i in range(80)}
    table = AliasTable({**aliases, **{f"alias {i}": (t,) for i, t in enumerate(others)}})
    # "what is (are)", in every title, is question wording; the topic's words are kept
    assert table.expand("my physio thinks it is patellar drift, what now?") == ["wobbly", "knee", "disorder"]
    assert table.expand("is CPES catching?") == ["chronic", "pink", "eye", "syndrome"]


def test_an_acronym_is_not_read_in_an_ordinary_word_or_its_plural() -> None:
    table = AliasTable({"MED": ("multiple epiphyseal dysplasia",)}, dictionary=frozenset({"med"}))
    assert table.expand("do my meds clash?") == []
    assert table.expand("is MED inherited?") == ["multiple", "epiphyseal", "dysplasia"]


def test_an_alias_that_is_itself_a_page_title_adds_nothing() -> None:
    table = AliasTable(
        {"slow gut": ("Gastroparesis",)}, titles=["What is (are) Slow Gut ?", "What causes Gastroparesis ?"]
    )
    assert table.expand("could I have slow gut?") == []


def test_a_common_word_alias_adds_nothing() -> None:
    table = AliasTable({"tummy": ("Abdominal wall hernia",)}, share=lambda term: 0.2)
    assert table.expand("my tummy hurts") == []


def test_the_index_keeps_the_aliases_of_live_passages_only() -> None:
    index = LexicalIndex()
    index.add(
        "a#0", "Wobbly knee disorder, also called patellar drift, is common.", title="Wobbly Knee Disorder"
    )
    index.add("b#0", "Nothing named here.", title="Other")
    assert index.vocabulary().aliases == {"patellar drift": ("Wobbly Knee Disorder",)}
    index.remove(["a#0"])
    assert index.vocabulary().aliases == {}


def test_saved_and_loaded_index_keeps_its_aliases(tmp_path: Path) -> None:
    index = LexicalIndex()
    index.add(
        "a#0", "Wobbly knee disorder, also called patellar drift, is common.", title="Wobbly Knee Disorder"
    )
    index.save(tmp_path / "i.npz", "v1")
    loaded = LexicalIndex.load(tmp_path / "i.npz", "v1")
    assert loaded is not None
    assert loaded.vocabulary().aliases == index.vocabulary().aliases
    assert loaded.vocabulary().titles == frozenset({"Wobbly Knee Disorder"})


def test_the_planner_adds_the_named_topic_to_the_bm25_text_only() -> None:
    index = LexicalIndex()
    index.add(
        "a#0", "Wobbly knee disorder, also called patellar drift, is common.", title="Wobbly Knee Disorder"
    )
    for i in range(300):
        index.add(f"x{i}#0", f"Filler passage {i} about knees and elbows.", title=f"Other {i}")
    planner = load_planner(bundled("policies"))
    plans = planner.plan("Is patellar drift serious?", planner.lexicon(index.vocabulary()))
    assert "wobbly" in plans[-1].lexical
    assert "wobbly" not in plans[-1].text
