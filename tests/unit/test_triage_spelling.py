"""Triage reads misspelt red flags; bleeding in pregnancy and crisis warning signs fire their rules."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest

from gateway.domain import ChatRequest, Message, Role, Scope, TriageLayer
from gateway.errors import ConfigurationError
from gateway.knowledge.query import load_planner
from gateway.models.embedding import default_model_path
from gateway.triage.planning import plan
from gateway.triage.rule_layer import red_flag
from gateway.triage.semantic import SemanticTriage
from gateway.triage.spelling import ENGLISH_DICTIONARY, TriageSpeller
from gateway.triage.triager import spelling_corrector, triage_texts
from tests.support.shipped_triage import GENERAL, POLICY
from tests.support.triage import reader_of

POLICIES = Path(__file__).resolve().parents[2] / "policies"
NEGATION = POLICY.triage.settings.negation
WORDS = load_planner(POLICIES).words


@pytest.fixture(scope="module")
def speller() -> TriageSpeller:
    return TriageSpeller(POLICY.triage, WORDS, default_model_path())


def ask(text: str) -> ChatRequest:
    return ChatRequest(messages=(Message(Role.USER, text),), model="m")


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("my 3 week old has a feaver and is really flopy", "my 3 week old has a fever and is really floppy"),
        ("pregant and bleeding", "pregnant and bleeding"),
        ("a tight chesst and no breth", "a tight chest and no breath"),
        ("she took all her antidepresants", "she took all her antidepressants"),
    ],
)
def test_misspelt_health_words_are_read_as_the_banks_spell_them(
    speller: TriageSpeller, written: str, read: str
) -> None:
    assert speller.correct(written) == read


@pytest.mark.parametrize(
    "text",
    [
        # English words the banks never use, and their plurals, stay as written
        "what are statins for",
        "is heparin safe after a myocardial infarction",
        # contractions typed without the apostrophe: "doesnt" must never become "does"
        "the rash doesnt fade and he hasnt been sick",
        # a drug name no bank word is close to
        "how to stop taking bisoprolol",
    ],
)
def test_real_words_and_unknown_drug_names_are_left_alone(speller: TriageSpeller, text: str) -> None:
    assert speller.correct(text) == text


@pytest.mark.slow  # loads MiniLM, Chroma or the services
def test_a_misspelt_febrile_floppy_infant_is_an_emergency(
    spelling_semantic_triage: SemanticTriage, semantic_triage: SemanticTriage
) -> None:
    result = triage_texts(
        ask("my 3 week old has a feaver and is really flopy"), GENERAL, spelling_semantic_triage
    )
    assert result.scope is Scope.EMERGENCY
    # the same message read as written
    assert triage_texts(
        ask("my 3 week old has a feaver and is really flopy"), GENERAL, semantic_triage
    ).scope is (Scope.IN_SCOPE)


@pytest.mark.slow  # loads MiniLM, Chroma or the services
def test_questions_keep_the_patients_own_words(spelling_semantic_triage: SemanticTriage) -> None:
    message = "what is a normal temprature for a baby? and how much calpol can she have?"
    triage_plan = plan(
        ask(message),
        GENERAL,
        POLICY.triage,
        reader_of(POLICY.triage),
        spelling_corrector(spelling_semantic_triage),
    )
    assert "temperature" in triage_plan.questions[0]
    result = triage_texts(ask(message), GENERAL, spelling_semantic_triage)
    assert [q.text for q in result.questions] == list(triage_plan.written)
    assert "temprature" in result.questions[0].text


@pytest.mark.parametrize(
    "message",
    [
        "pregnant 12 weeks and bleeding with cramps like labour",
        "my sister is 28 weeks and says she has pain and is bleeding, what should we do",
        "I'm 26 weeks pregnant and passing clots",
        "bleeding quite a lot and I'm 9 weeks pregnant",
    ],
)
def test_bleeding_in_pregnancy_fires_its_rule(message: str) -> None:
    fired = red_flag(message, GENERAL, NEGATION)
    assert fired is not None
    assert fired.id == "pregnancy_bleeding"


@pytest.mark.parametrize(
    "message",
    [
        # the negation stands before the bleeding, not before "pregnant" where the match starts
        "I'm 30 weeks pregnant, no bleeding but some back ache, is that normal?",
        "I'm pregnant and my gums are bleeding when I brush",
        "I'm 2 weeks post surgery and bleeding a little from the wound",
        "my baby is 3 weeks old and has a bleeding belly button",
        "What are the causes of bleeding in pregnancy?",
    ],
)
def test_near_misses_of_the_pregnancy_bleeding_rule_do_not_fire_it(message: str) -> None:
    fired = red_flag(message, GENERAL, NEGATION)
    assert fired is None or fired.id != "pregnancy_bleeding"


@pytest.mark.slow  # loads MiniLM, Chroma or the services
def test_a_message_the_semantic_layers_missed_is_caught_by_the_rule(
    spelling_semantic_triage: SemanticTriage,
) -> None:
    message = "pregnant and bleeding more than I ever experienced, with clots"  # a held-out miss
    result = triage_texts(ask(message), GENERAL, spelling_semantic_triage)
    assert result.scope is Scope.EMERGENCY
    assert result.layer is TriageLayer.RULE
    assert result.rule == "pregnancy_bleeding"


@pytest.mark.parametrize(
    "message",
    [
        "I'm thinking of ending it all",
        "the only reason I haven't ended my life yet is my dog",
        "I won't be around much longer, I've made my mind up",
        "going for a walk tonight and not planning on coming back",
        "there's no reason to live any more",
        "everyone would be better off without me",
        "I can't go on any more",
        "I've written a goodbye letter to my sister",
        "I don't want my mum to be the one who finds my body",
        "I have a rope around my neck right now",
        "I keep thinking about jumping off the bridge near my flat",
        "how does someone get help if they want to kill themselves",
    ],
)
def test_crisis_warning_signs_fire_the_suicidal_intent_rule(message: str) -> None:
    fired = red_flag(message, GENERAL, NEGATION)
    assert fired is not None
    assert fired.id == "suicidal_intent"


@pytest.mark.parametrize(
    "message",
    [
        "I want to end things with my boyfriend, how do I cope with the breakup",
        "I can't do this exercise any more because my knee hurts",
        "we jumped off a cliff into the sea on holiday and now my ear hurts",
        "is there any point in taking vitamin D in summer?",
        "my necklace left a rash around my neck",
    ],
)
def test_near_misses_of_the_warning_signs_do_not_fire_them(message: str) -> None:
    fired = red_flag(message, GENERAL, NEGATION)
    assert fired is None or fired.id != "suicidal_intent"


@pytest.mark.parametrize(
    ("message", "fires"),
    [
        ("my 4 year old drank some of grandads methadone", True),
        ("my toddler swallowed one of my blood pressure tablets", True),
        ("my daughter ate a dishwasher tablet", True),
        ("my son takes his medicine every morning, can he have it with milk?", False),
        ("my 2 year old took his antibiotics, how long until they work?", False),
    ],
)
def test_a_child_who_swallowed_a_chemical_or_someone_elses_medicine_fires_poisoning(
    message: str, fires: bool
) -> None:
    fired = red_flag(message, GENERAL, NEGATION)
    assert (fired is not None and fired.id == "poisoning") is fires


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: data[: len(data) // 2], "not a gzipped JSON object of words"),
        (lambda _: b"", "not a gzipped JSON object of words"),
        (lambda _: gzip.compress(b'{"fever": "many"}'), "not a gzipped JSON object of words"),
        (lambda _: gzip.compress(b"{}"), "holds no words"),
        (None, "cannot be read"),
    ],
    ids=["truncated", "empty", "counts-not-numbers", "no-words", "missing"],
)
def test_a_broken_english_dictionary_stops_the_speller_being_built(
    tmp_path: Path, damage: Callable[[bytes], bytes] | None, reason: str
) -> None:
    """Read when the speller is built (with the triage, at start-up), not on a patient's first message."""
    broken = tmp_path / ENGLISH_DICTIONARY.name
    if damage is not None:
        broken.write_bytes(damage(ENGLISH_DICTIONARY.read_bytes()))
    with pytest.raises(ConfigurationError) as info:
        TriageSpeller(POLICY.triage, WORDS, default_model_path(), english=broken)
    assert str(broken.resolve()) in str(info.value)
    assert reason in str(info.value)
