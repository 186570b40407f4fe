"""Question focus, vocabulary and spelling (gateway/knowledge/query.py): no model needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.errors import ConfigurationError
from gateway.knowledge.fusion import fuse_lists, reciprocal_rank_fusion
from gateway.knowledge.lexical import LexicalIndex
from gateway.knowledge.query import (
    Lexicon,
    QueryPlanner,
    QueryWords,
    load_planner,
    load_query_words,
)
from gateway.knowledge.synonyms import Synonyms, load_vocabulary
from gateway.resources import bundled


@pytest.fixture(scope="module")
def lexicon(planner: QueryPlanner) -> Lexicon:
    index = LexicalIndex()
    texts = [
        "Ciprofloxacin is an antibiotic used for urinary tract infections.",
        "Ciprofloxacin can interact with dairy products and antacids.",
        "Gout is diagnosed from joint fluid. Allopurinol lowers uric acid in gout.",
        "Gout attacks are treated with colchicine or anti-inflammatory medicines; gout diagnosed early.",
        "Glucagon raises blood sugar quickly in severe hypoglycemia.",
        "Glucagon kits are kept at home by people using insulin.",
        "The patient was diagnosed with diabetes and diagnosed again later.",
        "Husband and wife were told about the treatment of diabetes.",
    ]
    texts += [f"Filler record {n} about the weather, the month and the family." for n in range(60)]
    for number, text in enumerate(texts):
        index.add(f"r{number}", text)
    return planner.lexicon(index.vocabulary())


def test_greetings_thanks_and_filler_are_not_searched(planner: QueryPlanner) -> None:
    plans = planner.plan(
        "Hi doctor! Hope you are well. I was wondering if gout can be cured? Thanks so much!"
    )
    assert [p.text for p in plans] == ["gout can be cured (treatment, cure)?"]
    assert "treatment" in plans[0].lexical
    assert all("thank" not in p.text.lower() and "hi doctor" not in p.text.lower() for p in plans)


def test_each_question_of_a_message_is_its_own_query(planner: QueryPlanner) -> None:
    message = (
        "My husband has gout in his toe and takes allopurinol. What foods should he avoid? "
        "also is it safe for him to drink beer"
    )
    texts = [p.text for p in planner.plan(message)]
    assert texts[0].startswith("What foods should he avoid?")
    assert texts[1].startswith("also is it safe for him to drink beer")
    assert texts[2].startswith("My husband has gout")  # the whole message, backstory included
    assert len(texts) == 3


def test_a_question_without_topic_words_carries_the_backstory(
    planner: QueryPlanner, lexicon: Lexicon
) -> None:
    plans = planner.plan(
        "My dad was dianosed with gout last month. He takes allopurinol now. What else can he do about it? "
        "Is it painful?",
        lexicon,
    )
    first = plans[0].text
    assert first.startswith("What else can he do about it?")
    assert "gout" in first
    assert "allopurinol" in first
    assert "month" not in first
    assert "dad" not in first


def test_misspelt_words_are_corrected_to_the_indexed_vocabulary(
    lexicon: Lexicon, planner: QueryPlanner
) -> None:
    assert lexicon.correct("ciprofaxin") == "ciprofloxacin"
    assert lexicon.correct("dianosed") == "diagnosed"
    assert lexicon.correct("ciprofloxacin") is None  # known
    assert lexicon.correct("gout") is None  # too short to correct
    assert lexicon.correct("zzzzzzzzz") is None  # nothing close
    assert lexicon.correct("ozempic") is None  # a vocabulary key is a known word
    plan = planner.plan("can i take ciprofaxin with milk?", lexicon)[0]
    assert "ciprofloxacin" in plan.text
    assert "ciprofaxin" not in plan.text


def test_brand_and_lay_words_get_their_clinical_terms(planner: QueryPlanner) -> None:
    plan = planner.plan("I use GlucaGen when my sugar is low. Can my wife give it if I pass out?")[0]
    assert "glucagon" in plan.lexical.lower()
    whole = planner.plan("I use GlucaGen when my sugar is low. Can my wife give it if I pass out?")[-1]
    assert "GlucaGen (glucagon)" in whole.text
    assert "diabetes" in whole.lexical  # lay "sugar"
    tylenol = planner.plan("how much tylenol is too much?")[0]
    assert "acetaminophen" in tylenol.text
    assert "acetaminophen" in tylenol.lexical


def test_a_message_of_courtesy_only_is_searched_as_written(planner: QueryPlanner) -> None:
    assert [p.text for p in planner.plan("Thank you!")] == ["Thank you!"]
    assert planner.plan("   ") == []


def test_vocabulary_file_errors_name_the_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "vocabulary.yaml"
    path.write_text("brands:\n  tylenol: [acetaminophen]\n  Tylenol: [paracetamol]\n")
    with pytest.raises(
        ConfigurationError, match=r"vocabulary.yaml: brands.Tylenol: this word is already listed"
    ):
        load_vocabulary(path)
    path.write_text("brands:\n  tylenol: [acetaminophen]\n  tylenol: [paracetamol]\n")
    with pytest.raises(ConfigurationError, match="duplicate key 'tylenol'"):
        load_vocabulary(path)
    path.write_text("brands:\n  tylenol: []\n")
    with pytest.raises(ConfigurationError, match=r"brands\.tylenol: expected a non-empty list"):
        load_vocabulary(path)
    path.write_text("drugs:\n  tylenol: [acetaminophen]\n")
    with pytest.raises(ConfigurationError, match="drugs: unknown key"):
        load_vocabulary(path)
    # an override written before question_types moved says where they went
    path.write_text("question_types:\n  side effects: [adverse effects]\n")
    with pytest.raises(ConfigurationError, match=r"question_types: moved: .*search_words"):
        load_vocabulary(path)


def test_query_file_errors_name_the_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "query.yaml"
    path.write_text("filler_phrases: ['(unclosed']\n")
    with pytest.raises(ConfigurationError, match=r"query.yaml: filler_phrases: bad regular expression"):
        load_query_words(path)
    path.write_text("max_questions: 0\n")
    with pytest.raises(ConfigurationError, match=r"query.yaml: max_questions: must be >= 1, got 0"):
        load_query_words(path)
    path.write_text("greetings: [hi]\n")
    with pytest.raises(ConfigurationError, match=r"query.yaml: greetings: unknown key"):
        load_query_words(path)


def test_a_policy_directory_without_the_files_falls_back_to_the_bundled_ones(tmp_path: Path) -> None:
    planner = load_planner(tmp_path, fallback=bundled("policies"))
    assert planner.synonyms.terms["tylenol"] == ("acetaminophen",)
    with pytest.raises(ConfigurationError, match=r"query\.yaml: -: file not found"):
        load_planner(tmp_path)


def test_defaults_without_word_lists_keep_the_message() -> None:
    plans = QueryPlanner(QueryWords(), Synonyms({})).plan("Hello. What is gout?")
    assert [p.text for p in plans] == ["Hello. What is gout?"]


def test_one_question_is_searched_with_its_backstory_in_one_query(planner: QueryPlanner) -> None:
    plans = planner.plan("Hi! My father has Huntington's disease. What are the chances I'll get it? Thanks")
    expected = "My father has Huntington's disease. What are the chances I'll get it?"
    assert [p.text for p in plans] == [expected]


def test_fusing_many_lists_orders_two_like_reciprocal_rank_fusion() -> None:
    dense, lexical = ["a", "b", "c", "d"], ["c", "e", "a"]
    assert fuse_lists([dense, lexical]) == [f.record_id for f in reciprocal_rank_fusion(dense, lexical)]
    assert fuse_lists([["x", "y"], ["y", "z"], ["y"]])[0] == "y"


def test_lexical_index_keeps_surface_words_through_save_and_load(tmp_path: Path) -> None:
    index = LexicalIndex()
    index.add("a", "Diagnosed patients were treated")
    index.add("b", "Diagnosis and treatment")
    path = tmp_path / "bm25.npz"
    index.save(path, "v1")
    loaded = LexicalIndex.load(path, "v1")
    assert loaded is not None
    vocabulary = loaded.vocabulary()
    surfaces = dict(zip(vocabulary.terms, vocabulary.surfaces, strict=True))
    assert surfaces["diagnos"] == "diagnosed"
    assert surfaces["treat"] == "treated"
    frequency = dict(zip(vocabulary.terms, vocabulary.document_frequency.tolist(), strict=True))
    assert frequency["diagnosi"] == 1  # Snowball: "diagnosis" -> "diagnosi", "diagnosed" -> "diagnos"
    assert vocabulary.records == 2
    loaded.remove(["a"])
    assert (
        dict(zip(loaded.vocabulary().terms, loaded.vocabulary().document_frequency.tolist(), strict=True))[
            "diagnos"
        ]
        == 0
    )


def test_keyword_searches_are_not_questions(planner: QueryPlanner) -> None:
    assert planner.plan("gout colchicine allopurinol long term")[0].question is False
    assert planner.plan("how is gout treated")[0].question is True
    assert all(p.question for p in planner.plan("My dad has gout. What foods should he avoid?"))


def test_question_type_words_reach_bm25_but_not_the_dense_text(planner: QueryPlanner) -> None:
    (plan,) = planner.plan("How common is tyrosinemia?")
    assert plan.text == "How common is tyrosinemia?"  # MiniLM reads the patient's words only
    assert "prevalence" in plan.lexical
    assert "frequency" in plan.lexical
    (plan,) = planner.plan("how is it diagnosed, gout")
    assert "diagnosis" in plan.lexical
    assert "diagnosis" not in plan.text


def test_question_kinds_search_words_are_checked_with_the_vocabulary(tmp_path: Path) -> None:
    path = tmp_path / "vocabulary.yaml"
    path.write_text("lay_terms:\n  how common: [x]\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"question_kinds\.search_words\.How common: this word is"):
        load_vocabulary(path, [("How common", ["y"])])
    path.write_text("brands:\n  tylenol: [paracetamol]\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"search_words\.how common: this word is already listed"):
        load_vocabulary(path, [("how common", ["y"]), ("how common", ["z"])])
    synonyms = load_vocabulary(path, [("How  Common", ["frequency"])])
    assert synonyms.lexical_only == frozenset({"how common"})
    (plan,) = QueryPlanner(QueryWords(), synonyms).plan("how COMMON is gout?")
    assert plan.text == "how COMMON is gout?"
    assert plan.lexical.endswith("frequency")


def test_question_kinds_search_words_are_read_from_extractive_yaml(tmp_path: Path) -> None:
    (tmp_path / "extractive.yaml").write_text(
        "question_kinds:\n  - name: odd\n    question: x\n    search_words: {how odd: [oddness]}\n",
        encoding="utf-8",
    )
    planner = load_planner(tmp_path, fallback=bundled("policies"))
    assert planner.synonyms.lexical_only == frozenset({"how odd"})
    (plan,) = planner.plan("how odd is gout?")
    assert "oddness" in plan.lexical
    assert "oddness" not in plan.text


def test_a_question_after_a_backstory_is_also_searched_on_its_own(planner: QueryPlanner) -> None:
    message = "the doctor said it's pleurisy after a week of sharp chest pain. what causes that?"
    plans = planner.plan(message)
    assert len(plans) == 2
    question, whole = plans
    assert question.text.startswith("what causes that?")
    assert "pleurisy" in question.text  # its topic is carried from the backstory
    assert "sharp chest pain" in whole.text


def test_abbreviations_patients_use_are_spelt_out(planner: QueryPlanner) -> None:
    (plan,) = planner.plan("what are the symptoms of CMML?")
    assert "chronic myelomonocytic leukemia" in plan.text
