"""Build the Services a gateway process needs from its Settings: once, at start-up."""

from __future__ import annotations

import structlog

from gateway.audit import AuditLog
from gateway.cleanup import ExtractiveRewriter, UpstreamRewriter
from gateway.errors import ConfigurationError
from gateway.fetch import SafeFetcher
from gateway.knowledge.corpus import load_manifest
from gateway.knowledge.embedding import Embedder
from gateway.knowledge.store import ChromaStore, SearchOptions
from gateway.messages import Messages
from gateway.metrics import GatewayMetrics
from gateway.pipeline.semantic_triage import SemanticTriage
from gateway.policy import Policy, load_policy
from gateway.resources import bundled
from gateway.rewriting import NoRewriter, Rewriter
from gateway.services import Services
from gateway.settings import Settings
from gateway.upstream.base import Upstream
from gateway.upstream.extractive import ExtractiveResponder
from gateway.upstream.limited import LimitedUpstream
from gateway.upstream.openai_upstream import OpenAIUpstream
from gateway.verification.base import Verifier
from gateway.verification.cascade import build_verifier as build_verification_cascade

log = structlog.get_logger("gateway.startup")


def load_configured_policy(settings: Settings) -> Policy:
    return load_policy(settings.policy_dir or bundled("policies"), settings.context)


def build_upstream(settings: Settings, embedder: Embedder, metrics: GatewayMetrics | None = None) -> Upstream:
    """The configured upstream, wrapped in the concurrency/queue/deadline limits (LimitedUpstream)."""
    inner: Upstream
    if settings.upstream_base_url:
        inner = OpenAIUpstream.from_settings(settings)
    else:
        inner = ExtractiveResponder(embedder)
    return LimitedUpstream.from_settings(inner, settings, metrics)


def build_verifier(settings: Settings, policy: Policy, embedder: Embedder) -> Verifier:
    """The verification cascade: quote anchoring, local entailment, and the LLM judge when configured."""
    return build_verification_cascade(settings, policy.thresholds.verification, embedder)


def build_rewriter(settings: Settings, policy: Policy, embedder: Embedder, verifier: Verifier) -> Rewriter:
    """SourceCleanup's rewriter: the upstream model when configured (``cleanup.rewriter: auto``), else
    the extractive rewriter; none when ``cleanup.rewrite`` is off. Rewrites are re-verified by
    ``verifier``."""
    cleanup = policy.thresholds.cleanup
    if not cleanup.rewrite:
        return NoRewriter()
    configured = bool(settings.upstream_base_url)
    if cleanup.rewriter == "upstream" or (cleanup.rewriter == "auto" and configured):
        if not settings.upstream_base_url:
            reason = "'upstream' needs an upstream_base_url"
            raise ConfigurationError("thresholds.yaml", "cleanup.rewriter", reason)
        return UpstreamRewriter(OpenAIUpstream.from_settings(settings), verifier, cleanup)
    return ExtractiveRewriter(embedder, verifier, cleanup)


def build_fetcher(settings: Settings, policy: Policy) -> SafeFetcher:
    """The one web fetcher of the process (its page cache is shared by every request)."""
    return SafeFetcher.from_policy(policy.thresholds.verification, settings)


def search_options(settings: Settings, policy: Policy) -> SearchOptions:
    """How the store ranks: the retriever from settings, the candidate count from the policy."""
    return SearchOptions(
        mode=settings.retrieval_mode,
        candidates=policy.thresholds.retrieval.candidates,
        rerank=settings.retrieval_rerank,
    )


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
    embedder = embedder or Embedder(precision=settings.embedding_precision)
    if store is None:
        store = ChromaStore.open(settings, embedder, search_options(settings, policy))
        ensure_index(store, settings)
    metrics = GatewayMetrics()
    metrics.declare_tiers(t.id for t in policy.tiers.tiers)
    metrics.knowledge_passages.set(store.count_sync())
    verifier = build_verifier(settings, policy, embedder)
    services = Services(
        settings=settings,
        policy=policy,
        embedder=embedder,
        store=store,
        upstream=build_upstream(settings, embedder, metrics),
        verifier=verifier,
        rewriter=build_rewriter(settings, policy, embedder, verifier),
        messages=Messages(settings.templates_dir or bundled("templates"), policy.context),
        metrics=metrics,
        audit=AuditLog(settings.resolved_audit_path),
        fetcher=build_fetcher(settings, policy),
        triage_model=SemanticTriage(policy.triage, embedder),
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
