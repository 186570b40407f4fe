"""Shared fixtures. Heavy resources (the MiniLM model) are loaded once per session."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from gateway.bootstrap import open_store

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

REPO = Path(__file__).resolve().parents[1]
SHARED_EVAL = REPO.parent / "shared" / "eval"

_hypothesis_storage: Path | None = None


def pytest_configure(config: pytest.Config) -> None:
    """Hypothesis's storage out of the checkout (#34 item 6): even with ``database=None`` it caches its
    Unicode tables and the constants of the modules it reads under ``./.hypothesis``. It reads
    ``HYPOTHESIS_STORAGE_DIRECTORY`` once, at its first use of storage, which its pytest plugin makes
    while collecting (``pytest_collection_modifyitems`` reads the constants of the test modules), before
    any fixture: so the directory is made here, and xdist workers inherit it from the controller."""
    global _hypothesis_storage
    if "HYPOTHESIS_STORAGE_DIRECTORY" not in os.environ:
        _hypothesis_storage = Path(tempfile.mkdtemp(prefix="hypothesis-"))
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(_hypothesis_storage)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _hypothesis_storage is not None:
        shutil.rmtree(_hypothesis_storage, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def shared_model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ONNX graph cache for the run (``GATEWAY_MODEL_CACHE_DIR``), shared by every gateway the tests
    start, in process or not, and by both xdist workers (the parent of their base directories): each
    gateway with a fresh data directory exported MiniLM again, 10 to 20 s apiece. Exports are written
    beside their target and renamed, so two workers exporting at once never read a partial graph."""
    root = tmp_path_factory.getbasetemp()
    shared = (root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root) / "model-cache"
    shared.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("GATEWAY_MODEL_CACHE_DIR", str(shared))
    return Path(os.environ["GATEWAY_MODEL_CACHE_DIR"])


@pytest.fixture(scope="session")
def embedder():  # type: ignore[no-untyped-def]
    from gateway.models.embedding import Embedder

    return Embedder()


@pytest.fixture(scope="session")
def shared_eval() -> Path:
    if not SHARED_EVAL.is_dir():
        pytest.skip("../shared/eval is not present")
    return SHARED_EVAL


@pytest.fixture(scope="module")
def site():  # type: ignore[no-untyped-def]
    """A page site on 127.0.0.1 for one test module (``tests.support.pages``): (the site, its URL)."""
    from tests.support.pages import running_site

    with running_site() as (pages, url):
        yield pages, url


@pytest.fixture(scope="module")
def planner():  # type: ignore[no-untyped-def]
    """The bundled policies' query planner (``knowledge.query``): question focus and vocabulary."""
    from gateway.knowledge.query import load_planner
    from gateway.resources import bundled

    return load_planner(bundled("policies"))


@pytest.fixture(scope="module")
def semantic_triage(embedder):  # type: ignore[no-untyped-def]
    """The semantic triage layers of the shipped general policy, reading messages as written."""
    from gateway.policies import load_policy
    from gateway.triage.semantic import SemanticTriage

    return SemanticTriage(load_policy(REPO / "policies", "general").triage, embedder)


@pytest.fixture(scope="module")
def spelling_semantic_triage(embedder):  # type: ignore[no-untyped-def]
    """The same layers with the query vocabulary's spelling correction (``policies/query.yaml``)."""
    from gateway.knowledge.query import load_planner
    from gateway.policies import load_policy
    from gateway.triage.semantic import SemanticTriage

    policies = REPO / "policies"
    return SemanticTriage(load_policy(policies, "general").triage, embedder, load_planner(policies).words)


FIXTURE_KB = REPO / "tests" / "fixtures" / "kb"


@pytest.fixture(scope="session")
def fixture_store(embedder, tmp_path_factory):  # type: ignore[no-untyped-def]
    """The small test corpus, ingested once into an embedded Chroma store."""
    from gateway.knowledge.loaders import load_manifest
    from gateway.settings import Settings

    settings = Settings(data_dir=tmp_path_factory.mktemp("fixture-index"))
    store = open_store(settings, embedder)
    store.upsert_documents(load_manifest(FIXTURE_KB))
    return store


