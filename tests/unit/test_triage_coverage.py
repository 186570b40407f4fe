"""Coverage of published emergency presentations (#31 items 2 and 4, coverage pass;
bench/data/triage/coverage.yaml): presentations that had no sign group now have one, in lay and
clinical words and in either order (metastatic spinal cord compression, priapism, necrotising
fasciitis, quinsy, lithium toxicity, giant cell arteritis with visual symptoms, green vomiting in a
baby, a loss of sight in clinicians' words, a third person's intent to end their life; a normal
ketone reading and a jaw that aches on chewing are no sign). Each both ways: it fires when present,
not when denied, normal, past or a look-alike. No model is loaded: only the rule layers decide."""

from __future__ import annotations

import pytest

from tests.support.shipped_triage import POLICY
from tests.support.triage import flagged_rule, sign_groups


def flagged(message: str) -> str | None:
    return flagged_rule(message, POLICY)


@pytest.mark.parametrize(
    ("message", "category"),
    [
        # back pain with both legs newly weak or numb (NICE NG234; NICE CKS back pain)
        ("myeloma patient, worsening back pain and both his legs have gone weak today", "cauda_equina"),
        (
            "back pain for a fortnight and I'm getting weakness in both legs, I have lung cancer",
            "cauda_equina",
        ),
        ("63M, known prostate ca, thoracic back pain, paraparesis", "cauda_equina"),
        # priapism (NHS: over 4 hours)
        ("my erection hasn't gone down for 4 hours and it's painful", "testicular_torsion"),
        ("30M, priapism for 5 hours after an injection", "testicular_torsion"),
        ("six hours with an erection that won't go away", "testicular_torsion"),
        # necrotising soft-tissue infection
        (
            "cat bite yesterday, my hand hurts far more than it looks and the skin is turning purple",
            "sepsis",
        ),
        ("40F, cellulitis of the leg spreading rapidly, febrile 39, crepitus", "sepsis"),
        ("the red area round my wound is spreading by the hour and I've got a fever", "sepsis"),
        # quinsy: a throat abscess that closes the mouth
        ("tonsillitis for a week, now I can barely open my mouth and I've got a temperature of 39", "sepsis"),
        ("sore throat on one side and my voice sounds like a hot potato", "breathing"),
        # lithium or digoxin with signs of toxicity
        ("mum is on lithium, she's got a coarse tremor, she's vomiting and can't walk straight", "poisoning"),
        ("on digoxin, feeling sick and vomiting, seeing yellow, really confused", "poisoning"),
        ("my dad takes priadel, now he's very shaky, unsteady on his feet and muddled", "poisoning"),
        # giant cell arteritis with a visual symptom
        ("new headache at my temples and my jaw aches when I eat, now double vision", "sudden_vision_loss"),
        ("80F, temporal arteritis suspected, jaw claudication and amaurosis fugax", "sudden_vision_loss"),
        # a loss of sight in clinicians' words
        ("70M, sudden visual loss in the right eye an hour ago", "sudden_vision_loss"),
        ("sudden loss of sight in my left eye this morning", "sudden_vision_loss"),
        # green vomiting in a baby, in either order
        ("my 3 week old has brought up bright green sick twice", "sick_infant"),
        ("our newborn's vomit is dark green", "sick_infant"),
        ("2-week-old with bilious vomiting", "sick_infant"),
        # someone else's intent to end their life now
        (
            "my sister says she is going to end her life tonight, she has been saving up pills",
            "suicidal_intent",
        ),
    ],
)
def test_a_covered_presentation_fires(message: str, category: str) -> None:
    assert flagged(message) == category


@pytest.mark.parametrize(
    "message",
    [
        # back pain and legs, no new weakness of both
        "back pain after gardening and my legs ache from walking all day",
        "back pain, no weakness in either leg, walking fine",
        "lower back pain, both legs fine, no numbness",
        "lower back ache and some pins and needles and tingling in both legs since yesterday",
        # erections: no duration, a question, years of a problem
        "how long should an erection last after taking viagra?",
        "I've had erection problems for 5 years, what can I try?",
        # skin: not spreading, no dusky change, a bruise
        "small red patch round a scratch, not spreading, no fever",
        "my bruise is turning purple and yellow after I bumped my shin",
        "my leg is sore after a run, the pain is worse than yesterday",
        "I cut my finger on a tin and everyone blew it out of proportion",
        # throat and mouth: no sign, a dentist, a joke
        "sore throat, can open my mouth fine and swallowing ok, no temperature",
        "my jaw clicks when I open my mouth wide, no pain",
        "I ate a baked potato that was too hot and burnt my tongue",
        # lithium and digoxin: levels, questions, batteries
        "I take lithium, my level was 0.6 last week, can I drink coffee?",
        "my hands have a fine tremor on lithium, it's been the same for years",
        "how do I recycle lithium batteries?",
        "my phone's lithium ion battery is getting hot",
        # temple headache and jaw: no visual symptom, past
        "tension headache at my temples after a long day at the screen",
        "my jaw aches when I chew gum for a long time",
        "had temporal arteritis 3 years ago, fully recovered, off steroids now",
        # vision: the words of no loss, a past loss
        "no visual loss, just some dry eyes",
        # green: food, a colour, a toddler's snot
        "my baby's poo is green after starting formula, she's feeding well",
        "what's a good bright green paint for a nursery?",
        # ketones: a normal reading
        "I'm type 1 and my ketones were 0.2 with a cold, sugar 9",
        "type 2, checked ketones at 0.4 after a run, feeling fine",
        # a third person's life told as history or information
        "how can I help a friend who tried to end her life years ago?",
    ],
)
def test_a_look_alike_or_denied_sign_does_not_fire(message: str) -> None:
    assert flagged(message) is None


@pytest.mark.parametrize(
    ("message", "group"),
    [
        ("no weakness in both legs", "legs_weak_both"),
        ("no crepitus, not spreading", "soft_tissue_red"),
        ("no trismus, can open his mouth", "throat_abscess"),
        ("no visual loss", "vision_loss"),
        ("ketones 0.3", "diabetic_red"),
        ("lithium coin cell", "narrow_margin_drug"),
        ("my jaw aches when I chew", "cardiac_atypical"),
        ("pain in my jaw when eating", "radiating"),
    ],
)
def test_a_denied_or_normal_finding_is_no_sign(message: str, group: str) -> None:
    assert group not in sign_groups(message, POLICY.triage, of_now=True)


@pytest.mark.parametrize(
    ("message", "group"),
    [
        ("weakness in both legs", "legs_weak_both"),
        ("both her legs have gone numb", "legs_weak_both"),
        ("trismus", "throat_abscess"),
        ("ketones are 3.8", "diabetic_red"),
        ("ketones high", "diabetic_red"),
        ("on lithium", "narrow_margin_drug"),
        ("jaw hurts when she chews", "gca_sign"),
        ("erection for 5 hours", "priapism"),
        ("vomit is bright green", "bilious"),
        ("dribbling because he can't swallow", "airway_obstruction"),
        ("jaw aches when I chew", "gca_sign"),
    ],
)
def test_the_sign_is_read_in_either_order(message: str, group: str) -> None:
    assert group in sign_groups(message, POLICY.triage, of_now=True)
