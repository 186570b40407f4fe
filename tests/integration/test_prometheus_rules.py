"""The Prometheus rules and configuration, checked by Debian's promtool, and cross-checked against the
metrics the gateway really exports."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gateway.metrics import GatewayMetrics
from tests.support.prometheus import PROMETHEUS_DIR, RULES_FILE, require_binary
from tests.support.promql import metric_names

pytestmark = pytest.mark.prometheus

RULE_TESTS = sorted((PROMETHEUS_DIR / "tests").glob("*.yml"))
ALERTMANAGER = PROMETHEUS_DIR.parent / "alertmanager" / "alertmanager.yml"
PROMETHEUS_BUILTINS = {"up", "ALERTS", "ALERTS_FOR_STATE"}


def promtool(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    binary = require_binary("promtool")
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def rules() -> list[dict[str, Any]]:
    return [rule for group in load(RULES_FILE)["groups"] for rule in group["rules"]]


def alerts() -> list[dict[str, Any]]:
    return [r for r in rules() if "alert" in r]


def recorded_names() -> set[str]:
    return {r["record"] for r in rules() if "record" in r}


def exported_names() -> set[str]:
    return GatewayMetrics().names() | recorded_names() | PROMETHEUS_BUILTINS


def test_promtool_checks_the_rules() -> None:
    result = promtool("check", "rules", str(RULES_FILE))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rules())} rules found" in result.stdout


def test_promtool_rule_unit_tests_pass() -> None:
    assert RULE_TESTS, "no rule unit tests in deploy/prometheus/tests"
    result = promtool("test", "rules", *map(str, RULE_TESTS), cwd=PROMETHEUS_DIR)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_promtool_fails_a_broken_rule(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The check above can fail: a rule with a PromQL syntax error is rejected."""
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "groups:\n  - name: x\n    rules:\n      - record: a:b\n        expr: sum(rate(x[5m])\n"
    )
    assert promtool("check", "rules", str(broken)).returncode != 0


def test_promtool_checks_the_scrape_configuration(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """deploy/prometheus/prometheus.yml with its rules; the secret file it names is faked here."""
    shutil.copytree(PROMETHEUS_DIR / "rules", tmp_path / "rules")
    token = tmp_path / "metrics_token"
    token.write_text("test-token\n")
    text = (PROMETHEUS_DIR / "prometheus.yml").read_text().replace("/run/secrets/metrics_token", str(token))
    (tmp_path / "prometheus.yml").write_text(text)
    result = promtool("check", "config", str(tmp_path / "prometheus.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    config = load(tmp_path / "prometheus.yml")
    jobs = {c["job_name"]: c for c in config["scrape_configs"]}
    assert jobs["trust-gateway"]["metrics_path"] == "/metrics"


def test_every_alert_is_tested_firing_and_not_firing() -> None:
    firing: set[str] = set()
    silent: set[str] = set()
    for path in RULE_TESTS:
        for case in load(path)["tests"]:
            for check in case.get("alert_rule_test", []):
                (firing if check.get("exp_alerts") else silent).add(check["alertname"])
    names = {a["alert"] for a in alerts()}
    assert names - firing == set(), "alerts never tested firing"
    assert names - silent == set(), "alerts never tested silent"
    required = {
        "GatewayQuotesNotInSource",
        "GatewayContradictionsHigh",
        "GatewayClaimRemovalsHigh",
        "GatewayGroundingRefusalsHigh",
        "GatewayRefusalSpike",
        "GatewayUpstreamErrorRateHigh",
        "GatewayVerificationLatencyHigh",
        "GatewayNoTraffic",
    }
    assert required <= names


def test_rules_name_only_metrics_the_gateway_exports() -> None:
    known = exported_names()
    for rule in rules():
        unknown = metric_names(rule["expr"]) - known
        assert not unknown, f"{rule.get('record') or rule.get('alert')}: unknown metrics {unknown}"
    assert {"gateway:grounding_rate:ratio_rate5m", "gateway:grounding_rate:ratio_rate1h"} <= recorded_names()
    assert {
        "gateway:claims_unanchored:ratio_rate15m",
        "gateway:claims_contradicted:ratio_rate15m",
        "gateway:claims_removed:ratio_rate15m",
        "gateway:grounding_refusals:ratio_rate15m",
    } <= recorded_names()
    assert {
        "gateway:response_support:ratio_rate5m",
        "gateway:response_support:ratio_rate1h",
    } <= recorded_names()


def test_no_alert_pages_on_the_grounding_rate() -> None:
    """Issue 35: a model that paraphrases has almost every claim rewritten to its source, so a low
    grounding rate (first verdicts supported) is normal and must not page anyone."""
    for alert in alerts():
        assert "grounding_rate" not in alert["expr"], alert["alert"]
        assert 'verdict="supported"' not in alert["expr"], alert["alert"]


def test_the_grounding_bench_prints_the_rules_thresholds() -> None:
    """bench/bench_grounding.py prints where each alert fires; its thresholds must be the rules' own."""
    from bench.bench_grounding import THRESHOLDS

    exprs = {a["alert"]: a["expr"] for a in alerts()}
    for share, alert in (
        ("unanchored", "GatewayQuotesNotInSource"),
        ("contradicted", "GatewayContradictionsHigh"),
        ("removed", "GatewayClaimRemovalsHigh"),
    ):
        found = re.search(rf"gateway:claims_{share}:ratio_rate15m > ([0-9.]+)", exprs[alert])
        assert found is not None, alert
        assert float(found.group(1)) == THRESHOLDS[share], alert


def test_every_alert_has_a_severity_alertmanager_routes_and_a_runbook() -> None:
    config = load(ALERTMANAGER)
    receivers = {r["name"] for r in config["receivers"]}
    routes = config["route"].get("routes", [])
    assert config["route"]["receiver"] in receivers
    assert all(r["receiver"] in receivers for r in routes)
    routed = {m.split("=", 1)[1].strip().strip('"') for r in routes for m in r["matchers"] if "severity" in m}
    operations = (PROMETHEUS_DIR.parents[1] / "docs" / "operations.md").read_text().lower()
    for alert in alerts():
        assert alert["labels"]["severity"] in routed, alert["alert"]
        assert {"summary", "description", "runbook"} <= set(alert["annotations"]), alert["alert"]
        anchor = alert["annotations"]["runbook"].split("#", 1)[1]
        assert f"### {alert['alert'].lower()}" in operations, f"docs/operations.md lacks {anchor}"
