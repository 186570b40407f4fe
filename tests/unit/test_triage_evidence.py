"""Evidence-bound triage (#31): the health gate, each red flag's signs, negation, history, vitals, long
posts, information questions. No model is loaded: the semantic layers are given fixed scores, so these
tests pin the rule layers, and what the semantic layers may and may not do with those scores."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from gateway.domain import ChatRequest, Message, Role, Scope, Triage, TriageLayer
from gateway.errors import ConfigurationError
from gateway.messages import Messages
from gateway.triage.decision import decide, decide_by_evidence
from gateway.triage.evidence_policy import Binding, SignRule
from gateway.triage.outcome import red_flag_notes
from gateway.triage.planning import plan
from gateway.triage.policy import TriagePolicy, TriageSettings, load_triage_policy
from gateway.triage.vitals import (
    check_vitals,
    names_child,
    read_age,
    read_durations,
    read_fever_days,
    read_vitals,
)
from gateway.validation import validate
from tests.support.shipped_triage import GENERAL, REPO, TRIAGE, VITALS, copy_policies, judge, score
from tests.support.triage import reader_of, readings_of, with_unbound_rule, without_unbound_rule

GATE_ONLY = without_unbound_rule(TRIAGE)
"""The shipped policy without ``evidence.yaml`` ``unbound`` (test_triage_unbound.py): the gate, the
bars and adoption as the semantic layers apply them before that rule."""
BOUND = with_unbound_rule(TRIAGE)
"""The shipped policy with ``unbound`` on (as it ships)."""
CATEGORIES = tuple(dict.fromkeys(TRIAGE.categories))


def bound_by_signs(*categories: str) -> TriagePolicy:
    """The shipped policy with these red flags set to ``semantic: signs`` (an operator's choice)."""
    return bound(categories, "signs")


def bound(categories: tuple[str, ...] | list[str], binding: Binding) -> TriagePolicy:
    """The shipped policy with these red flags' ``semantic`` set to ``binding``."""
    rules = dict(TRIAGE.evidence.categories)
    for category in categories:
        rules[category] = dataclasses.replace(rules[category], semantic=binding)
    return dataclasses.replace(TRIAGE, evidence=dataclasses.replace(TRIAGE.evidence, categories=rules))


def evidence_of(result: Triage) -> str:
    return " | ".join(e.text.lower() for e in result.evidence)


# --- the health gate ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "play my workout playlist",
        "order a large latte for pickup",
        "my phone is about to die, turn on low power mode",
        "how do I stop dying on the first boss",
        "lock my bank account, someone is stealing from me",
    ],
)
def test_no_emergency_layer_fires_without_health_content(message: str) -> None:
    assert not reader_of(TRIAGE).read(message).health
    # even a classifier certain of an emergency, and an exemplar right beside one, cannot fire
    result = judge(message, score(emergency=0.99, near="breathing", similarity=0.95))
    assert result.scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "my chest hurts",
        "can I take ibuprofen with paracetamol?",
        "I want to kill myself",
        "he's not breathing",
    ],
)
def test_health_content_opens_the_gate(message: str) -> None:
    assert reader_of(TRIAGE).read(message).health


# --- evidence-bound red flags ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "category", "sign"),
    [
        ("my breathing has become really hard even at rest", "breathing", "at rest"),
        ("he can only get one word at a time out, he's so breathless", "breathing", "one word at a time"),
        ("crushing pain in my chest going down my left arm", "chest_pain", "left arm"),
        ("the cut on my leg is bleeding through the bandages and won't stop", "heavy_bleeding", "won't stop"),
        ("I swallowed a handful of my sleeping pills an hour ago", "overdose", "handful"),
        ("my 3 year old drank some bleach from under the sink", "poisoning", "bleach"),
        ("my wife's face is drooping on one side", "stroke_signs", "drooping"),
        (
            "the swelling around my eye is spreading and it hurts to move it",
            "sudden_vision_loss",
            "spreading",
        ),
        ("swollen calf after my operation and now I'm short of breath", "blood_clot", "short of breath"),
        ("fever and now my dad is confused and not making sense", "sepsis", "confused"),
        ("I'm 34 weeks and the baby has stopped moving", "reduced_fetal_movement", "stopped moving"),
        # described rather than named (2026-11-26, second pass)
        ("used the epipen on him but his throat still feels like it is closing", "anaphylaxis", "closing"),
        ("the soft spot on top of my newborn's head looks swollen and tense", "sick_infant", "soft spot"),
        ("my toddler pulled the kettle over and boiling water went all down her arm", "burns", "kettle"),
        ("my husband is slumped in his chair and I can't get him to respond", "unconscious_or_seizure",
         "can't get him to respond"),
    ],
)  # fmt: skip
def test_signs_with_a_severity_word_fire_their_own_category(message: str, category: str, sign: str) -> None:
    result = judge(message)
    assert (result.scope, result.rule) == (Scope.EMERGENCY, category), result
    assert result.layer in (TriageLayer.SIGNS, TriageLayer.RULE)
    assert sign in evidence_of(result)


