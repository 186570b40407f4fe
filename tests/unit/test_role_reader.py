"""The who-does-what reader: passives, relative clauses, appositives and inverse cues read as the
active sentence they restate, so a claim that swaps its quote's roles is not kept as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.errors import ConfigurationError
from gateway.verification.checks import roles
from gateway.verification.checks.results import CheckOutcome
from gateway.verification.checks.role_reader import ROLES_PATH, load_role_grammar, read_relations
from gateway.vocabulary import VerdictCheck
from tests.support.checks import CHECK_DATA, on_texts, restates_text

check_roles = on_texts(roles.check_roles)


def _sides(text: str) -> list[tuple[set[str], set[str]]]:
    return [(set(r.agent), set(r.patient)) for r in read_relations(text.lower(), CHECK_DATA.grammar)]


@pytest.mark.parametrize(
    "text",
    [
        "Smoking causes lung cancer.",
        "Lung cancer is caused by smoking.",
        "Lung cancer can result from smoking.",
        "Lung cancer, a common cancer, is caused by smoking.",
        "The lung cancer that smoking causes is common.",
        "Doctors study how smoking causes lung cancer.",
        "Many people smoke, which causes lung cancer.",
    ],
)
def test_one_relation_in_many_forms(text: str) -> None:
    assert any("smoke" in agent and {"lung", "cancer"} <= patient for agent, patient in _sides(text))


def test_a_cue_after_an_article_is_a_noun() -> None:
    assert read_relations("an increase in blood pressure was seen.", CHECK_DATA.grammar) == ()
    assert read_relations("the cause of the rash is unknown.", CHECK_DATA.grammar) == ()


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # passive with an appositive subject
        (
            "Friedreich ataxia, an inherited condition, is caused by movement problems.",
            "Friedreich ataxia is an inherited condition that causes movement problems.",
        ),
        # object-fronted relative clause
        (
            "Antibiotics treat the bronchiectasis that repeated lung infections cause.",
            "Antibiotics treat the repeated lung infections that bronchiectasis causes.",
        ),
        # a subject relative after a comma: the antecedent
        (
            "Affected people have pale skin, which can cause anemia.",
            "Affected people have anemia, which can cause pale skin.",
        ),
        # a clause after "how"
        (
            "Research will clarify how the risk for type 1 diabetes affects infant nutrition.",
            "Research will clarify how infant nutrition affects the risk for type 1 diabetes.",
        ),
        # an inverse cue
        (
            "Squamous cell carcinoma can lead to being infected with HPV.",
            "Squamous cell carcinoma can result from being infected with HPV.",
        ),
        # a list as the subject, a passive reduced relative ending at the main verb
        (
            "Bleeding, abdominal pain, and diarrhea may cause polyps.",
            "Polyps may cause bleeding, anemia, abdominal pain, and diarrhea.",
        ),
        (
            "Antibodies to beta cells and other proteins produced by insulin are found in diabetes.",
            "Antibodies to insulin and other proteins produced by beta cells are found in diabetes.",
        ),
        # agent and setting exchanged
        (
            "In patients with DEC, loiasis can cause serious adverse reactions.",
            "In patients with loiasis, DEC can cause serious adverse reactions.",
        ),
    ],
)
def test_swapped_roles_in_other_forms_clash(claim: str, evidence: str) -> None:
    assert check_roles(claim, evidence).outcome is CheckOutcome.CLASH
    binding = restates_text(claim, evidence)
    assert not binding.restates
    assert binding.check is VerdictCheck.ROLE_ORDER


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        (
            "Movement problems are caused by Friedreich ataxia, an inherited condition.",
            "Friedreich ataxia is an inherited condition that causes movement problems.",
        ),
        (
            "Antibiotics treat the repeated lung infections caused by bronchiectasis.",
            "Antibiotics treat the repeated lung infections that bronchiectasis causes.",
        ),
        (
            "Pale skin can be caused by the anemia that affected people have.",
            "Affected people have anemia, which can cause pale skin.",
        ),
        (
            "Research will clarify how the risk for type 1 diabetes is affected by infant nutrition.",
            "Research will clarify how infant nutrition affects the risk for type 1 diabetes.",
        ),
        (
            "Serious adverse reactions can be caused by DEC in patients with loiasis.",
            "In patients with loiasis, DEC can cause serious adverse reactions.",
        ),
        (
            "There is some evidence that headache may be reduced by certain supportive treatments.",
            "There is some evidence that certain supportive treatments may reduce headache.",
        ),
    ],
)
def test_the_same_roles_in_other_forms_pass(claim: str, evidence: str) -> None:
    assert check_roles(claim, evidence).passed
    assert restates_text(claim, evidence).restates


def test_a_comparison_read_the_other_way_round_is_kept() -> None:
    evidence = "The disease is more common in men than in women."
    assert restates_text("The disease is less common in women than in men.", evidence).restates
    swapped = restates_text("The disease is less common in men than in women.", evidence)
    assert not swapped.restates
    # an opposite beside the comparison still clashes
    assert not restates_text(
        "The disease is less common in women than in men and decreases with age.",
        "The disease is more common in men than in women and increases with age.",
    ).restates


def test_the_grammar_file_is_validated(tmp_path: Path) -> None:
    text = ROLES_PATH.read_text(encoding="utf-8")
    bad = tmp_path / "roles.yaml"
    bad.write_text(text.replace("family_of: treats", "family_of: eats"), encoding="utf-8")
    with pytest.raises(ConfigurationError, match="eats"):
        load_role_grammar(CHECK_DATA.words, bad)
    bad.write_text(text.replace("passive_agents: [by]\n", ""), encoding="utf-8")
    with pytest.raises(ConfigurationError, match="passive_agents"):
        load_role_grammar(CHECK_DATA.words, bad)


def test_an_inverse_cue_restates_the_active_one_the_same_way_round() -> None:
    evidence = "Neutropenia can lead to frequent infections."
    assert restates_text("Frequent infections can result from neutropenia.", evidence).restates
    swapped = restates_text("Neutropenia can result from frequent infections.", evidence)
    assert not swapped.restates
    assert swapped.check is VerdictCheck.ROLE_ORDER


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        (
            "Parents with fragile XE syndrome have a risk of having a child with the premutation.",
            "Parents with the premutation have a risk of having a child with fragile XE syndrome.",
        ),
        (
            "Rapid treatment of a defibrillator with SCA can be lifesaving.",
            "Rapid treatment of SCA with a defibrillator can be lifesaving.",
        ),
    ],
)
def test_two_prepositional_objects_exchanged_clash(claim: str, evidence: str) -> None:
    assert check_roles(claim, evidence).outcome is CheckOutcome.CLASH


def test_a_frame_across_a_comparison_is_the_comparison() -> None:
    evidence = (
        "Women with dense breasts have a higher risk of breast cancer than women with low breast density."
    )
    kept = "Women with low breast density have a lower risk of breast cancer than women with dense breasts."
    swapped = (
        "Women with low breast density have a higher risk of breast cancer than women with dense breasts."
    )
    assert restates_text(kept, evidence).restates
    assert not restates_text(swapped, evidence).restates
    assert restates_text(
        "With a defibrillator, rapid treatment of SCA can be lifesaving.",
        "Rapid treatment of SCA with a defibrillator can be lifesaving.",
    ).restates


def test_an_abbreviation_with_dots_is_one_word_and_a_coordinated_passive_keeps_its_agent() -> None:
    evidence = "Taking action to control your risk factors can help prevent or delay P.A.D."
    assert not restates_text(
        "P.A.D. can help prevent or delay taking action to control your risk factors.", evidence
    ).restates
    assert restates_text(
        "P.A.D. can be prevented or delayed by taking action to control your risk factors.", evidence
    ).restates