@pytest.fixture
def make_services(embedder, fixture_store, tmp_path):  # type: ignore[no-untyped-def]
    """Build Services over the fixture store with fresh metrics and audit; settings overridable, and
    ``connect`` for scripted chat models (``gateway.testing.ScriptedConnections``)."""
    from gateway.bootstrap import build_services
    from gateway.settings import Settings

    built = []

    def factory(connect=None, **overrides):  # type: ignore[no-untyped-def]
        settings = Settings(data_dir=tmp_path, knowledge_dir=FIXTURE_KB, **overrides)
        services = build_services(settings, embedder=embedder, store=fixture_store, connect=connect)
        built.append(services)
        return services

    yield factory
    for services in built:
        services.audit.close()


@pytest.fixture
def services(make_services):  # type: ignore[no-untyped-def]
    """Fresh services over the fixture store (their own metrics and audit), no upstream."""
    return make_services()


@pytest.fixture
def upstream_services(upstream, make_services):  # type: ignore[no-untyped-def]
    """Fresh services whose chat models reach the module's scripted upstream (no retries)."""
    _, base_url = upstream
    return make_services(upstream_base_url=base_url, upstream_retries=0, upstream_timeout=10.0)


@pytest.fixture(scope="module")
def module_services(embedder, fixture_store, tmp_path_factory) -> Iterator[Callable[..., Any]]:  # type: ignore[no-untyped-def]
    """Like ``make_services`` but module-scoped, for gateways shared by a module's tests (the
    failed-authentication throttle off unless a test turns it on)."""
    from gateway.bootstrap import build_services
    from gateway.settings import Settings

    built: list[Any] = []

    def factory(**overrides: Any) -> Any:
        data_dir = tmp_path_factory.mktemp("module")
        overrides = {"auth_failures_per_minute": 0.0, **overrides}
        settings = Settings(data_dir=data_dir, knowledge_dir=FIXTURE_KB, **overrides)
        services = build_services(settings, embedder=embedder, store=fixture_store)
        built.append(services)
        return services

    yield factory
    for services in built:
        services.audit.close()


# --- the scripted upstream and gateways over it ----------------------------------------------------

GATEWAY_SETTINGS_NAME = "GATEWAY_SETTINGS"
"""A test module may set ``GATEWAY_SETTINGS = {...}`` (settings keywords) for its ``gateway`` and
``shared_gateway`` fixtures; ``"scripted_upstream": False`` leaves the upstream unset (the built-in
extractive responder answers)."""

Gateway = tuple[Any, str, Any]
"""A running gateway as the fixtures give it: ``(scripted upstream, base URL, services)``."""


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[Any, str]]:
    """One scripted OpenAI-compatible upstream on loopback per test module: ``(scripted, base_url)``;
    the gateway fixtures reset it for each test."""
    from gateway.testing import running_upstream

    with running_upstream() as (scripted, base_url):
        yield scripted, base_url


def _gateway_factory(
    upstream: tuple[Any, str], build: Callable[..., Any], stack: ExitStack, reuse: bool
) -> Callable[..., Gateway]:
    from tests.support.stack import running_gateway

    scripted, base_url = upstream
    started: dict[str, Gateway] = {}

    def start(
        *, scripted_upstream: bool = True, prepare: Callable[[Any], Any] | None = None, **settings: Any
    ) -> Gateway:
        key = repr((scripted_upstream, prepare, sorted(settings.items())))
        if reuse and key in started:
            return started[key]
        if scripted_upstream:
            settings = {"upstream_base_url": base_url, "upstream_retries": 0, **settings}
        services = build(**settings)
        if prepare is not None:
            services = prepare(services)
        started[key] = (scripted, stack.enter_context(running_gateway(services)), services)
        return started[key]

    return start


@pytest.fixture
def start_gateway(upstream, make_services) -> Iterator[Callable[..., Gateway]]:  # type: ignore[no-untyped-def]
    """Start gateways of this test: ``start_gateway(prepare=..., **settings)`` gives ``(scripted, url,
    services)`` over fresh services (``prepare`` may change them before serving), wired to the module's
    scripted upstream (reset here, no retries) unless ``scripted_upstream=False``; all stop after the
    test."""
    upstream[0].reset()
    with ExitStack() as stack:
        yield _gateway_factory(upstream, make_services, stack, reuse=False)


@pytest.fixture(scope="module")
def start_module_gateway(upstream, module_services) -> Iterator[Callable[..., Gateway]]:  # type: ignore[no-untyped-def]
    """Like ``start_gateway`` for gateways that a module's tests share (``module_services``): a call with
    the same arguments as an earlier one in the module returns that gateway (the caller resets the
    scripted upstream)."""
    with ExitStack() as stack:
        yield _gateway_factory(upstream, module_services, stack, reuse=True)