@pytest.mark.parametrize(
    ("message", "near"),
    [
        ("what does a 5mg amlodipine tablet look like?", "overdose"),
        ("how long does bisoprolol take to reach the blood?", "heavy_bleeding"),
        ("how do I lower my beta-blocker dose slowly?", "overdose"),
        ("my knee has been a bit sore after running", "blood_clot"),
    ],
)
def test_bound_by_signs_the_semantic_layers_cannot_invent_a_red_flag_whose_signs_are_absent(
    message: str, near: str
) -> None:
    assert reader_of(TRIAGE).signs(reader_of(TRIAGE).read(message), near) is None
    result = judge(message, score(emergency=0.99, near=near, similarity=0.95), bound_by_signs(near))
    assert result.scope is Scope.IN_SCOPE, result


@pytest.mark.parametrize(
    ("message", "near"),
    [
        # (the questions, "how long does bisoprolol take to reach the blood?", are answered
        # since the fifth pass: a question about a topic opens no gate, test_triage_asking.py)
        ("bisoprolol makes my hands go cold", "heavy_bleeding"),
        ("I've been on a beta-blocker for a year", "overdose"),
        ("my knee has been a bit sore after running", "blood_clot"),
    ],
)
def test_by_default_the_gate_alone_binds_the_semantic_layers(message: str, near: str) -> None:
    # the shipped policy binds every red flag by the gate (a configuration that kept main's emergency
    # recall where binding to signs lost it, docs/safety.md): a sure classifier or an exemplar right
    # beside the nearest category raises it once the text has health content, with no sign to name
    assert TRIAGE.evidence.categories[near].semantic == "gate"
    assert reader_of(TRIAGE).read(message).health_terms
    result = judge(message, score(emergency=0.99, near=near, similarity=0.95), GATE_ONLY)
    assert (result.scope, result.rule, result.evidence) == (Scope.EMERGENCY, near, ()), result
    # with ``unbound`` on, a raise with no red flag's signs and no acuity gets the safety note
    assert (
        judge(message, score(emergency=0.99, near=near, similarity=0.95), BOUND).scope is not Scope.EMERGENCY
    )
    assert result.layer in (TriageLayer.EXEMPLAR, TriageLayer.CLASSIFIER)
    # without the semantic layers' word the same text is an ordinary health question
    assert judge(message).scope is Scope.IN_SCOPE


def test_the_semantic_layers_can_raise_a_category_whose_signs_are_present() -> None:
    message = "loads of my sleeping tablets are missing from the box"  # an overdose's signs, nothing taken
    for policy in (TRIAGE, bound_by_signs("overdose")):
        assert judge(message, policy=policy).scope is Scope.IN_SCOPE
        result = judge(message, score(emergency=0.9, near="overdose", similarity=0.5), policy)
        expected = (Scope.EMERGENCY, TriageLayer.CLASSIFIER, "overdose")
        assert (result.scope, result.layer, result.rule) == expected
        assert "tablets" in evidence_of(result)  # the signs present are named either way
        exemplar = judge(message, score(near="overdose", similarity=0.9), policy)
        assert exemplar.layer is TriageLayer.EXEMPLAR


# --- a red flag bound by the health gate alone (thoughts of suicide) -------------------------------


def test_thoughts_of_suicide_are_not_bound_by_a_word_list() -> None:
    assert TRIAGE.evidence.categories["suicidal_intent"].semantic == "gate"
    # feelings, with none of the suicide words: the gate opens, the category's own signs are absent
    message = "everything feels heavy and I'm so tired of trying, I don't see how things get better"
    reader = reader_of(TRIAGE)
    assert reader.read(message).health_terms
    assert reader.signs(reader.read(message), "suicidal_intent") is None
    assert judge(message).scope is Scope.IN_SCOPE
    result = judge(message, score(emergency=0.9, near="suicidal_intent", similarity=0.5))
    expected = (Scope.EMERGENCY, TriageLayer.CLASSIFIER, "suicidal_intent")
    assert (result.scope, result.layer, result.rule) == expected
    assert result.evidence == ()  # no word to name: the deciding layer is what the clinician sees
    exemplar = judge(message, score(near="suicidal_intent", similarity=0.9))
    assert (exemplar.layer, exemplar.rule) == (TriageLayer.EXEMPLAR, "suicidal_intent")


def test_a_gate_bound_red_flag_is_raised_only_when_it_is_the_nearest_category() -> None:
    message = "everything feels heavy and I'm so tired of trying, I don't see how things get better"
    # the classifier is sure, but the nearest category is a signs-bound one whose signs are absent:
    # suicide is not raised in its place, and nothing is
    sure_overdose = score(emergency=0.99, near="overdose", similarity=0.9)
    assert judge(message, sure_overdose, bound_by_signs("overdose")).scope is Scope.IN_SCOPE
    # the shipped policy binds overdose by the gate too: the nearest category is the one raised
    result = judge(message, sure_overdose, GATE_ONLY)
    assert (result.scope, result.rule) == (Scope.EMERGENCY, "overdose")


