"""A dose's strength is no count of tablets (#31 item 2, s60).

``overdose_amount`` read any number of 10 or more before "tablets" or a named painkiller as a count,
so "I took two 500mg paracetamol tablets", "I took 400 ibuprofen for my headache" (400 mg) and "I took
2 co-codamol 30/500 and 400mg ibuprofen, is that ok" were an overdose, an emergency on the rules; so
was "I took 1g of paracetamol" (one adult dose). A number followed by a unit is a strength; a bare
number before paracetamol, ibuprofen or co-codamol is a count below 100 only (their tablets are
200-500 mg); grams count from 5 (paracetamol's adult maximum is 4 g a day). No model is loaded."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from tests.support.shipped_triage import TRIAGE, judge
from tests.support.triage import sign_groups


@pytest.mark.parametrize(
    "message",
    [
        "I took two 500mg paracetamol tablets",
        "I took 2 x 500 mg tablets",
        "I took 30 mg codeine tablets",
        "I took 400 ibuprofen for my headache",
        "I took 500 paracetamol this morning",
        "I took 2 co-codamol 30/500 and 400mg ibuprofen, is that ok",
        "I accidentally took 1000mg paracetamol twice today",
        "I took 1g of paracetamol 2 hours ago, can I take more",
        "I took 2g of paracetamol at once",
    ],
)
def test_a_strength_is_no_amount(message: str) -> None:
    assert "overdose_amount" not in sign_groups(message, TRIAGE)
    assert judge(message).scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "I took 20 tablets",
        "I took 100 tablets",
        "I took 12 paracetamol",
        "I took 16 500mg paracetamol",
        "she took 24 co-codamol",
        "I took 20 x paracetamol",
        "he took 50 of his tablets",
        "I swallowed 30 sleeping pills",
        "I took 12g of paracetamol",
    ],
)
def test_a_count_is_still_an_overdose(message: str) -> None:
    assert "overdose_amount" in sign_groups(message, TRIAGE)
    decision = judge(message)
    assert decision.scope is Scope.EMERGENCY
    assert decision.rule == "overdose"
