"""An episode told as over, with a question about it happening again, is history (#31 item 6, s60).

"my 2 year old had a febrile convulsion last month, he's fine now, what should I do if it happens
again?" was a seizure now, an emergency: "last month" was no past date, and the "again" of the
supposed recurrence brought the sentence back to now. "my father had pneumonia last winter and was
confused in hospital, he's fully back to himself now" was sepsis now: "back to himself now" read as a
time of now. A month ago or more is a past date now (``background``); "again" after "happens" is
supposed, not a recurrence told; "now" after "back to himself / normal" is a recovery. A recurrence
told as now is still read. No model is loaded."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from tests.support.shipped_triage import judge


@pytest.mark.parametrize(
    "message",
    [
        "my 2 year old had a febrile convulsion last month, he's fine now, "
        "what should I do if it happens again?",
        "my father had pneumonia last winter and was confused in hospital, he's fully back to himself now, "
        "should he have the pneumonia jab?",
        "she had a seizure two months ago and is back to normal now, can she go swimming?",
        "my mum was confused with a UTI a few months ago, she's back to herself now, "
        "how do we prevent another?",
    ],
)
def test_an_episode_told_as_over_is_no_emergency(message: str) -> None:
    assert judge(message).scope is not Scope.EMERGENCY


@pytest.mark.parametrize(
    "message",
    [
        "I had a stroke two months ago and now my face is drooping again",
        "she had a seizure last month, today she had another one and won't wake up",
        "my dad was confused last month with a UTI and he's confused again today",
        "he had a fit last month and he's been fitting for 6 minutes now",
    ],
)
def test_an_episode_back_now_is_still_read(message: str) -> None:
    assert judge(message).scope is Scope.EMERGENCY
