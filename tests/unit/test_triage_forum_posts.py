"""Findings of the second blind probe's tune half (#31, s61: ``bench/data/triage/probe_blind2.jsonl``,
written without reading the rules): how people write on health forums, each fix both ways. No model is
loaded: only the rule layers decide here."""

from __future__ import annotations

import pytest

from gateway.domain import Scope, Triage
from tests.support.shipped_triage import POLICY, TRIAGE
from tests.support.triage import rules_only, sign_groups


def judge(message: str) -> Triage:
    return rules_only(message, POLICY)


@pytest.mark.parametrize(
    ("message", "rule"),
    [
        # "nothing" negates only the signs it stands right before
        ("nothing helps this sudden thunderclap headache", "stroke_signs"),
        # the glass test by its result
        ("she has a high temperature and a rash that didn't fade when I did the glass test", "meningitis"),
        # a feeling of pressure in the chest is still chest pain
        ("crushing pressure in my chest and I'm sweating", "chest_pain"),
        ("it feels like something pressing on my chest and im sweating", "chest_pain"),
        ("chest pain while lying in bed and I'm sweating", "chest_pain"),
        # loss of consciousness told in quotes; one pupil bigger after a head injury (NICE NG232)
        ("he fell off the wall and hit his head, he was 'out for a few seconds' then cried", "head_injury"),
        ("one pupil looks bigger than the other since he banged his head", "head_injury"),
        # a corrosive on the skin or in an eye (NHS: chemical burns)
        ("I splashed bleach on my hand and the skin is white and leathery", "burns"),
        ("got oven cleaner in my eye and it really stings", "burns"),
        # a count told after any drug taken, set off by a comma
        ("I took the rest of my mirtazapine, about 20, and I'm getting drowsy", "overdose"),
        # a question that times a pain which will not end is a report of now
        (
            "is it normal to have chest pain that won't go away for 2 hrs? tight, out of breath and sweaty",
            "chest_pain",
        ),
        ("I want to die", "suicidal_intent"),
    ],
)
def test_what_forum_posts_tell_of_now_is_an_emergency(message: str, rule: str) -> None:
    found = judge(message)
    assert (found.scope, found.rule) == (Scope.EMERGENCY, rule)


@pytest.mark.parametrize(
    "message",
    [
        "No vomiting, no fever, nothing sudden or thunderclap, it has never woken me up",
        "I've heard about the glass test for rashes, what else should I look for? my kids always have a temp",
        "my chest twinges when I press on my breastbone",
        "I spilt bleach on my jeans and now there are white patches",
        "I took the dog out, about 20 minutes ago, and now my knee hurts",
        "my red velvet icing is bleeding into the white, how do i stop it",
        "how do I bleed the radiators",
        "is it normal for a headache to not go away for a few hours after a migraine",
        "i dont want to die i just need to talk to someone today",
        "What would the signs be that it had turned into anaphylaxis, and what should I tell the teachers?",
    ],
)
def test_what_forum_posts_deny_name_or_ask_about_is_no_emergency(message: str) -> None:
    assert judge(message).scope is not Scope.EMERGENCY


def test_a_movement_made_in_bed_is_no_time_of_rest() -> None:
    assert "at_rest" not in sign_groups("my ribs hurt when I twist in bed", TRIAGE, of_now=True)
    assert "at_rest" not in sign_groups("it aches when I turn over in bed", TRIAGE, of_now=True)
    assert "at_rest" in sign_groups("I get breathless even lying in bed", TRIAGE, of_now=True)
    assert "at_rest" in sign_groups("I'm breathless in bed", TRIAGE, of_now=True)


@pytest.mark.parametrize(
    "message",
    [
        # a month after a verb of the past dates the event; a deficit it left is history
        "My mum had a stroke in January. She was in hospital 3 weeks and then rehab. Her right hand is still"
        " weak, it's been like that for months.",
        # a change denied is none
        "My dad had a stroke in March. His left arm is still weak but it has been the same for months, not"
        " getting worse. Can he drive?",
    ],
)
def test_a_deficit_left_by_an_event_dated_by_its_month_is_history(message: str) -> None:
    assert judge(message).scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "My dad had a stroke in March and his left arm is suddenly much weaker today",
        "My mum had a stroke in January, now her face is drooping again",
        # a bare month may be to come
        "We are expecting our first baby in June and I'm losing a lot of blood",
    ],
)
def test_a_change_of_now_after_a_dated_event_or_a_month_to_come_still_fires(message: str) -> None:
    assert judge(message).scope is Scope.EMERGENCY
