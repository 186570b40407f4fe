"""Settings from the environment and policy files: defaults, parsing, and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.errors import ConfigurationError
from gateway.policies import Thresholds, load_policy
from gateway.resources import bundled
from gateway.settings import Secret, Settings
from gateway.trust.policy import TierPolicy
from gateway.validation import load_file


def test_settings_read_prefixed_environment_variables() -> None:
    settings = Settings.from_env(
        {
            "GATEWAY_PORT": "9001",
            "GATEWAY_UPSTREAM_BASE_URL": "http://127.0.0.1:9/v1",
            "GATEWAY_UPSTREAM_API_KEY": "sk-secret",
            "GATEWAY_API_KEYS": "a, b",
            "GATEWAY_LOG_PATIENT_TEXT": "yes",
            "GATEWAY_DATA_DIR": "/tmp/x",
        }
    )
    assert settings.port == 9001
    assert settings.upstream_api_key.reveal() == "sk-secret"
    assert [k.reveal() for k in settings.api_keys] == ["a", "b"]
    assert settings.log_patient_text is True
    assert settings.data_dir == Path("/tmp/x")
    assert settings.resolved_audit_path == Path("/tmp/x/audit.sqlite3")
    assert settings.resolved_model_cache_dir == Path("/tmp/x/cache")
    shared = Settings.from_env({"GATEWAY_DATA_DIR": "/tmp/x", "GATEWAY_MODEL_CACHE_DIR": "~/graphs"})
    assert shared.resolved_model_cache_dir == Path("~/graphs").expanduser()


def test_cli_overrides_win_over_environment() -> None:
    settings = Settings.from_env({"GATEWAY_PORT": "9001"}, port=9100, host=None)
    assert settings.port == 9100
    assert settings.host == "127.0.0.1"


def test_secrets_never_show_in_repr() -> None:
    settings = Settings(upstream_api_key=Secret("sk-live-123"))
    assert "sk-live-123" not in repr(settings)
    assert "sk-live-123" not in str(settings.upstream_api_key)


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"GATEWAY_PORT": "eighty"}, "GATEWAY_PORT"),
        ({"GATEWAY_PORT": "70000"}, "GATEWAY_PORT"),
        ({"GATEWAY_LOG_PATIENT_TEXT": "maybe"}, "GATEWAY_LOG_PATIENT_TEXT"),
        ({"GATEWAY_UPSTREAM_RESPONSE_FORMAT": "xml"}, "GATEWAY_UPSTREAM_RESPONSE_FORMAT"),
        ({"GATEWAY_CHROMA_URL": "localhost:8000"}, "GATEWAY_CHROMA_URL"),
    ],
)
def test_bad_settings_name_the_variable(env: dict[str, str], variable: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        Settings.from_env(env)
    assert variable in str(info.value)


@pytest.mark.parametrize(
    ("env", "variable", "reason"),
    [
        ({"GATEWAY_PORT": "0"}, "GATEWAY_PORT", "must be >= 1, got '0'"),
        ({"GATEWAY_PORT": "65536"}, "GATEWAY_PORT", "must be <= 65535, got '65536'"),
        ({"GATEWAY_RETRIEVE_MAX_K": "501"}, "GATEWAY_RETRIEVE_MAX_K", "must be <= 500"),
        ({"GATEWAY_UPSTREAM_TIMEOUT": "0"}, "GATEWAY_UPSTREAM_TIMEOUT", "must be > 0"),
        ({"GATEWAY_UPSTREAM_QUEUE_SIZE": "-1"}, "GATEWAY_UPSTREAM_QUEUE_SIZE", "must be >= 0"),
        ({"GATEWAY_CLINICIAN_SESSION_HOURS": "721"}, "GATEWAY_CLINICIAN_SESSION_HOURS", "must be <= 720"),
        ({"GATEWAY_AUDIT_TIMEOUT": "0"}, "GATEWAY_AUDIT_TIMEOUT", "must be > 0"),
        ({"GATEWAY_MAX_BODY_BYTES": "100"}, "GATEWAY_MAX_BODY_BYTES", "must be >= 1024"),
        ({"GATEWAY_REDIS_URL": "http://cache:6379"}, "GATEWAY_REDIS_URL", "must start with redis://"),
        ({"GATEWAY_QUERY_REWRITE": "true"}, "GATEWAY_QUERY_REWRITE", "needs an upstream model"),
    ],
)
def test_an_out_of_range_setting_names_the_variable_and_the_bound(
    env: dict[str, str], variable: str, reason: str
) -> None:
    with pytest.raises(ConfigurationError) as info:
        Settings.from_env(env)
    assert info.value.source == variable
    assert reason in info.value.reason


def test_bounds_hold_at_their_edges_and_for_direct_construction() -> None:
    edges = Settings.from_env(
        {"GATEWAY_PORT": "65535", "GATEWAY_RETRIEVE_MAX_K": "500", "GATEWAY_AUDIT_TIMEOUT": "60"}
    )
    assert (edges.port, edges.retrieve_max_k, edges.audit_timeout) == (65535, 500, 60.0)
    with pytest.raises(ConfigurationError, match="GATEWAY_RATE_LIMIT_BURST"):
        Settings(rate_limit_burst=0)
    with pytest.raises(ConfigurationError) as info:
        Settings(audit_url=Secret("mysql://admin:hunter2@db/audit"))
    assert info.value.source == "GATEWAY_AUDIT_URL"
    assert "hunter2" not in str(info.value)


def test_every_setting_is_documented() -> None:
    rows = Settings.documented_variables()
    assert all(description for _, _, description in rows)
    assert rows[[r[0] for r in rows].index("GATEWAY_PORT")][:2] == ("GATEWAY_PORT", "8000")


def test_bundled_policy_loads() -> None:
    policy = load_policy(bundled("policies"), "general")
    assert policy.context.name == "general"
    assert {t.id for t in policy.tiers.tiers} >= {
        "regulatory",
        "clinical_reference",
        "guideline",
        "educational",
        "unknown",
    }
    assert 0 < policy.thresholds.retrieval.min_relevance < 1


@pytest.mark.parametrize(
    ("yaml_text", "key", "reason"),
    [
        ("retrieval:\n  top_k: many\n", "retrieval.top_k", "expected an integer"),
        ("retrieval:\n  top_k: 0\n", "retrieval.top_k", "must be >= 1, got 0"),
        ("retrieval:\n  topk: 3\n", "retrieval.topk", "unknown key"),
        ("verification:\n  uncertain_band: [0.9, 0.1]\n", "verification.uncertain_band", "low <= high"),
        (
            "cleanup:\n  safety_critical:\n    - id: x\n      patterns: ['(unclosed']\n",
            "cleanup",
            "regular expression",
        ),
        ("retrieval: [1, 2]\n", "retrieval", "expected a mapping"),
        # YAML alone keeps the last of a repeated key silently; every policy file refuses it
        ("retrieval:\n  top_k: 3\n  top_k: 30\n", "duplicate key 'top_k'", "not valid YAML"),
    ],
)
def test_bad_policy_names_file_key_and_reason(tmp_path: Path, yaml_text: str, key: str, reason: str) -> None:
    path = tmp_path / "thresholds.yaml"
    path.write_text(yaml_text)
    with pytest.raises(ConfigurationError) as info:
        load_file(path, Thresholds)
    message = str(info.value)
    assert str(path) in message
    assert key in message
    assert reason in message


def test_tier_rules_must_name_declared_tiers(tmp_path: Path) -> None:
    path = tmp_path / "tiers.yaml"
    path.write_text(
        "tiers:\n  - {id: a, label: A, base_score: 0.9}\n"
        "default_tier: a\nrules:\n  - {tier: b, domains: [x.org]}\n"
    )
    with pytest.raises(ConfigurationError, match="tier 'b' is not declared"):
        load_file(path, TierPolicy)


def test_unknown_context_lists_the_available_ones() -> None:
    with pytest.raises(ConfigurationError, match=r"available: .*general"):
        load_policy(bundled("policies"), "no-such-context")


def test_a_type_error_names_the_variable_or_the_file_and_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as info:
        Settings.from_env({"GATEWAY_UPSTREAM_TIMEOUT": "soon"})
    assert (info.value.source, info.value.key) == ("GATEWAY_UPSTREAM_TIMEOUT", "GATEWAY_UPSTREAM_TIMEOUT")
    assert "'soon'" in info.value.reason
    path = tmp_path / "thresholds.yaml"
    path.write_text("retrieval:\n  min_relevance: high\n")
    with pytest.raises(ConfigurationError) as info:
        load_file(path, Thresholds)
    assert (info.value.source, info.value.key) == (str(path), "retrieval.min_relevance")
    assert info.value.reason == "expected a number, got 'high'"
    path = tmp_path / "tiers.yaml"
    path.write_text("tiers:\n  - {id: a, label: A, base_score: 2}\ndefault_tier: a\n")
    with pytest.raises(ConfigurationError) as info:
        load_file(path, TierPolicy)
    assert (info.value.source, info.value.key) == (str(path), "tiers[0].base_score")
    assert info.value.reason == "must be <= 1.0, got 2"


def test_an_unknown_policy_key_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "thresholds.yaml"
    path.write_text("verification:\n  quote_fuzzy_treshold: 0.9\n")
    with pytest.raises(ConfigurationError) as info:
        load_file(path, Thresholds)
    assert (info.value.source, info.value.key) == (str(path), "verification.quote_fuzzy_treshold")
    assert info.value.reason.startswith("unknown key; expected one of quote_fuzzy_threshold,")


def test_settings_ignore_other_variables_and_stay_frozen() -> None:
    settings = Settings.from_env({"GATEWAY_NO_SUCH_SETTING": "1", "HOME": "/root", "GATEWAY_POLICY_DIR": ""})
    assert settings.policy_dir is None
    with pytest.raises(Exception, match="frozen"):
        settings.port = 1  # type: ignore[misc]
    assert settings.with_changes(port=9100).port == 9100
    with pytest.raises(ConfigurationError, match="GATEWAY_PORT"):
        settings.with_changes(port=0)
