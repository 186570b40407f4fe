"""Build the Services a gateway process needs from its Settings: once, at start-up."""

from __future__ import annotations

import structlog

from gateway.audit import AuditLog
from gateway.knowledge.corpus import load_manifest
from gateway.knowledge.embedding import Embedder
from gateway.knowledge.store import ChromaStore
from gateway.messages import Messages
from gateway.metrics import GatewayMetrics
from gateway.policy import Policy, load_policy
from gateway.resources import bundled
from gateway.rewriting import NoRewriter, Rewriter
from gateway.services import Services
from gateway.settings import Settings
from gateway.upstream.base import Upstream
from gateway.upstream.extractive import ExtractiveResponder
from gateway.upstream.openai_upstream import OpenAIUpstream
from gateway.verification.anchoring import QuoteAnchoringVerifier
from gateway.verification.base import Verifier

log = structlog.get_logger("gateway.startup")


def load_configured_policy(settings: Settings) -> Policy:
    return load_policy(settings.policy_dir or bundled("policies"), settings.context)


def build_upstream(settings: Settings, embedder: Embedder) -> Upstream:
    if settings.upstream_base_url:
        return OpenAIUpstream.from_settings(settings)
    return ExtractiveResponder(embedder)


def build_verifier(settings: Settings, policy: Policy, embedder: Embedder) -> Verifier:
    verification = policy.thresholds.verification
    return QuoteAnchoringVerifier(verification.quote_fuzzy_threshold, verification.quote_min_chars)


def build_rewriter(settings: Settings, policy: Policy, embedder: Embedder, verifier: Verifier) -> Rewriter:
    return NoRewriter()


def ensure_index(store: ChromaStore, settings: Settings) -> None:
    """Ingest the configured (or bundled) corpus when the collection is empty."""
    if store.count_sync() > 0 or not settings.build_index_if_missing:
        return
    directory = settings.knowledge_dir or bundled("knowledge")
    log.info("building_index", knowledge_dir=str(directory))
    summary = store.upsert_documents(load_manifest(directory))
    log.info("index_built", documents=summary.added, passages=store.count_sync())


def build_services(
    settings: Settings, embedder: Embedder | None = None, store: ChromaStore | None = None
) -> Services:
    """Everything a request needs. Pass ``embedder``/``store`` to share already-loaded ones."""
    policy = load_configured_policy(settings)
    embedder = embedder or Embedder()
    if store is None:
        store = ChromaStore.open(settings, embedder)
        ensure_index(store, settings)
    metrics = GatewayMetrics()
    metrics.knowledge_passages.set(store.count_sync())
    verifier = build_verifier(settings, policy, embedder)
    services = Services(
        settings=settings,
        policy=policy,
        embedder=embedder,
        store=store,
        upstream=build_upstream(settings, embedder),
        verifier=verifier,
        rewriter=build_rewriter(settings, policy, embedder, verifier),
        messages=Messages(settings.templates_dir or bundled("templates"), policy.context),
        metrics=metrics,
        audit=AuditLog(settings.resolved_audit_path),
    )
    metrics.ready.set(1)
    log.info(
        "gateway_ready",
        upstream=services.upstream.name,
        verifier=verifier.name,
        context=policy.context.name,
        passages=store.count_sync(),
    )
    return services
