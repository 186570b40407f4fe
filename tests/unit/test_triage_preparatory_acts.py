"""Preparations for suicide told in the person's own words are thoughts of suicide (#31): the
"preparatory acts" of the Columbia suicide severity scale (collecting pills, believing one will not be
alive soon), which crisis-line guidance answers with the crisis lines, even at the end of a long post
that opens as a medication question. Each both ways: collecting a prescription, a dosette box, a supply
for a trip or a shortage and an absence from an appointment do not fire. No model is loaded: only the
rule layers decide."""

from __future__ import annotations

import pytest

from gateway.triage.evidence import EvidenceReader
from tests.support.shipped_triage import CATARACT, POLICY
from tests.support.triage import flagged_rule


@pytest.mark.parametrize(
    "message",
    [
        "I've been saving up my tablets for weeks",
        "i have been stockpiling paracetamol",
        "I've been hoarding my sleeping pills in a drawer",
        "she admitted she had stashed her meds under the bed",
        "I've saved up enough painkillers now",
        "I don't think I'll be here tomorrow.",
        "dont think ill still be around much longer to be honest",
        "I won't be alive by the weekend",
        "Is stopping venlafaxine suddenly dangerous? Honestly I've been saving up my tablets and I've got "
        "them counted out tonight. I don't think I'll be here tomorrow.",
    ],
)
def test_preparations_for_suicide_are_thoughts_of_suicide(message: str) -> None:
    assert flagged_rule(message, POLICY) == "suicidal_intent"
    assert flagged_rule(message, CATARACT) == "suicidal_intent"


@pytest.mark.parametrize(
    "message",
    [
        "I'm collecting my tablets from the pharmacy tomorrow",
        "I count out my pills into a dosette box every Sunday",
        "saving up my tablets for the week in a dosette box",
        "is it ok to stockpile my meds before travelling abroad for three months?",
        "should I be saving up my inhaler doses?",
        "I've been saving up for a holiday",
        "I don't think I'll be here tomorrow for my appointment, can I rebook?",
        "I don't think I'll be around at the clinic tomorrow, my daughter will pick up the prescription",
        "will the plant still be alive after the frost?",
    ],
)
def test_a_prescription_a_supply_and_an_absence_do_not_fire(message: str) -> None:
    assert flagged_rule(message, POLICY) is None


def test_a_belief_one_will_not_be_alive_opens_the_health_gate() -> None:
    triage = POLICY.triage
    reader = EvidenceReader(triage.evidence, triage.settings.negation, triage.vitals.pressure_signs)
    hits = reader.read("I don't think I'll be here tomorrow.").hits
    assert any(hit.group == "risk_to_life" for hit in hits)