def test_every_red_flag_is_bound_by_the_gate_by_default() -> None:
    """Except cauda equina, bound by its signs: its exemplars sit near routine back-pain questions; and
    hypothermia and a very high blood pressure with symptoms, whose exemplars the classifier was not
    trained on."""
    bindings = {name: r.semantic for name, r in TRIAGE.evidence.categories.items()}
    assert bindings.pop("cauda_equina") == "signs"
    assert bindings.pop("hypothermia") == "signs"
    assert bindings.pop("hypertensive_emergency") == "signs"
    assert set(bindings.values()) == {"gate"}


def with_bars(probability: float, margin: float) -> TriagePolicy:
    """The shipped policy (``unbound`` off) with the bars a red flag raised without its signs must pass."""
    settings = dataclasses.replace(GATE_ONLY.settings, unbound_probability=probability, unbound_margin=margin)
    rules = {c: dataclasses.replace(r, unbound_probability=None, unbound_margin=None)
             for c, r in TRIAGE.evidence.categories.items()}  # fmt: skip
    evidence = dataclasses.replace(GATE_ONLY.evidence, categories=rules)
    return dataclasses.replace(GATE_ONLY, settings=settings, evidence=evidence)


def test_a_red_flag_without_its_signs_needs_a_confident_read_under_strict_bars() -> None:
    strict = with_bars(0.95, 0.08)
    wrist = "fell off my bike onto my wrist, it is really swollen and hurts to move"
    unsure = score(emergency=0.9, near="stroke_signs", similarity=0.7)  # contrast 0.3
    assert judge(wrist, unsure, GATE_ONLY).rule == "stroke_signs"  # the layers' own bars
    assert judge(wrist, unsure, strict).scope is not Scope.EMERGENCY
    sure = score(emergency=0.97, near="stroke_signs", similarity=0.7)
    assert judge(wrist, sure, strict).rule == "stroke_signs"
    # a red flag whose signs the message holds is raised at the layers' own bars, strict or not
    bleeding = "cut my hand and the blood is pumping out"
    assert judge(bleeding, unsure, strict).scope is Scope.EMERGENCY


def test_under_strict_bars_an_emergency_read_of_despair_is_adopted_by_thoughts_of_suicide() -> None:
    # the bars of triage.yaml only: suicidal_intent keeps its own (the layers' bars) and adopts_when
    bars = dataclasses.replace(TRIAGE.settings, unbound_probability=0.95, unbound_margin=0.08)
    strict = dataclasses.replace(GATE_ONLY, settings=bars)
    despair = "I've been struggling so much since the divorce, I'm lonely and I can't handle anything"
    reader = reader_of(TRIAGE)
    assert reader.signs(reader.read(despair), "suicidal_intent") is None
    # the nearest exemplar is a physical red flag whose signs are absent, the read not sure enough
    physical = score(emergency=0.9, near="chest_pain", similarity=0.5)
    assert judge(despair, physical, GATE_ONLY).rule == "chest_pain"  # bars off: the nearest category
    assert judge(despair, physical, BOUND).rule == "suicidal_intent"  # ``unbound`` on: re-homed
    adopted = judge(despair, physical, strict)
    assert (adopted.scope, adopted.layer, adopted.rule) == (
        Scope.EMERGENCY,
        TriageLayer.CLASSIFIER,
        "suicidal_intent",
    )
    # a crying child with a fever speaks of no despair: nothing adopts the read
    child = "my 3 year old has a temperature of 38 and keeps crying at night"
    assert (
        judge(child, score(emergency=0.9, near="sick_infant", similarity=0.5), strict).scope
        is not Scope.EMERGENCY
    )
    # without adopts_when the read is dropped
    rules = dict(TRIAGE.evidence.categories)
    rules["suicidal_intent"] = dataclasses.replace(rules["suicidal_intent"], adopts_when=())
    evidence = dataclasses.replace(GATE_ONLY.evidence, categories=rules)
    no_adoption = dataclasses.replace(strict, evidence=evidence)
    assert judge(despair, physical, no_adoption).scope is not Scope.EMERGENCY


def test_the_bars_are_validated_with_the_key_named() -> None:
    with pytest.raises(ConfigurationError, match=r"unbound_probability: must be <= 1\.0, got 1\.5"):
        validate(TriageSettings, {"unbound_probability": 1.5}, "triage.yaml")
    with pytest.raises(ConfigurationError, match=r"unbound_margin: must be >= -1\.0, got -2\.0"):
        validate(SignRule, {"requires": [["overdose"]], "unbound_margin": -2.0}, "evidence.yaml")


