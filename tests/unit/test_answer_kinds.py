"""Section kinds: what kind of answer a patient asks for, what a heading announces, and the small
boost retrieval gives a candidate headed by the kind asked (gateway/knowledge/answer_kinds.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.drafting.extractive_policy import load_extractive_policy
from gateway.errors import ConfigurationError
from gateway.knowledge.answer_kinds import QuestionKind, SectionKinds, load_section_kinds
from gateway.knowledge.query import PlannedQuery, load_planner
from gateway.resources import bundled


@pytest.fixture(scope="module")
def kinds() -> SectionKinds:
    return load_section_kinds(bundled("policies") / "extractive.yaml")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("what can my husband take for his gout", {"treatment"}),
        ("how do we get rid of head lice for good", {"treatment"}),
        ("will the rash on her arm ever clear up", {"outlook"}),
        ("does baldness run in the family", {"inheritance"}),
        ("how do they check for glaucoma", {"diagnosis"}),
        ("how did my daughter catch impetigo", {"cause"}),
        ("is there a way to keep the kids from getting the flu", {"prevention"}),
        ("how common is coeliac disease", {"prevalence"}),
        ("who is likely to get shingles", {"risk"}),
    ],
)
def test_patients_wording_names_the_kind_of_answer(
    kinds: SectionKinds, question: str, expected: set[str]
) -> None:
    assert kinds.asked(question) == expected


def test_a_message_asking_nothing_particular_has_no_kind(kinds: SectionKinds) -> None:
    assert kinds.asked("I have had a dry cough for a week and my chest feels tight") == frozenset()


def test_what_is_counts_only_when_nothing_more_specific_is_asked(kinds: SectionKinds) -> None:
    assert kinds.asked("what is sarcoidosis") == {"what is"}
    assert kinds.asked("what is the cure for sarcoidosis") == {"treatment"}


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("What are the treatments for Gout ?", {"treatment"}),
        ("Treatment", {"treatment"}),
        ("How to prevent Lyme disease", {"prevention"}),
        ("Is Wilson disease inherited ?", {"inheritance"}),
        ("What is the outlook for Rett syndrome ?", {"outlook"}),
        ("What is (are) Gout ?", {"what is"}),
        ("Dosage in kidney disease", set()),
    ],
)
def test_a_heading_names_its_section_kind(kinds: SectionKinds, heading: str, expected: set[str]) -> None:
    assert kinds.of_heading(heading) == expected


HEADINGS = {
    "gout-symptoms": "What are the symptoms of Gout ?",
    "gout-treatment": "What are the treatments for Gout ?",
    "rash-treatment": "What are the treatments for Heat Rash ?",
}


def test_the_section_of_the_asked_kind_moves_ahead_of_its_topics_other_sections(kinds: SectionKinds) -> None:
    fused = [("gout-symptoms", 0.033), ("gout-treatment", 0.031), ("rash-treatment", 0.010)]
    ranked = kinds.rerank(fused, frozenset({"treatment"}), HEADINGS.__getitem__)
    assert ranked == ["gout-treatment", "gout-symptoms", "rash-treatment"]


def test_the_boost_is_too_small_to_bring_in_a_weak_candidate_of_another_topic(kinds: SectionKinds) -> None:
    fused = [("gout-symptoms", 0.033), ("rash-treatment", 0.016)]
    assert kinds.rerank(fused, frozenset({"treatment"}), HEADINGS.__getitem__) == [
        "gout-symptoms",
        "rash-treatment",
    ]


def test_no_kind_asked_leaves_the_fused_order(kinds: SectionKinds) -> None:
    fused = [("gout-symptoms", 0.033), ("gout-treatment", 0.031)]
    assert kinds.rerank(fused, frozenset(), HEADINGS.__getitem__) == ["gout-symptoms", "gout-treatment"]


def test_candidates_beyond_the_depth_keep_their_place(kinds: SectionKinds) -> None:
    fused = [("gout-symptoms", 0.033), ("gout-treatment", 0.031)]
    assert kinds.rerank(fused, frozenset({"treatment"}), HEADINGS.__getitem__, depth=1) == [
        "gout-symptoms",
        "gout-treatment",
    ]


def test_the_planner_reads_the_kind_from_the_questions_of_a_message() -> None:
    planner = load_planner(bundled("policies"))
    plans = [
        PlannedQuery("my mother has gout", "my mother has gout", False),
        PlannedQuery("what can she take for it", "what can she take for it", True),
    ]
    assert planner.asked_kinds(plans) == {"treatment"}


def test_section_only_kinds_do_not_reach_the_extractive_responder() -> None:
    policy = load_extractive_policy()
    assert [k.name for k in policy.kinds("will the rash clear up")] == []
    assert "treatment" in [k.name for k in policy.kinds("how is gout treated")]


def test_a_broken_heading_pattern_stops_loading(tmp_path: Path) -> None:
    path = tmp_path / "extractive.yaml"
    path.write_text(
        "question_kinds:\n  - name: odd\n    question: 'x'\n    heading: '(unclosed'\n", encoding="utf-8"
    )
    with pytest.raises(ConfigurationError):
        load_section_kinds(path)


def test_a_missing_file_means_no_boost(tmp_path: Path) -> None:
    assert load_section_kinds(tmp_path / "extractive.yaml") == SectionKinds()


def test_a_kind_without_a_heading_is_no_section_kind() -> None:
    kinds = SectionKinds(heading_weight=0.01, question_kinds=(QuestionKind("timing", r"\bwhen\b", "before"),))
    assert kinds.asked("when should I take it") == frozenset()
