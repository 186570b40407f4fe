"""The Grafana dashboard is valid JSON, and every PromQL query in it names only series the gateway
exports (from a fresh GatewayMetrics registry), recording rules of deploy/prometheus, or Prometheus's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gateway.metrics import GatewayMetrics
from tests.support.promql import metric_names

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DASHBOARDS = sorted((DEPLOY / "grafana" / "dashboards").glob("*.json"))
RULES = DEPLOY / "prometheus" / "rules" / "gateway.rules.yml"
PROMETHEUS_BUILTINS = {"up", "ALERTS", "ALERTS_FOR_STATE"}


def known_names() -> set[str]:
    recorded = {
        rule["record"]
        for group in yaml.safe_load(RULES.read_text())["groups"]
        for rule in group["rules"]
        if "record" in rule
    }
    return GatewayMetrics().names() | recorded | PROMETHEUS_BUILTINS


def panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for panel in dashboard.get("panels", []):
        found.append(panel)
        found.extend(panel.get("panels", []))  # collapsed rows keep their panels inside
    return found


def queries(dashboard: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, expression) for every panel target, template variable and annotation."""
    found = [
        (panel["title"], target["expr"])
        for panel in panels(dashboard)
        for target in panel.get("targets", [])
        if target.get("expr")
    ]
    for variable in dashboard.get("templating", {}).get("list", []):
        query = variable.get("query")
        text = query.get("query") if isinstance(query, dict) else query
        if variable.get("type") == "query" and text:
            found.append((f"variable {variable['name']}", text))
    found.extend(
        (f"annotation {a['name']}", a["expr"])
        for a in dashboard.get("annotations", {}).get("list", [])
        if a.get("expr")
    )
    return found


@pytest.fixture(params=DASHBOARDS, ids=[p.name for p in DASHBOARDS])
def dashboard(request) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    data: dict[str, Any] = json.loads(request.param.read_text())
    return data


def test_there_is_a_dashboard() -> None:
    assert DASHBOARDS


def test_dashboard_is_well_formed(dashboard) -> None:  # type: ignore[no-untyped-def]
    assert dashboard["uid"]
    assert dashboard["title"]
    ids = [p["id"] for p in panels(dashboard)]
    assert len(ids) == len(set(ids)), "panel ids are unique"
    datasource = yaml.safe_load((DEPLOY / "grafana/provisioning/datasources/prometheus.yml").read_text())
    uid = datasource["datasources"][0]["uid"]
    for panel in panels(dashboard):
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == uid, panel["title"]
        assert panel["targets"], panel["title"]
        assert {"x", "y", "w", "h"} <= set(panel["gridPos"]), panel["title"]


def test_every_query_names_only_exported_metrics(dashboard) -> None:  # type: ignore[no-untyped-def]
    known = known_names()
    used: set[str] = set()
    for where, expr in queries(dashboard):
        names = metric_names(expr)
        assert names, f"{where}: no metric in {expr!r}"
        assert names <= known, f"{where}: unknown metrics {names - known} in {expr!r}"
        used |= names
    # the panels the brief asks for: grounding (what the grounding alerts watch, and the grounding rate),
    # outcomes, refusals by reason, latency, tiers
    assert {
        "gateway:claims_unanchored:ratio_rate15m",
        "gateway:claims_contradicted:ratio_rate15m",
        "gateway:claims_removed:ratio_rate15m",
        "gateway:grounding_refusals:ratio_rate15m",
        "gateway_claim_results_total",
        "gateway:grounding_rate:ratio_rate5m",
        "gateway_requests_total",
        "gateway_refusals_total",
        "gateway_upstream_duration_seconds_bucket",
        "gateway_added_duration_seconds_bucket",
        "gateway_verification_duration_seconds_bucket",
        "gateway_time_to_first_verified_token_seconds_bucket",
        "gateway_claim_evidence_total",
    } <= used


def test_the_name_check_catches_an_unknown_metric() -> None:
    known = known_names()
    assert metric_names('sum(rate(gateway_grounding_total{job=~"$job"}[$__rate_interval]))') - known == {
        "gateway_grounding_total"
    }
    assert "gateway_claims" not in known  # the counter is exported as gateway_claims_total