@pytest.mark.parametrize(
    "message",
    [
        "play my workout playlist",
        "my phone is about to die, turn on low power mode",
        "how do I stop dying on the first boss",
    ],
)
def test_a_gate_bound_red_flag_still_needs_the_health_gate(message: str) -> None:
    gated = bound(["suicidal_intent"], "gate")
    assert not reader_of(gated).read(message).health_terms
    result = judge(message, score(emergency=0.99, near="suicidal_intent", similarity=0.95), gated)
    assert result.scope is not Scope.EMERGENCY
    assert judge(message, score(emergency=0.99, near="suicidal_intent", similarity=0.95)).scope is not (
        Scope.EMERGENCY
    )  # as shipped
    # bound to nothing (an operator's choice), the semantic layers decide alone: the price of the
    # posts that name no gate term (docs/safety.md, the figures)
    free = judge(
        message,
        score(emergency=0.99, near="suicidal_intent", similarity=0.95),
        bound(["suicidal_intent"], "free"),
    )
    assert (free.scope, free.rule) == (Scope.EMERGENCY, "suicidal_intent")
    # and only the red flag bound to nothing: the same certainty near a gated one raises nothing
    assert (
        judge(message, score(emergency=0.99, near="overdose", similarity=0.95)).scope is not Scope.EMERGENCY
    )


# --- negation -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("negated", "affirmed"),
    [
        ("no trouble breathing at rest, just a cough", "trouble breathing at rest, and a cough"),
        ("denies chest pain or sweating", "has chest pain and sweating"),
        (
            "my son hit his head, didn't lose consciousness and hasn't been sick",
            "my son hit his head and has been sick",
        ),
        ("without any face drooping", "with his face drooping"),
    ],
)
def test_negated_signs_do_not_count(negated: str, affirmed: str) -> None:
    assert judge(negated).scope is not Scope.EMERGENCY
    assert judge(affirmed).scope is Scope.EMERGENCY


def test_a_denial_of_suicidal_thoughts_is_not_trusted_but_the_word_alone_can_be_negated() -> None:
    assert judge("I'm not suicidal, I just want to kill myself").scope is Scope.EMERGENCY
    assert judge("I'm not suicidal, I just feel flat, what helps with low mood?").scope is Scope.IN_SCOPE


# --- long posts: the worst current complaint, not history ------------------------------------------


def test_background_history_and_resolved_episodes_do_not_fire() -> None:
    for message in (
        "I had a bleed from a stomach ulcer in 2019. Can I take aspirin for my headache?",
        "I had a DVT in my leg in 2020, can I take the combined pill now?",
        "When I was 17 I took an overdose. I've been well since and I'd like to try for a baby.",
        "Last winter my mum had a urine infection and became really confused, it cleared with antibiotics.",
        # a month named as the date, without its year (s57)
        "My sister took an overdose last March. Can she take paracetamol for a headache now?",
        "I had a heavy bleed after my miscarriage back in May. Is it safe to try again?",
    ):
        assert judge(message).scope is not Scope.EMERGENCY, message


def test_a_date_does_not_make_what_happens_now_history() -> None:
    """A month named as a past date is history, as a year is (a bare "in June" may be to come);
    neither outweighs a time of now in its sentence (minutes or hours ago were read as history beside a
    year before s57)."""
    for message in (
        "My due date is in March and I'm bleeding heavily now",
        "I took 30 paracetamol an hour ago, last March I was fine",
        "expecting our first baby in june, i'm losing a lot of blood with big clots",
        "I took 30 paracetamol an hour ago, in 2023 I was fine",
        "in may i get hay fever but today my throat is swelling and i can't breathe",
    ):
        assert judge(message).scope is Scope.EMERGENCY, message


def test_a_long_post_is_judged_by_its_worst_current_complaint() -> None:
    history = (
        "Bit of background first. I'm 61, had my gallbladder out in 2018 and I have mild arthritis. "
        "I walk every day and I take glucosamine and a vitamin D tablet. My GP is happy with my blood "
        "pressure and my cholesterol was fine last year. I sleep reasonably and I eat well. "
    )
    routine = history + "What can I do about stiff knees in the morning?"
    assert judge(routine).scope is not Scope.EMERGENCY
    worst = history * 3 + "Tonight I have crushing pain in my chest spreading into my jaw and I'm sweating."
    result = judge(worst)
    assert (result.scope, result.rule) == (Scope.EMERGENCY, "chest_pain")


# --- information questions vs happening now -------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "note"),
    [
        ("what are the symptoms of an overdose?", "overdose"),
        ("how much paracetamol is too much?", "overdose"),
        ("is it true you can overdose on water?", "overdose"),
        ("what are the signs of a stroke?", "stroke_signs"),
    ],
)
def test_information_questions_are_answered_with_the_safety_note(message: str, note: str) -> None:
    result = judge(message)
    assert result.scope is Scope.IN_SCOPE, result
    assert red_flag_notes(result) == (note,)


@pytest.mark.parametrize(
    "message",
    [
        "I've taken too much paracetamol, what are the symptoms of an overdose?",
        "how do I know if I'm having a stroke? my face is drooping",
        "A 70-year-old presents with sudden slurred speech and a facial droop",
    ],
)
def test_a_report_of_it_happening_now_is_an_emergency(message: str) -> None:
    assert judge(message).scope is Scope.EMERGENCY


def test_the_safety_note_for_an_overdose_question_gives_the_crisis_lines() -> None:
    text = Messages(REPO / "templates", GENERAL).render("red_flag_information", rule="overdose")
    assert "116 123" in text
    assert GENERAL.emergency_number in text


