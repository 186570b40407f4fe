"""Signs that bind an unbound raise (#31 item 2, third pass): an acute abdomen told by what the pain does
or in a clinician's shorthand, despair told by the care it needs or as the only way left, and self-harm
told by its aim. Each sign both ways; no model is loaded: the semantic read is given
(``confident_read``). The acute-abdomen table was written before the signs were widened."""

from __future__ import annotations

import pytest

from gateway.domain import Scope
from tests.support.shipped_triage import TRIAGE
from tests.support.shipped_triage import judge_raise as judge
from tests.support.triage import reader_of, sign_groups, without_unbound_rule


def abdomen_met(message: str) -> bool:
    reader = reader_of(TRIAGE)
    return reader.signs(reader.read(message), "acute_abdomen") is not None


# --- an acute abdomen in lay, parent and clinician words --------------------------------------------

ACUTE_ABDOMEN = [
    "my son is 9 and his tummy has been hurting since lunch, now he's lying on the sofa with his knees "
    "pulled up and won't eat anything",
    "sharp pain on my right side low down, it hurts when we go over bumps in the car",
    "my stomach is swollen like a balloon, I haven't pooed or passed wind for two days and I keep being sick",
    "severe abdominal pain radiating to the back, pt tachycardic and pale",
    "I've got this agonising pain in my belly, I can't sit still, I'm rolling around on the floor",
    "my daughter's belly is really tender and she screams when I press on it",
    "my husband's tummy feels tight and hard and he's sweating and grey",
    "the pain in my stomach is excruciating, it came on an hour ago",
    "stabbing pain under my ribs on the right, I've been throwing up and my eyes look yellow",
    "my stomach pain is 10 out of 10 and nothing is helping",
    "my tummy hurts so much I can barely walk, I have to hold my side",
    "I think my appendix has burst, the pain was awful and now my whole belly hurts",
    "she's doubled over with tummy pain and can't stop being sick",
    "my belly hurts so bad I'm in tears, never had pain like it",
    "crampy pain in my abdomen, belly bloated and tight, can't keep anything down",
    "the pain in my tummy is constant and crippling and I'm shaking",
    "abdo pain, guarding RIF, pyrexial 38.5",
    "my teenager is white as a sheet, clutching his stomach, says it's the worst he's ever felt",
    "my belly is killing me, I can't take this pain",
    "had tummy pain all day and now I can't stand up straight, it's so sore",
    "my stomach hurts really badly and I've got a high temperature and keep throwing up",
    "my 6 yr old tummy ache getting worse all day, hes gone very quiet and pale and just lying there",
    "pain in her belly is intense, she is writhing and can't get comfy",
    "stomach pains are horrendous, I'm sweating and feel like I'm going to pass out",
]


@pytest.mark.parametrize("message", ACUTE_ABDOMEN)
def test_an_acute_abdomen_holds_its_own_signs_so_its_raise_stands(message: str) -> None:
    assert abdomen_met(message)
    result = judge(message, "acute_abdomen")
    assert result.scope is Scope.EMERGENCY
    assert result.rule == "acute_abdomen"
    assert result.evidence


@pytest.mark.parametrize(
    "message",
    [
        "my tummy hurts so much I can barely walk",
        "my little boy keeps pulling his knees up to his tummy and crying",
        "my belly is killing me",
        "my stomach is swollen like a balloon",
        "he hasn't pooed or passed wind since yesterday and his tummy is sore",
        "she is white as a sheet and her tummy hurts",
        "I have to hold my side, my tummy hurts",
        "the tummy pain is so bad I can't get comfy",
        "my tummy hurts every time we go over a speed bump",
        "45M abdo pain since this morning, tachycardic, BNO 3/7",
        "mum's tummy is swollen and she hasn't been to the toilet for 4 days",
        "tummy pain soooo bad",
        "very strong pain in stomach since yesterday",
        "his tummy hurts when he moves and he is walking hunched",
        "his belly is hard and he keeps groaning",
        "her tummy is really tender to touch",
        "there's a pulsating lump in my tummy",
        "I have very big pain in stomach",
        "abdo pain since 6am, HR 125, BP 92/60",
        "he's walking like an old man and says his tummy hurts",
    ],
)
def test_what_a_severe_tummy_pain_does_is_a_sign_of_distress(message: str) -> None:
    # an obstruction's own negative ("hasn't pooed") is its sign, not a denial (``bowels_stopped``)
    assert sign_groups(message, TRIAGE, of_now=True) & {"abdomen_distress", "bowels_stopped"}


