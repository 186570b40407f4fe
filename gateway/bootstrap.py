"""Build the Services a gateway process needs from its Settings: once, at start-up."""

from __future__ import annotations

import structlog

from gateway.audit import open_audit_store
from gateway.cleanup import SourceRewriter, UpstreamRewriter
from gateway.cleanup.protocol import NoRewriter, Rewriter
from gateway.errors import ConfigurationError
from gateway.fetching.fetcher import SafeFetcher
from gateway.knowledge.corpus import load_manifest
from gateway.knowledge.embedding import Embedder
from gateway.knowledge.query import QueryPlanner, load_planner
from gateway.knowledge.store import ChromaStore, SearchOptions
from gateway.messages import Messages
from gateway.metrics import GatewayMetrics
from gateway.pipeline.semantic_triage import SemanticTriage
from gateway.policy.loader import Policy, load_configured_policy
from gateway.resources import bundled
from gateway.services import Services
from gateway.settings import Settings
from gateway.upstream.base import CallGate, Upstream
from gateway.upstream.extractive import ExtractiveResponder
from gateway.upstream.limited import LimitedUpstream
from gateway.upstream.openai_upstream import OpenAIUpstream
from gateway.verification.base import Verifier
from gateway.verification.cascade import build_verifier as build_verification_cascade

log = structlog.get_logger("gateway.startup")


def build_upstream(
    settings: Settings, embedder: Embedder, metrics: GatewayMetrics | None = None
) -> LimitedUpstream:
    """The configured upstream, wrapped in the concurrency/queue/deadline limits (LimitedUpstream)."""
    inner: Upstream
    if settings.upstream_base_url:
        inner = OpenAIUpstream.from_settings(settings)
    else:
        inner = ExtractiveResponder(embedder)
    return LimitedUpstream.from_settings(inner, settings, metrics)


def build_verifier(
    settings: Settings, policy: Policy, embedder: Embedder, gate: CallGate | None = None
) -> Verifier:
    """The verification cascade: quote anchoring, local entailment, and the LLM judge when configured
    (its calls under ``gate``, the shared model-call limits, when given)."""
    return build_verification_cascade(settings, policy.thresholds.verification, embedder, gate)


def build_rewriter(
    settings: Settings,
    policy: Policy,
    embedder: Embedder,
    verifier: Verifier,
    upstream: Upstream | None = None,
) -> Rewriter:
    """SourceCleanup's rewriter: a failing claim with an anchored quote becomes the source's own
    sentence(s) holding the quote (``SourceRewriter``); the upstream model's rewrite is tried first when
    configured (``cleanup.rewriter: auto`` or ``upstream``); none when ``cleanup.rewrite`` is off.
    Rewrites are re-verified by ``verifier``. The upstream rewriter's calls go through ``upstream`` when
    it is the process's ``LimitedUpstream`` (shared slots, queue, deadline and metrics), else through
    limits of its own. ``embedder`` is unused since rewrites are bound to quotes."""
    cleanup = policy.thresholds.cleanup
    if not cleanup.rewrite:
        return NoRewriter()
    verification = policy.thresholds.verification
    configured = bool(settings.upstream_base_url)
    first: Rewriter | None = None
    if cleanup.rewriter == "upstream" or (cleanup.rewriter == "auto" and configured):
        if not settings.upstream_base_url:
            reason = "'upstream' needs an upstream_base_url"
            raise ConfigurationError("thresholds.yaml", "cleanup.rewriter", reason)
        if not isinstance(upstream, LimitedUpstream) or not isinstance(upstream.inner, OpenAIUpstream):
            upstream = LimitedUpstream.from_settings(OpenAIUpstream.from_settings(settings), settings)
        first = UpstreamRewriter(upstream, verifier, cleanup)
    return SourceRewriter(
        verifier, cleanup, verification.quote_fuzzy_threshold, verification.quote_min_chars, first
    )


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


def build_planner(settings: Settings) -> QueryPlanner:
    """Question focus and vocabulary (query.yaml, vocabulary.yaml of the policy directory, else bundled)."""
    return load_planner(settings.policy_dir or bundled("policies"), fallback=bundled("policies"))


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
    embedder = embedder or Embedder.from_settings(settings)
    if store is None:
        store = ChromaStore.open(
            settings, embedder, search_options(settings, policy), planner=build_planner(settings)
        )
        ensure_index(store, settings)
    metrics = GatewayMetrics()
    metrics.declare_tiers(t.id for t in policy.tiers.tiers)
    metrics.knowledge_passages.set(store.count_sync())
    upstream = build_upstream(settings, embedder, metrics)
    verifier = build_verifier(settings, policy, embedder, upstream)
    services = Services(
        settings=settings,
        policy=policy,
        embedder=embedder,
        store=store,
        upstream=upstream,
        verifier=verifier,
        rewriter=build_rewriter(settings, policy, embedder, verifier, upstream),
        messages=Messages(settings.templates_dir or bundled("templates"), policy.context),
        metrics=metrics,
        audit=open_audit_store(settings),
        fetcher=build_fetcher(settings, policy),
        triage_model=SemanticTriage(policy.triage, embedder, build_planner(settings).words),
    )
    metrics.ready.set(1)
    log.info(
        "gateway_ready",
        upstream=services.upstream.name,
        verifier=verifier.name,
        context=policy.context.name,
        passages=store.count_sync(),
        audit=services.audit.backend,
        rate_limits="redis" if settings.redis_url else "process",
    )
    return services