def test_the_emergency_message_names_the_signs_found() -> None:
    result = judge("my breathing has become really hard even at rest")
    text = Messages(REPO / "templates", GENERAL).render(
        "emergency", rule=result.rule, recognised=result.recognised, signs=[e.text for e in result.evidence]
    )
    assert '"at rest"' in text
    assert result.recognised is not None
    assert result.recognised in text


# --- vital signs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "vital", "value"),
    [
        ("temp of 38.4", "temperature_c", 38.4),
        ("she's 39,5 degrees", "temperature_c", 39.5),
        ("fever of 102F", "temperature_c", 38.9),
        ("temperature 104 fahrenheit", "temperature_c", 40.0),
        ("pulse 135", "heart_rate", 135.0),
        ("HR 44 bpm", "heart_rate", 44.0),
        ("breathing 70 times a minute", "breathing_rate", 70.0),
        ("RR 32", "breathing_rate", 32.0),
        ("BP 82/50", "systolic_bp", 82.0),
        ("190/120 mmHg", "systolic_bp", 190.0),
        ("sats 89%", "spo2", 89.0),
        ("blood sugar 2.1", "glucose_mmol", 2.1),
        ("glucose 45 mg/dL", "glucose_mmol", 2.5),
        ("libre says 1.8", "glucose_mmol", 1.8),
    ],
)
def test_vital_signs_are_read_in_their_units(text: str, vital: str, value: float) -> None:
    readings = read_vitals(text)
    assert [(r.vital, r.value) for r in readings] == [(vital, value)]


@pytest.mark.parametrize(
    ("text", "years"),
    [
        ("my 2 year old", 2.0),
        ("she is 6 weeks old", 6 * 7 / 365.25),
        ("68M with chest pain", 68.0),
        ("a 45-year-old man", 45.0),
        ("aged 70", 70.0),
        ("I'm 34 and pregnant", 34.0),
        ("temp 102F", None),
        ("my newborn", 0.02),
    ],
)
def test_ages_are_read(text: str, years: float | None) -> None:
    age = read_age(text, VITALS)
    assert age == pytest.approx(years) if years is not None else age is None


def test_durations_are_read_in_days() -> None:
    assert [days for _, days in read_durations("coughing for 10 days and feverish for 3 hours")] == [
        10.0,
        pytest.approx(3 / 24),
    ]


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("she's been red hot, 39.8, five days now", [5.0]),
        ("temperature 6 days running and still not eating", [6.0]),
        ("this is day 5 of his fever", [5.0]),
        ("it's the sixth day of the temperature", [6.0]),
        ("feverish for a couple of days", [2.0]),
        ("burning up since last week", [7.0]),
        ("we have an appointment on day 2 pm", []),
        # spans named without a count (vitals.yaml durations): days at least
        ("hot since Monday", [1.0]),  # a weekday is at least a day ago (how many depends on today)
        ("feverish since last night", [1.0]),
        ("a temperature for the past 3 days", [3.0]),
        ("burning up over the weekend", [2.0]),
        ("temps since Friday night and not drinking", [1.0]),
    ],
)
def test_lay_durations_are_read(text: str, days: list[float]) -> None:
    assert [value for _, value in read_durations(text, VITALS.durations)] == days


def test_named_spans_of_time_are_read_only_with_the_policy() -> None:
    assert read_durations("hot since Monday") == []
    assert read_durations("hot since Monday", VITALS.durations) == [("since Monday", 1.0)]
    # the fever's days, as the vitals layer reads them
    fever = read_fever_days("she's had a fever over the weekend", named=VITALS.durations)
    assert [(r.vital, r.value) for r in fever] == [("fever_days", 2.0)]
    assert check_vitals("my 3 year old has had a high temperature since last week", VITALS)


@pytest.mark.parametrize(
    "message",
    [
        "my 3 year old has had a temperature of 39.5 five days now, on and off with calpol",
        "toddler still burning up, this is day 6 of the fever",
    ],
)
def test_a_fever_of_days_in_lay_wording_fires_under_five(message: str) -> None:
    result = judge(message)
    assert (result.scope, result.layer) == (Scope.EMERGENCY, TriageLayer.VITALS)


def test_swelling_beside_the_eye_that_spreads_is_an_emergency() -> None:
    result = judge("the swelling next to his eye has spread since this morning and he's hot")
    assert result.scope is Scope.EMERGENCY
    assert result.rule == "sudden_vision_loss"