@pytest.mark.parametrize(
    "message",
    [
        "I laughed so much my belly hurts",
        "my baby pulls her legs up and cries after feeds, is it colic?",
        "my tummy has butterflies and I can't sit still before my exam",
        "these new shoes are killing me",
        "an intense workout left my stomach muscles sore",
        "my tummy gets bloated after bread",
        "my tummy is a bit sore after a big dinner",
        "my stomach is sore from doing sit-ups at the gym",
        "mild indigestion after spicy food",
        "my baby hasn't pooed today but is feeding well and happy",
        "my tummy feels better since I had a poo this morning",
        "I can't be bothered to go to the toilet in this weather, my tummy is fine",
        "my tum is a bit sore but not too bad",
        "strong coffee gives me a tummy ache",
        "he moans about his tummy every morning",
        "my tummy feels a bit hard after a meal",
        "tummy ache on and off, pulse 80, bp 120/80",
    ],
)
def test_an_everyday_tummy_complaint_is_no_acute_abdomen(message: str) -> None:
    assert not abdomen_met(message)
    assert "abdomen_distress" not in sign_groups(message, TRIAGE)


def test_a_pain_on_moving_elsewhere_in_the_body_is_no_acute_abdomen() -> None:
    assert not abdomen_met("my knee hurts when I walk")
    assert abdomen_met("his tummy hurts when he walks")


# --- despair and self-harm that a physical read hides ---------------------------------------------


@pytest.mark.parametrize(
    ("message", "near"),
    [
        ("they want to put me back on the psych ward and I cannot go through that again", "stroke_signs"),
        ("I was sectioned last year and I feel it all coming back, please answer me", "sepsis"),
        ("the crisis team came round again. This is my last resort.", "chest_pain"),
        ("I'm out of options and nothing left to try, my head hurts all the time", "stroke_signs"),
        ("I keep trying to make myself ill enough to be kept in hospital", "stroke_signs"),
        ("I want to get sick enough to be admitted so I don't have to go home", "sepsis"),
    ],
)
def test_despair_or_self_harm_in_everyday_words_moves_a_physical_raise_to_thoughts_of_suicide(
    message: str, near: str
) -> None:
    assert sign_groups(message, TRIAGE) & {"despair", "suicide_words"}
    result = judge(message, near)
    assert result.scope is Scope.EMERGENCY
    assert result.rule == "suicidal_intent"
    assert judge(message, near, without_unbound_rule(TRIAGE)).rule == near  # the rule off: the raise as read


@pytest.mark.parametrize(
    "message",
    [
        "surgery is the last resort for my knee, what else can I try?",
        "what's the quickest way to get sick leave approved?",
        "what is the fastest way to get over being ill with flu?",
        "is there another option than a hip replacement?",
        "I have no other option than surgery for my knee",
        "I made myself sick after eating bad prawns",
        "I had my baby by c-section five weeks ago",
        "I made myself a cup of tea and my chest still hurts",
    ],
)
def test_options_sick_leave_and_getting_better_are_no_despair(message: str) -> None:
    assert not sign_groups(message, TRIAGE) & {"despair", "suicide_words", "low_mood"}


def test_a_ward_named_beside_a_physical_reds_flags_own_signs_leaves_that_red_flag() -> None:
    message = "my mum works on a psychiatric ward and now her face is drooping and her speech is slurred"
    assert "despair" in sign_groups(message, TRIAGE)
    assert judge(message, "stroke_signs").rule == "stroke_signs"
