"""The crisis lines are the operating context's (``crisis_lines``), named wherever thoughts of suicide or
self-harm may be in question: the emergency message, the overdose and suicide safety notes and the
non-clinical decline. A site outside the UK and the US names its own; the shipped default names
Samaritans and 988."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
import yaml

from gateway.messages import Messages
from gateway.policies import load_policy
from tests.support.shipped_triage import GENERAL, REPO

LIFELINE = "Lifeline (13 11 14, any time)"


@pytest.mark.parametrize(
    ("template", "values"),
    [
        ("emergency", {"rule": "suicidal_intent"}),
        ("red_flag_information", {"rule": "overdose"}),
        ("non_clinical", {}),
    ],
)
def test_every_message_that_gives_crisis_lines_gives_the_context_s(
    template: str, values: dict[str, str]
) -> None:
    shipped = Messages(REPO / "templates", GENERAL).render(template, **values)
    assert "Samaritans on 116 123" in shipped
    assert "988" in shipped
    site = dataclasses.replace(GENERAL, crisis_lines=LIFELINE)
    text = Messages(REPO / "templates", site).render(template, **values)
    assert LIFELINE in text
    assert "Samaritans" not in text
    assert GENERAL.emergency_number in text


def test_a_message_about_a_physical_red_flag_names_no_crisis_line() -> None:
    text = Messages(REPO / "templates", GENERAL).render("emergency", rule="chest_pain")
    assert GENERAL.crisis_lines not in text


def test_a_context_file_names_its_crisis_lines(tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    shutil.copytree(REPO / "policies", policies)
    path = policies / "contexts" / "general.yaml"
    context = yaml.safe_load(path.read_text(encoding="utf-8"))
    context["crisis_lines"] = LIFELINE
    path.write_text(yaml.safe_dump(context, allow_unicode=True), encoding="utf-8")
    assert load_policy(policies, "general").context.crisis_lines == LIFELINE