@pytest.mark.parametrize(
    ("message", "fires"),
    [
        ("my 6 week old has a temperature of 38.2", True),  # NICE NG143: >= 38 under 3 months
        ("my 6 month old has a temperature of 38.2", False),
        ("my 2 year old is breathing 70 times a minute", True),  # NG143: RR > 60
        ("I'm 45 and my pulse is 135 sitting down", True),  # NEWS2 red
        ("I'm 45 and my heart rate went up to 180 on my watch during intervals", False),  # exercise
        ("my oxygen sats are 89%", True),
        ("my blood pressure is 85/50 and I feel faint", True),
        ("my temperature is 38.5", False),
    ],
)
def test_values_outside_the_age_limits_fire_the_vitals_layer(message: str, fires: bool) -> None:
    assert bool(check_vitals(message, VITALS)) is fires
    result = judge(message)
    if fires:
        assert (result.scope, result.layer) == (Scope.EMERGENCY, TriageLayer.VITALS)
        assert any(e.kind == "vital" for e in result.evidence)
    else:
        assert result.scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    ("message", "category"),
    [
        # NICE NG143 amber rates by age: far above a small child's normal, below the red limits
        ("my 20 month old is breathing 48 times a minute", "breathing"),
        ("our toddler's breathing rate is about 45", "breathing"),  # "toddler": read at 2 years
        ("my 9 month old is taking 55 breaths per minute", "breathing"),
        ("my 10 month old's pulse is 170", "abnormal_heart_rate"),
        ("my 3 year old has a heart rate of 146 and feels hot", "abnormal_heart_rate"),
        ("my 4 month old has a temperature of 39.3", "sick_infant"),
    ],
)
def test_a_small_childs_rate_is_read_against_its_age(message: str, category: str) -> None:
    result = judge(message)
    assert (result.scope, result.layer, result.rule) == (Scope.EMERGENCY, TriageLayer.VITALS, category)
    assert any("NG143 amber" in e.text for e in result.evidence)


@pytest.mark.parametrize(
    "message",
    [
        "my 8 year old is breathing 30 times a minute",  # over 5: an older child's rate, not NG143's
        "my 20 month old is breathing 34 times a minute",  # within the range for the age
        "my 3 year old's heart rate was 150 while running around the park",  # exertion
        "my 8 month old has a temperature of 39.3",  # over 6 months: not the 3 to 6 month limit
        "I'm 40 and breathing 22 times a minute",  # an adult's rate
    ],
)
def test_a_rate_within_the_limits_for_the_age_does_not_fire(message: str) -> None:
    assert not check_vitals(message, VITALS)


def test_child_words_and_exercise_are_read_with_patterns_compiled_once() -> None:
    assert VITALS.child_patterns is VITALS.child_patterns  # compiled once, with the policy
    assert VITALS.exertion_patterns is VITALS.exertion_patterns
    assert names_child("my TODDLER has a rash", VITALS)
    assert not names_child("I have a rash", VITALS)
    assert not check_vitals("heart rate 160 during my run", VITALS)  # exercise: not a resting rate
    assert check_vitals("heart rate 160 sitting on the sofa", VITALS)


@pytest.mark.parametrize(
    ("message", "fires"),
    [
        # NICE NG143 amber: a fever lasting 5 days or more under 5
        ("our 2 year old has been running a fever for six days", True),
        ("my 11 month old has been feverish and off his milk for 5 days", True),
        ("toddler with a temperature of 38.7 for a week", True),
        ("my 3 year old has had a fever for 2 days", False),  # not yet 5 days
        ("my 9 year old has had a fever for 6 days", False),  # over 5
        ("my 2 year old had a fever. I have had a cough for 6 days", False),  # the duration is the cough's
    ],
)
def test_days_of_fever_are_read_against_the_age(message: str, fires: bool) -> None:
    result = judge(message)
    if fires:
        expected = (Scope.EMERGENCY, TriageLayer.VITALS, "sick_infant")
        assert (result.scope, result.layer, result.rule) == expected
        assert any("5 days or more" in e.text for e in result.evidence)
    else:
        assert result.scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    ("message", "category"),
    [
        # a clinician's vignette reads like a report: its clinical words are signs too
        ("An 8 year old girl attends with RLQ tenderness and a temperature of 38.9", "acute_abdomen"),
        ("my son has pain low on the right side of his tummy and a fever", "acute_abdomen"),
        ("72M, three weeks post-op after a bowel resection, now a hot swollen right calf", "blood_clot"),
        ("she had her knee replaced two weeks ago and now her calf is swollen and tender", "blood_clot"),
        ("On exam the infant is tachypnoeic with subcostal recession at rest", "breathing"),
    ],
)
def test_vignette_wording_gives_the_red_flags_signs(message: str, category: str) -> None:
    result = judge(message)
    assert (result.scope, result.layer, result.rule) == (Scope.EMERGENCY, TriageLayer.SIGNS, category)


@pytest.mark.parametrize(
    "message",
    [
        "my 6 year old has a tummy ache and a slight temperature",  # no site, no severity word
        "is pain on the lower right side always appendicitis?",  # a question about the topic
        "how long after a hip replacement can I drive?",  # a clot risk, no leg signs
    ],
)
def test_vignette_words_alone_do_not_make_an_emergency(message: str) -> None:
    assert judge(message).scope is not Scope.EMERGENCY


@pytest.mark.parametrize("message", ["79F with a sore throat for two days", "an 81f with a cough today"])
def test_an_age_and_sex_is_not_a_fahrenheit_temperature(message: str) -> None:
    assert not [r for r in read_vitals(message) if r.vital == "temperature_c"]
    assert judge(message).scope is not Scope.EMERGENCY


