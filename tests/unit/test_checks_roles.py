"""The role-order check: a claim must not swap who does what to whom."""

from __future__ import annotations

import pytest

from gateway.domain import ConflictKind
from gateway.verification.checks import roles
from gateway.verification.checks.results import CheckOutcome
from gateway.vocabulary import VerdictCheck
from tests.support.checks import on_texts, restates_text

check_roles = on_texts(roles.check_roles)


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Obesity causes type 2 diabetes.", "Type 2 diabetes causes obesity."),
        ("Obesity causes type 2 diabetes.", "Obesity is caused by type 2 diabetes."),
        ("Aspirin prevents stroke in older adults.", "In older adults, stroke prevents aspirin use."),
        (
            "Non-pregnant women are more likely to be admitted than pregnant women.",
            "Pregnant women were more likely to be admitted than non-pregnant women.",
        ),
        (
            "Children recover faster than adults.",
            "Adults recover faster than children do.",
        ),
        (
            "Oral cancer is more common in women than in men.",
            "Oral cancer is more common in men than in women.",
        ),
    ],
)
def test_swapped_roles_clash(claim: str, evidence: str) -> None:
    result = check_roles(claim, evidence)
    assert result.outcome is CheckOutcome.CLASH
    assert result.conflict is not None
    assert result.conflict.kind is ConflictKind.ROLE
    assert result.verdict_check is VerdictCheck.ROLE_ORDER


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Obesity causes type 2 diabetes.", "Obesity causes type 2 diabetes in adults."),
        ("Obesity causes type 2 diabetes.", "Type 2 diabetes is caused by obesity."),
        ("Obesity leads to type 2 diabetes.", "Obesity causes type 2 diabetes."),
        (
            "Non-pregnant women are more likely to be admitted than pregnant women.",
            "Pregnant women were less likely to be admitted than non-pregnant women.",
        ),
        # no directed relation in the evidence: nothing to swap
        ("Obesity causes type 2 diabetes.", "Type 2 diabetes and obesity are common together."),
        # the evidence states it both ways: the claim's way is there
        ("A causes B.", "Fever causes thirst, and thirst causes fever."),
    ],
)
def test_same_roles_or_no_relation_pass(claim: str, evidence: str) -> None:
    assert check_roles(claim, evidence).passed


def test_a_swapped_claim_does_not_restate_its_source() -> None:
    binding = restates_text("Type 2 diabetes causes obesity.", "Obesity causes type 2 diabetes.")
    assert not binding.restates
    assert binding.check is VerdictCheck.ROLE_ORDER
    assert binding.conflict is not None
    assert binding.conflict.kind is ConflictKind.ROLE
    assert restates_text("Obesity causes type 2 diabetes.", "Obesity causes type 2 diabetes.").restates


def test_shared_words_on_the_agent_side_are_the_frame() -> None:
    claim = "Obesity in children causes type 2 diabetes."
    assert check_roles(claim, "Type 2 diabetes in children causes obesity.").outcome is CheckOutcome.CLASH
    assert check_roles(claim, "In children, obesity causes type 2 diabetes.").passed


def test_a_comparison_may_name_its_other_side_with_compared_with() -> None:
    claim = "Non-pregnant women are more likely to be admitted to hospital than pregnant women."
    swapped = "Pregnant women are more likely to be admitted to hospital compared with non-pregnant women."
    same = "Non-pregnant women were more likely to be admitted to hospital versus pregnant women."
    assert check_roles(claim, swapped).outcome is CheckOutcome.CLASH
    assert check_roles(claim, same).passed


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        (
            "Heart valve disease is a risk factor for older age.",
            "Older age is a risk factor for heart valve disease.",
        ),
        (
            "Panic disorder is more common in men than women.",
            "Panic disorder is more common in women than men.",
        ),
    ],
)
def test_a_reordered_claim_whose_relation_is_unread_is_not_kept(claim: str, evidence: str) -> None:
    result = restates_text(claim, evidence)
    assert not result.restates
    assert not result.clash  # not verified: rewritten to the source, never a contradiction


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        (
            "Older age is a risk factor for heart valve disease.",
            "Older age is a risk factor for heart valve disease.",
        ),
        ("HRT also may protect against osteoporosis.", "HRT may also protect against osteoporosis."),
        ("In children, asthma is common.", "Asthma is common in children."),
    ],
)
def test_a_claim_in_the_sources_order_is_kept(claim: str, evidence: str) -> None:
    assert restates_text(claim, evidence).restates