@pytest.fixture
def gateway(request, start_gateway) -> Gateway:  # type: ignore[no-untyped-def]
    """A gateway of this test alone, with the module's ``GATEWAY_SETTINGS``: for tests that change its
    services or count what it recorded from zero."""
    return start_gateway(**getattr(request.module, GATEWAY_SETTINGS_NAME, {}))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def module_gateway(request, start_module_gateway) -> Gateway:  # type: ignore[no-untyped-def]
    return start_module_gateway(**getattr(request.module, GATEWAY_SETTINGS_NAME, {}))  # type: ignore[no-any-return]


@pytest.fixture
def shared_gateway(module_gateway) -> Gateway:  # type: ignore[no-untyped-def]
    """One gateway for the module's tests (``GATEWAY_SETTINGS``), its scripted upstream reset for each
    test: for tests that only read it, or count relative to what they saw before."""
    module_gateway[0].reset()
    return module_gateway  # type: ignore[no-any-return]


@pytest.fixture
def policy_gateway(start_gateway, tmp_path):  # type: ignore[no-untyped-def]
    """Start gateways of this test over a copy of the shipped policies, the chat verifier pinned
    (``tests.support.cleanup_stack``): ``policy_gateway(cleanup={...}, tools={...}, **settings)`` gives
    ``(scripted, url, services)``; ``cleanup`` overrides keys of thresholds.yaml's cleanup section,
    ``tools`` top-level keys of tools.yaml."""
    import itertools

    import yaml

    from tests.support.cleanup_stack import pin_chat_verifier, policy_copy

    copies = itertools.count()

    def start(
        *, cleanup: dict[str, Any] | None = None, tools: dict[str, Any] | None = None, **settings: Any
    ) -> Gateway:
        policy_dir = policy_copy(tmp_path / f"p{next(copies)}", **(cleanup or {}))
        if tools is not None:
            path = policy_dir / "tools.yaml"
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            path.write_text(yaml.safe_dump({**data, **tools}), encoding="utf-8")
        return start_gateway(prepare=pin_chat_verifier, policy_dir=policy_dir, **settings)  # type: ignore[no-any-return]

    return start


@pytest.fixture
def module_policy_gateway(start_module_gateway, upstream, tmp_path_factory):  # type: ignore[no-untyped-def]
    """Like ``policy_gateway`` for gateways a module's tests share: equal arguments give the same gateway
    (``keyed_policy_copy``); the module's scripted upstream is reset for each test."""
    from tests.support.cleanup_stack import keyed_policy_copy, pin_chat_verifier

    upstream[0].reset()
    policies = tmp_path_factory.getbasetemp() / "cleanup-policies"

    def start(*, cleanup: dict[str, Any] | None = None, **settings: Any) -> Gateway:
        policy_dir = keyed_policy_copy(policies, **(cleanup or {}))
        return start_module_gateway(prepare=pin_chat_verifier, policy_dir=policy_dir, **settings)  # type: ignore[no-any-return]

    return start


# --- shared services of a replicated deployment (issue 16): real servers on loopback -------------


@pytest.fixture(scope="session")
def postgres_server():  # type: ignore[no-untyped-def]
    """One throw-away PostgreSQL cluster for the session (skipped only if the binaries are missing)."""
    from tests.support.services import running_postgres

    with running_postgres() as server:
        yield server


@pytest.fixture
def audit_url(postgres_server, request) -> str:  # type: ignore[no-untyped-def]
    """A fresh, empty database on the session's server, owned by the gateway role."""
    import re
    import uuid

    name = "t_" + re.sub(r"[^a-z0-9]", "_", request.node.name.lower())[:40] + "_" + uuid.uuid4().hex[:8]
    postgres_server.sql(f"CREATE DATABASE {name} OWNER gateway", "postgres")
    return str(postgres_server.url(name))


@pytest.fixture(scope="session")
def redis_server():  # type: ignore[no-untyped-def]
    """One redis-server for the session (skipped only if it is not installed)."""
    from tests.support.services import running_redis

    with running_redis() as server:
        yield server


# --- the audit store, on both backends -----------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgres"])
def audit_backend(request, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Each audit backend in turn (``tests.support.audit.Backend``): SQLite, then PostgreSQL."""
    from tests.support.audit import audit_backend_of

    with audit_backend_of(request.param, request, tmp_path) as backend:
        yield backend


@pytest.fixture
def audit_store(audit_backend):  # type: ignore[no-untyped-def]
    """An open audit store on each backend in turn, closed after the test."""
    opened = audit_backend.open()
    yield opened
    opened.close()