# --- validation -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("file", "change", "key"),
    [
        ("evidence.yaml", lambda d: d["categories"]["burns"].update(requires=[["no_such_group"]]),
         "categories.burns.requires[0]"),
        ("evidence.yaml", lambda d: d["terms"]["bleeding"].update(patterns=["(unclosed"]), "terms.bleeding"),
        ("evidence.yaml", lambda d: d["categories"].pop("burns"), "categories.burns"),
        ("evidence.yaml", lambda d: d.update(window_sentences=0), "window_sentences"),
        ("evidence.yaml", lambda d: d["categories"]["burns"].update(semantic="never"),
         "categories.burns.semantic"),
        ("evidence.yaml", lambda d: d["categories"]["suicidal_intent"].update(adopts_when=["no_such_group"]),
         "categories.suicidal_intent.adopts_when[0]"),
        # folded into episode.residual (a pattern's group `event`): an old policy naming it is told so
        ("evidence.yaml", lambda d: d["episode"].update(residual_anchor=["x"]), "episode.residual_anchor"),
        ("evidence.yaml", lambda d: d["categories"]["suicidal_intent"].update(safe_unless=["no_such_group"]),
         "categories.suicidal_intent.safe_unless[0]"),
        ("evidence.yaml", lambda d: d["asking"].update(confirms=["(unclosed"]), "asking.confirms"),
        ("vitals.yaml", lambda d: d["limits"][0].update(vital="weight"), "limits[0].vital"),
        ("vitals.yaml", lambda d: d["limits"][0].update(source="nowhere"), "limits[0].source"),
        ("vitals.yaml", lambda d: d["limits"][1].pop("below"), "limits[1]"),
    ],
)  # fmt: skip
def test_a_bad_evidence_or_vitals_policy_names_the_file_and_key(
    tmp_path: Path, file: str, change: Callable[[Any], object], key: str
) -> None:
    directory = copy_policies(tmp_path)
    path = directory / file
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigurationError) as info:
        load_triage_policy(directory)
    assert info.value.source.endswith(file)
    assert info.value.key.startswith(key), info.value.key


def test_every_vital_limit_cites_a_source() -> None:
    assert all(VITALS.sources[limit.source].strip() for limit in VITALS.limits)
    assert {"news2", "ng143"} <= set(VITALS.sources)


def test_signs_can_be_replaced_by_the_operator() -> None:
    rules = dict(TRIAGE.evidence.categories)
    rules["breathing"] = dataclasses.replace(rules["breathing"], escalate=())
    policy = dataclasses.replace(TRIAGE, evidence=dataclasses.replace(TRIAGE.evidence, categories=rules))
    request = ChatRequest(messages=(Message(Role.USER, "I'm gasping even at rest"),), model="m")
    triage_plan = plan(request, GENERAL, policy, reader_of(policy))
    result = decide(
        triage_plan,
        [score()] * len(triage_plan.texts),
        GENERAL,
        policy,
        readings_of(triage_plan, GENERAL, policy),
    )
    assert result.scope is not Scope.EMERGENCY


# --- supposing, denying, figurative wording (#31 item 2) ------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "what if I took too much paracetamol by accident?",
        "is it possible to bleed inside from mixing ibuprofen and aspirin?",
        "I'm worried that I might have a stroke like my dad, what can I do to lower the risk?",
        "how many paracetamol would be too many in one day?",
    ],
)
def test_a_supposing_question_gives_no_signs_and_is_answered(message: str) -> None:
    # even with the semantic layers sure of an emergency, nothing is reported as happening now
    reading = reader_of(TRIAGE).read(message)
    assert reading.health
    assert not any(h for h in reading.hits if not h.supposed and not h.negated and h.group != "symptom"
                   and h.group in ("overdose_amount", "took", "bleeding", "stroke_word"))  # fmt: skip
    assert judge(message).scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "I'm worried because I've just taken 30 paracetamol",
        "what if he stops breathing? his lips have gone blue right now",
        "I'm scared, my husband's face is drooping on one side and he can't lift his arm",
    ],
)
def test_a_supposing_word_beside_a_report_of_now_still_fires(message: str) -> None:
    assert judge(message).scope is Scope.EMERGENCY


def test_thoughts_of_suicide_in_a_supposing_clause_are_still_read() -> None:
    assert judge("what if I just took all my pills and ended it all").scope is Scope.EMERGENCY


