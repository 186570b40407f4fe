"""The README documents every setting, and its quick start is what CI runs."""

from __future__ import annotations

from pathlib import Path

from gateway.settings import Settings

REPO = Path(__file__).resolve().parents[2]


def test_every_setting_is_listed_in_the_readme() -> None:
    readme = (REPO / "README.md").read_text()
    missing = [var for var, _, _ in Settings.documented_variables() if f"`{var}`" not in readme]
    assert missing == []


def test_the_readme_states_every_settings_bound() -> None:
    rows = {
        line.split("|")[1].strip(" `"): line
        for line in (REPO / "README.md").read_text().splitlines()
        if line.startswith("| `GATEWAY_")
    }
    bounds = {
        var: desc[desc.index("Bounds: ") :]
        for var, _, desc in Settings.documented_variables()
        if "Bounds: " in desc
    }
    assert "GATEWAY_PORT" in bounds
    assert {var: bound for var, bound in bounds.items() if bound not in rows.get(var, "")} == {}


def test_ci_runs_the_readme_test_command() -> None:
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    assert "make test" in ci
    assert "make test" in readme
    assert "make serve" in readme
