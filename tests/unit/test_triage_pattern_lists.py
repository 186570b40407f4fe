"""Named pattern lists (#34): a list that an operating context's triage rule and an ``evidence.yaml`` term
group both read is written once (``policies/triage/pattern_lists.yaml``) and named where it is read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from gateway.errors import ConfigurationError
from gateway.policies import load_policy
from gateway.triage.evidence import EvidenceReader
from gateway.triage.pattern_lists import PatternLists, evidence_with_lists, load_pattern_lists, with_lists
from gateway.triage.policy import load_triage_policy
from tests.support.shipped_triage import CATARACT, POLICY, REPO

LISTS = PatternLists({"wish": (r"\bwish i was dead\b", r"\bnever been born\b")})


def test_a_named_list_is_read_after_the_own_patterns() -> None:
    rule = {"id": "suicidal_intent", "patterns": [r"\bkill myself\b"], "pattern_lists": ["wish"]}
    assert with_lists(rule, LISTS, "f.yaml", "emergency[0]") == {
        "id": "suicidal_intent",
        "patterns": [r"\bkill myself\b", r"\bwish i was dead\b", r"\bnever been born\b"],
    }
    group = {"negatable": False, "pattern_lists": ["wish"]}
    assert evidence_with_lists({"terms": {"death": group}}, LISTS, "e.yaml")["terms"]["death"] == {
        "negatable": False,
        "patterns": [r"\bwish i was dead\b", r"\bnever been born\b"],
    }


def test_an_unknown_list_names_the_file_and_key() -> None:
    with pytest.raises(ConfigurationError) as info:
        with_lists({"patterns": [], "pattern_lists": ["wishes"]}, LISTS, "f.yaml", "emergency[2]")
    assert (info.value.source, info.value.key) == ("f.yaml", "emergency[2].pattern_lists[0]")


def test_a_bad_list_is_refused_at_start_up(tmp_path: Path) -> None:
    shutil.copytree(REPO / "policies", tmp_path / "policies")
    path = tmp_path / "policies" / "triage" / "pattern_lists.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["lists"]["death_wish"].append("(unclosed")
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigurationError) as info:
        load_policy(tmp_path / "policies", "general")
    assert info.value.source.endswith("pattern_lists.yaml")
    assert info.value.key.startswith("lists.death_wish"), info.value.key


def test_both_contexts_read_the_shipped_suicide_lists_in_order() -> None:
    """The contexts' rule reads the wish, the preparations and a method asked by its pain or ease
    (``method_asked``: researching a method, s59), not ``intent_told`` (its lethality question is a
    topic until told as the asker's own, which the rule, firing on any mention, cannot tell)."""
    lists = load_pattern_lists(REPO / "policies" / "triage").lists
    shipped = lists["death_wish"] + lists["preparatory_acts"] + lists["method_asked"]
    for policy in (POLICY, CATARACT):
        rules = [r for r in policy.context.emergency if r.id == "suicidal_intent"]
        assert rules[0].patterns[-len(shipped) :] == shipped


def test_the_triage_policy_reads_the_lists_it_is_handed() -> None:
    """``load_policy`` reads ``pattern_lists.yaml`` once and hands the lists to ``load_triage_policy``:
    ``evidence.yaml`` reads the lists it is handed, not the directory's file again."""
    directory = REPO / "policies" / "triage"
    shipped = load_pattern_lists(directory).lists
    handed = PatternLists({name: (rf"\bhanded {name}\b",) for name in shipped})
    risk = load_triage_policy(directory, lists=handed).evidence.terms["risk_to_life"].patterns
    assert risk[-2:] == (r"\bhanded death_wish\b", r"\bhanded preparatory_acts\b")
    read = load_triage_policy(directory).evidence.terms["risk_to_life"].patterns
    assert read[-len(shipped["death_wish"] + shipped["preparatory_acts"]) :] == (
        shipped["death_wish"] + shipped["preparatory_acts"]
    )


def test_suicide_words_read_the_shipped_suicide_lists() -> None:
    """``evidence.yaml`` ``suicide_words`` names ``death_wish``, ``preparatory_acts``, ``intent_told`` and
    ``method_asked``: a wish to be dead, a preparation, an intent or a method asked said only in the
    lists' words is a suicide word."""
    triage = POLICY.triage
    lists = load_pattern_lists(REPO / "policies" / "triage").lists
    shipped = lists["death_wish"] + lists["preparatory_acts"] + lists["intent_told"] + lists["method_asked"]
    assert triage.evidence.terms["suicide_words"].patterns[-len(shipped) :] == shipped
    reader = EvidenceReader(triage.evidence, triage.settings.negation, triage.vitals.pressure_signs)
    for said in (
        "I'd sooner be dead.",
        "I'm weary of living.",
        "I've been hoarding my painkillers.",
        "I have the rifle and I'm going to turn it on myself",
    ):
        assert "suicide_words" in {h.group for h in reader.read(said).hits}, said