def test_a_red_flag_named_only_in_denial_is_not_raised_by_the_semantic_layers() -> None:
    sure = score(emergency=0.99, near="chest_pain", similarity=0.95)
    assert judge("no chest pain, just a sore throat for two days", sure).scope is not Scope.EMERGENCY
    # the same certainty with the sign present, or with the denial switched off, raises it
    assert judge("some chest pain and a sore throat for two days", sure).scope is Scope.EMERGENCY
    off = dataclasses.replace(
        GATE_ONLY,
        settings=dataclasses.replace(
            TRIAGE.settings, negation=dataclasses.replace(TRIAGE.settings.negation, denials=False)
        ),
    )
    assert judge("no chest pain, just a sore throat for two days", sure, off).scope is Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "I'm dying to see the new film, what time does it start?",
        "this traffic is killing me",
        "she was heartbroken when her team lost",
        "play Heart Attack by Demi Lovato",
        "my phone is dying, turn on low power mode",
    ],
)
def test_figurative_wording_is_neither_a_sign_nor_health_content(message: str) -> None:
    assert not reader_of(TRIAGE).read(message).health
    assert (
        judge(message, score(emergency=0.99, near="chest_pain", similarity=0.95)).scope is not Scope.EMERGENCY
    )


def test_a_literal_report_beside_an_idiom_still_fires() -> None:
    assert judge("my chest is killing me, crushing pain going down my left arm").scope is Scope.EMERGENCY


# --- the encoder is skipped when the rule layers decide (#31, latency) ---------------------------


def test_an_emergency_the_rule_layers_decide_needs_no_semantic_score() -> None:
    request = ChatRequest(
        messages=(Message(Role.USER, "my breathing has become really hard even at rest. Is it my asthma?"),),
        model="m",
    )
    triage_plan = plan(request, GENERAL, TRIAGE, reader_of(TRIAGE))
    early = decide_by_evidence(triage_plan, GENERAL, TRIAGE, readings_of(triage_plan, GENERAL, TRIAGE))
    scores = [score()] * len(triage_plan.texts)
    full = decide(triage_plan, scores, GENERAL, TRIAGE, readings_of(triage_plan, GENERAL, TRIAGE))
    assert early is not None
    assert (early.scope, early.layer, early.evidence) == (full.scope, full.layer, full.evidence)


@pytest.mark.parametrize(
    "message",
    [
        "what are the signs of a stroke? my dad's face is drooping and he can't lift his arm",
        "I've had a cough for a week. Can I take ibuprofen with paracetamol? Is honey ok for kids?",
        "play my workout playlist",
    ],
)
def test_the_rule_evidence_read_before_encoding_is_reused_and_decides_the_same(message: str) -> None:
    # each text is read by the rule layers once per request (#31, latency): what decide_by_evidence read
    # is handed to decide, which reads only the texts it adds (the whole message), with the same outcome
    request = ChatRequest(messages=(Message(Role.USER, message),), model="m")
    triage_plan = plan(request, GENERAL, TRIAGE, reader_of(TRIAGE))
    readings = readings_of(triage_plan, GENERAL, TRIAGE)
    decide_by_evidence(triage_plan, GENERAL, TRIAGE, readings)
    assert readings.texts == set(triage_plan.questions)
    scores = [score()] * len(triage_plan.texts)
    # against the default: no readings handed in, so decide builds its own reader and reads everything
    assert decide(triage_plan, scores, GENERAL, TRIAGE, readings) == decide(
        triage_plan, scores, GENERAL, TRIAGE
    )
    assert readings.texts <= set(triage_plan.texts)


@pytest.mark.parametrize(
    "message",
    ["what are the signs of a stroke?", "can I take ibuprofen with paracetamol?", "play my workout playlist"],
)
def test_without_a_rule_layer_emergency_the_semantic_layers_are_asked(message: str) -> None:
    request = ChatRequest(messages=(Message(Role.USER, message),), model="m")
    triage_plan = plan(request, GENERAL, TRIAGE, reader_of(TRIAGE))
    assert decide_by_evidence(triage_plan, GENERAL, TRIAGE, readings_of(triage_plan, GENERAL, TRIAGE)) is None


def test_without_its_signs_a_red_flag_needs_an_emergency_read_nearer_than_the_contrast_bank() -> None:
    # triage.yaml unbound bars: a red flag the message gives no sign of is raised only when the read
    # is confident (P(emergency) and the emergency exemplar beating the nearest contrast exemplar)
    unsure = dataclasses.replace(score(emergency=0.9, near="breathing", similarity=0.65), contrast=0.7)
    assert (
        judge("my bisoprolol tablets look a different colour this month", unsure).scope is not Scope.EMERGENCY
    )
    # with the red flag's own signs, the same read may raise it
    assert judge("I've been a bit wheezy today", unsure).scope is Scope.EMERGENCY
    sure = score(emergency=0.9, near="breathing", similarity=0.8)
    tablets = "my bisoprolol tablets look a different colour this month"
    assert judge(tablets, sure, GATE_ONLY).scope is Scope.EMERGENCY
    assert judge(tablets, sure, BOUND).scope is not Scope.EMERGENCY  # ``unbound`` on: no sign, no acuity


def test_the_reader_joins_sentences_again_with_their_own_stops() -> None:
    # rules read the joined text: "[^.?!]" windows must not reach from one sentence into the next
    reading = reader_of(TRIAGE).read("Had a bleed in 2019. Now my calf is sore, but I can walk")
    assert reading.current() == "Now my calf is sore, but I can walk."
    assert reading.current(text_of_background=True).startswith("Had a bleed in 2019. Now")
