"""Clinicians' vignettes (#31 item 4): emergencies told in the terse register of notes ("68M", "3yo girl",
"on examination") by their clinical signs (syncope, meningism, a purpuric rash, a GCS under 15, delirium,
hypotension, a capillary refill of 3 seconds or more, drooling with a muffled voice, a painful red eye with
a fixed pupil, a burn as a percentage of the body surface, bleeding that pressure does not control, status
epilepticus, PEF 50% or less, epigastric pain with sweating, an operation named by its suffix), ages and
temperatures as notes write them ("infant aged 8 weeks", "in his 50s", "T 38.2", "febrile 38.4"); each
both ways: fires when present, not when denied ("afebrile", "no meningism", "non-tender calves", "GCS 15")
or when told of a look-alike (haloes from cataracts, a teething baby drooling, chest wall pain). No model
is loaded: only the rule layers decide."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.errors import ConfigurationError
from gateway.triage.evidence_policy import load_evidence_policy
from gateway.triage.vitals import read_age, read_vitals
from tests.support.shipped_triage import POLICY
from tests.support.triage import flagged_rule, reader_of, sign_groups


def flagged(message: str) -> str | None:
    return flagged_rule(message, POLICY)


@pytest.mark.parametrize(
    ("message", "category"),
    [
        ("81M on apixaban, two days of black stools, presyncopal on standing", "heavy_bleeding"),
        ("58M, haematemesis x2, hypotensive, cold peripheries", "heavy_bleeding"),
        ("55M, chainsaw injury to the thigh, pulsatile bleeding", "heavy_bleeding"),
        ("22F, laceration to the wrist, bleeding despite direct pressure", "heavy_bleeding"),
        ("70M epistaxis for 45 minutes, on apixaban", "heavy_bleeding"),
        ("5yo, febrile, drooling and can't swallow, voice muffled", "breathing"),
        ("Adult with quinsy, hot potato voice and unable to swallow saliva", "breathing"),
        ("62F, diabetic, epigastric pain for 40 minutes, diaphoretic", "chest_pain"),
        # "chest wall" still names a chest pain: patients say it of any (stop 50 review)
        ("I have chest wall pain and I'm sweating and short of breath", "chest_pain"),
        ("my chest wall hurts and the pain is going down my left arm", "chest_pain"),
        ("3yo found with her grandfather's tablets, now drowsy", "poisoning"),
        (
            "58F with a red painful left eye since this evening, seeing rainbows around lights",
            "sudden_vision_loss",
        ),
        ("40M, flame burn to the trunk, roughly 15% TBSA", "burns"),
        ("45F, meningism and photophobia, temperature 38.9", "meningitis"),
        ("20M, fever and a purpuric rash on the legs", "meningitis"),
        ("60M, responds only to pain, fever 39", "sepsis"),
        ("79F, new-onset delirium, febrile, UTI symptoms", "sepsis"),
        ("65M, altered mental state and fever for a day", "sepsis"),
        ("40F, febrile 38.6 with a UTI, now hypotensive and peripherally shut down", "sepsis"),
        ("3yo, D&V for 2 days, dry mouth, CRT 4 seconds", "child_dehydration"),
        ("26F, wasp sting 10 minutes ago, widespread hives, now hypotensive", "anaphylaxis"),
        (
            "45M, second tonic-clonic seizure without regaining consciousness in between",
            "unconscious_or_seizure",
        ),
        ("30F, acute severe asthma, PEF 30% predicted", "asthma_attack"),
        ("54M, 2 weeks post laparotomy, L calf swollen and tender", "blood_clot"),
        ("37M, 3 weeks after a knee arthroscopy, pleuritic chest pain and haemoptysis", "blood_clot"),
        ("Child of 5 with abdo pain, febrile 39.5, tender abdomen, not wanting to walk", "acute_abdomen"),
        ("19F, staggered paracetamol overdose over two days", "overdose"),
        ("22M, paracetamol overdose 6 hours ago", "overdose"),
        ("Infant aged 8 weeks, temperature 38.1, feeding less", "sick_infant"),
        ("8-week-old, febrile 38.4", "sick_infant"),
        ("Infant, 7 weeks, T 38.2", "sick_infant"),
        ("33F, GCS 12 after a fall from a horse, hit her head", "reduced_consciousness"),
        ("50F, soil-contaminated wound 9 days ago, tetanus status unknown, now jaw clenching", "sepsis"),
        ("6yo not vaccinated, stood on a nail last week, now generalised muscle rigidity", "sepsis"),
        ("19F, 25 tablets of sertraline with alcohol an hour ago", "overdose"),
    ],
)
def test_a_vignette_of_an_emergency_fires(message: str, category: str) -> None:
    assert flagged(message) == category


@pytest.mark.parametrize(
    "message",
    [
        "Adult, 40, with a mild sore throat, afebrile, no meningism, no photophobia.",
        "4yo with an URTI, temperature 37.4, alert, drinking, no rash, no meningism.",
        "52M with known epilepsy, brief typical seizure, back to baseline, GCS 15.",
        "7yo fell off a scooter and bumped his head, no LOC, no vomiting, GCS 15, running around.",
        "33M, post-op day 5 after a hernia repair, calves soft and non-tender, not short of breath.",
        "19F with tonsillitis, no drooling, no stridor, swallowing fluids.",
        "my 7 month old is teething and drooling a lot, any tips?",
        "I breathe easier sitting forward with my COPD, is that normal?",
        "70F with cataracts, sees haloes around lights when driving at night. Referral?",
        "wear contact lenses and my eye is red, painful and sensitive to light since this morning, vision ok",
        "55M, no active bleeding, Hb stable at 128, follow-up for his ulcer.",
        "65F with known postural hypotension on fludrocortisone, stable, review.",
        "Nosebleed for 5 minutes that stopped with pressure, 12yo.",
        "45M, abdominal pain, soft non-tender abdomen, no guarding or rebound, afebrile.",
        "67M, not tachycardic, not hypotensive, no melaena, for follow-up of his ulcer.",
        "30M with chest wall pain reproducible on palpation after moving furniture, obs normal.",
        "3yo, CRT 2 seconds, temperature 37.8, playing.",
        "75M, not oliguric, urine output fine, kidney function review.",
        "5yo, chickenpox, no purpuric rash, well.",
        "79F with chronic confusion from dementia, afebrile, eating well.",
        "what is a staggered overdose and why is it treated differently?",
        "3yo with a grazed knee from a fall, cleaned, immunisations up to date.",
        "70F, calves non-tender, no leg swelling, three months after a hip replacement, walking well.",
        "25M, tension headache, no neck stiffness, no photophobia, afebrile.",
    ],
)
def test_a_vignette_with_the_sign_denied_or_a_look_alike_does_not_fire(message: str) -> None:
    assert flagged(message) is None


@pytest.mark.parametrize(
    ("message", "group"),
    [
        ("afebrile, not hypotensive", "shock"),
        ("GCS 15, alert", "altered_consciousness"),
        ("no meningism", "stiff_neck"),
        ("calves soft and non-tender", "leg_swelling"),
    ],
)
def test_a_denied_or_normal_finding_is_no_sign(message: str, group: str) -> None:
    assert group not in sign_groups(message, POLICY.triage, of_now=True)


def test_ages_and_temperatures_in_notes_are_read() -> None:
    vitals = POLICY.triage.vitals
    assert read_age("Infant aged 8 weeks, temperature 38.1", vitals) == pytest.approx(8 * 7 / 365.25)
    assert read_age("Child aged 3 with otalgia", vitals) == 3.0
    assert read_age("Infant, 7 weeks, T 38.2", vitals) == pytest.approx(7 * 7 / 365.25)
    assert read_age("Man in his 50s with a fever", vitals) == 50.0
    temperatures = [r.value for r in read_vitals("febrile 38.4, T 39.1") if r.vital == "temperature_c"]
    assert temperatures == [38.4, 39.1]
    assert [
        r for r in read_vitals("I don't have 2 kids, it's been 3 days") if r.vital == "temperature_c"
    ] == []


def test_a_term_group_given_a_key_twice_is_refused(tmp_path: Path) -> None:
    """YAML keeps the last of a repeated key silently: two ``patterns`` lists of one group had dropped the
    first (``suicide_core``, ``child_red``); the evidence file is now read refusing a repeated key."""
    policy = tmp_path / "evidence.yaml"
    policy.write_text("terms:\n  a:\n    patterns: ['x']\n    patterns: ['y']\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="duplicate key"):
        load_evidence_policy(policy)


@pytest.mark.parametrize(
    ("message", "group"),
    [
        ("she's 5 weeks and won't take her bottle", "child_red"),
        ("I not want to live more", "suicide_core"),
    ],
)
def test_the_patterns_a_repeated_key_had_dropped_are_read(message: str, group: str) -> None:
    assert group in {hit.group for hit in reader_of(POLICY.triage).read(message).hits}
