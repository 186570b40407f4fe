"""Sign patterns of ``evidence.yaml`` name their red-flag part as the context rules do (#31 item 2: negation
respected). The evidence reader read a pattern's negation only before its first and its last word, so a
sign whose second part is long, or whose denial stands further from the last word than the negation
window, still counted: "my leg has never been more swollen than the other" was a swollen leg (with a
recent operation, a blood-clot emergency). A pattern now names that part ``(?P<flag>...)`` and the reader
reads a negation before it the way the rule layer does (``gateway/triage/flag_parts.py``); a name that
is not ``flag`` or ``flag_<part>`` stops start-up.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from gateway.domain import Scope
from gateway.errors import ConfigurationError, InvalidValue
from gateway.policies import load_policy
from gateway.triage.evidence_policy import TermGroup
from gateway.triage.policy import load_triage_policy
from tests.support.shipped_triage import POLICY, REPO, TRIAGE, copy_policies
from tests.support.triage import rules_only, sign_groups


@pytest.mark.parametrize(
    ("message", "group"),
    [
        ("my leg has never been more swollen than the other", "leg_swelling"),
        ("his leg has never looked any bigger than the other", "leg_swelling"),
        ("I'm out of breath on the hills, never when I walk to the loo", "minimal_exertion"),
        ("puffed on the stairs, not when I go to the kitchen", "minimal_exertion"),
        ("my fingers feel numb and tingly, but never on one side", "one_side_weak"),
        ("weakness all over, not one side", "one_side_weak"),
        ("my tummy hurts everywhere, not really low down on the right", "appendix_site"),
    ],
)
def test_a_sign_whose_red_flag_part_is_denied_is_not_a_sign(message: str, group: str) -> None:
    assert group not in sign_groups(message, TRIAGE)


@pytest.mark.parametrize(
    ("message", "group"),
    [
        ("my left leg is much more swollen than the right", "leg_swelling"),
        ("his calf is twice the size of the other one", "leg_swelling"),
        ("my leg is red and swollen", "leg_swelling"),
        ("he can't speak in full sentences", "cannot_speak"),
        ("she is unable to speak in full sentences", "cannot_speak"),
        ("I'm out of breath walking to the toilet", "minimal_exertion"),
        ("I have to stop for breath when I walk to the loo", "minimal_exertion"),
        ("I can't walk to the kitchen without stopping", "minimal_exertion"),
        ("I'm so breathless getting dressed", "minimal_exertion"),
        ("my left arm is weak", "one_side_weak"),
        ("I feel weak and numb down my left side", "one_side_weak"),
        ("the pain has moved to the lower right", "appendix_site"),
        ("pain low down on the right", "appendix_site"),
    ],
)
def test_the_plain_and_current_forms_are_still_signs(message: str, group: str) -> None:
    assert group in sign_groups(message, TRIAGE)


def test_a_denied_swollen_leg_after_an_operation_is_no_clot_emergency() -> None:
    denied = rules_only(
        "I had a knee operation ten days ago and my leg has never been more swollen than the other", POLICY
    )
    current = rules_only(
        "I had a knee operation ten days ago and my left leg is much more swollen than the right", POLICY
    )
    assert denied.scope is not Scope.EMERGENCY
    assert (current.scope, current.rule) == (Scope.EMERGENCY, "blood_clot")


def test_breathlessness_denied_at_a_small_task_does_not_escalate() -> None:
    worse = "my breathing has got worse this week"
    assert rules_only(
        f"{worse}, out of breath on the hills and never when I walk to the loo", POLICY
    ).scope is not (Scope.EMERGENCY)
    current = rules_only(f"{worse} and I'm out of breath walking to the toilet", POLICY)
    assert (current.scope, current.rule) == (Scope.EMERGENCY, "breathing")
    speech = rules_only(
        "I have asthma and my inhaler isn't helping, I'm unable to speak in full sentences", POLICY
    )
    assert speech.scope is Scope.EMERGENCY


@pytest.mark.parametrize("name", ["site", "flags", "flag_", "Flag", "flag_Part"])
def test_a_sign_pattern_names_only_red_flag_parts(name: str) -> None:
    with pytest.raises(InvalidValue, match="named group"):
        TermGroup(patterns=(rf"\bleg\b.{{0,20}}(?P<{name}>swollen)",))


def test_red_flag_parts_are_named_flag_or_flag_part() -> None:
    group = TermGroup(
        patterns=(r"\bleg\b.{0,20}(?P<flag>swollen)", r"(?P<flag_side>left) (?P<flag_state>weak)")
    )
    assert len(group.patterns) == 2


def test_a_bad_group_name_in_evidence_yaml_names_the_file_and_key(tmp_path: Path) -> None:
    directory = copy_policies(tmp_path)
    path = directory / "evidence.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["terms"]["leg_swelling"]["patterns"].append(r"\bleg\b[^.?!]{0,40}\b(?P<flagg>swollen)\b")
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigurationError, match="flagg") as info:
        load_triage_policy(directory)
    assert info.value.source.endswith("evidence.yaml")
    assert info.value.key.startswith("terms.leg_swelling.patterns"), info.value.key


def test_a_bad_group_name_in_a_context_rule_names_the_file_and_rule(tmp_path: Path) -> None:
    directory = tmp_path / "policies"
    shutil.copytree(REPO / "policies", directory)
    path = directory / "contexts" / "general.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    rule = data["emergency"][0]
    rule["patterns"].append(r"\bchest pain\b.*\b(?P<flagpart>sweat\w*)\b")
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigurationError, match="flagpart") as info:
        load_policy(directory, "general")
    assert info.value.source.endswith("general.yaml")
    assert rule["id"] in info.value.key, info.value.key
