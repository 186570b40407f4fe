"""Build the Services a gateway process needs from its Settings: once, at start-up."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable

import structlog

from gateway.audit import AuditStore, open_audit_store
from gateway.audit.provenance import gateway_version, policy_hash
from gateway.audit.trail import AuditTrail
from gateway.claims.splitter import SentenceSplitter, Splitter
from gateway.cleanup import SourceRewriter, UpstreamRewriter
from gateway.cleanup.cleaner import SentenceCleaner
from gateway.cleanup.rewriter import NoRewriter, Rewriter
from gateway.drafting.drafter import Drafter
from gateway.drafting.extractive import ExtractiveResponder
from gateway.drafting.model_upstream import ModelUpstream
from gateway.drafting.upstream import Upstream
from gateway.fetching.fetcher import SafeFetcher
from gateway.knowledge.instructions import InstructionDetector
from gateway.knowledge.loaders import load_manifest
from gateway.knowledge.query import QueryPlanner, load_planner
from gateway.knowledge.rewrite import QueryRewriter
from gateway.knowledge.search_options import SearchOptions
from gateway.knowledge.store import EXACT_MAX_PASSAGES, ChromaStore
from gateway.knowledge.titles import EXACT_MAX_TITLES
from gateway.messages import Messages, ReplyNotes
from gateway.metrics import GatewayMetrics
from gateway.models import Endpoint, ModelPool
from gateway.models.embedding import Embedder
from gateway.models.pool import Connect
from gateway.policies import Policy, load_configured_policy
from gateway.resources import bundled
from gateway.retrieval.retrieve import Retriever
from gateway.services import Services, utc_today
from gateway.settings import Settings
from gateway.tools.passages import ToolPassages
from gateway.triage.semantic import SemanticTriage
from gateway.triage.triager import LayeredTriager, Triager
from gateway.trust.badge import TierBadger
from gateway.validation import refuse
from gateway.verification.cascade import build_verifier as build_verification_cascade
from gateway.verification.verifier import Verifier, operating_point
from gateway.verification.verify import ClaimChecker
from gateway.vocabulary import ModelCallPurpose

log = structlog.get_logger("gateway.startup")


def build_models(
    settings: Settings, metrics: GatewayMetrics | None = None, connect: Connect | None = None
) -> ModelPool:
    """The process's chat models: one per configured endpoint, behind its limits, counted in ``metrics``;
    ``connect`` makes the model that calls an endpoint (default: the OpenAI client)."""
    return ModelPool(settings, metrics, connect)


def build_upstream(
    settings: Settings, embedder: Embedder, models: ModelPool, min_relevance: float = 0.0
) -> Upstream:
    """The configured upstream: the upstream endpoint's model from ``models`` (limits, deadline,
    metrics), or the extractive responder, which calls no model, when no endpoint is configured; it
    quotes only passages at or above ``min_relevance`` (the policy's relevance gate)."""
    if settings.upstream_base_url:
        model = models.model(Endpoint.upstream(settings), ModelCallPurpose.DRAFT)
        return ModelUpstream(model, settings.upstream_max_reply_chars, settings.upstream_max_line_chars)
    return ExtractiveResponder(embedder, min_relevance, policy_dir=settings.policy_dir)


def build_verifier(
    settings: Settings, policy: Policy, embedder: Embedder, models: ModelPool | None = None
) -> Verifier:
    """The verification cascade: quote anchoring, local entailment, and the LLM judge when configured
    (its model from ``models``, required then)."""
    return build_verification_cascade(settings, policy.thresholds.verification, embedder, models)


def build_rewriter(
    settings: Settings,
    policy: Policy,
    embedder: Embedder,
    verifier: Verifier,
    models: ModelPool | None = None,
) -> Rewriter:
    """SourceCleanup's rewriter: a failing claim with an anchored quote becomes the source's own
    sentence(s) holding the quote (``SourceRewriter``, the default ``cleanup.rewriter: extractive``);
    the upstream model's rewrite is tried first when a site opts in (``upstream``, or ``auto`` with an
    upstream configured); none when ``cleanup.rewrite`` is off.
    Rewrites are re-verified by ``verifier``. The upstream rewriter's model comes from ``models``
    (required then): the upstream endpoint's, so rewrites share the drafts' slots, queue and deadline,
    and are closed with them. ``embedder`` is unused since rewrites are bound to quotes."""
    cleanup = policy.thresholds.cleanup
    if not cleanup.rewrite:
        return NoRewriter()
    verification = policy.thresholds.verification
    configured = bool(settings.upstream_base_url)
    first: Rewriter | None = None
    if cleanup.rewriter == "upstream" or (cleanup.rewriter == "auto" and configured):
        if not settings.upstream_base_url:
            reason = "'upstream' needs an upstream_base_url"
            refuse("thresholds.yaml", "cleanup.rewriter", reason)
        if models is None:
            raise ValueError("the upstream rewriter is configured: pass the ModelPool its model comes from")
        first = UpstreamRewriter(
            models.model(Endpoint.upstream(settings), ModelCallPurpose.REWRITE), verifier, cleanup
        )
    return SourceRewriter(
        verifier, cleanup, verification.quote_fuzzy_threshold, verification.quote_min_chars, first
    )


def build_splitter(settings: Settings, policy: Policy) -> Splitter:
    """The split stage: the reply's bounds from settings, the planted-instruction patterns from cleanup."""
    planted = policy.thresholds.cleanup.planted_instruction
    return SentenceSplitter(settings.max_repeated_sentences, settings.max_draft_statements, planted)


def build_trail(
    settings: Settings,
    policy: Policy,
    audit: AuditStore,
    metrics: GatewayMetrics,
    verifier: Verifier,
) -> AuditTrail:
    """The record side of a request: the audit store and metrics, and what every record names."""
    policy_dir = settings.policy_dir or bundled("policies")
    return AuditTrail(
        store=audit,
        metrics=metrics,
        policy_hash=policy_hash(policy_dir),
        gateway_version=gateway_version(),
        context=policy.context.name,
        tier_ids=tuple(t.id for t in policy.tiers.tiers),
        verifier=verifier.name,
        keep_identifiers=settings.store_patient_identifiers,
        log_patient_text=settings.log_patient_text,
    )


def build_cleaner(
    settings: Settings, policy: Policy, rewriter: Rewriter, metrics: GatewayMetrics
) -> SentenceCleaner:
    """The cleanup stage: ``rewriter`` (``build_rewriter``) within the request's cap on model rewrites and
    its model deadline."""
    cleanup = policy.thresholds.cleanup
    return SentenceCleaner(
        rewriter, cleanup, metrics, settings.max_rewrites_per_request, settings.upstream_deadline
    )


def build_tools(
    policy: Policy, metrics: GatewayMetrics, today: Callable[[], dt.date], drafter: Drafter
) -> ToolPassages:
    """The tool steps: the tool policy, the verification's quote threshold (a claim close to an untrusted
    tool result rests on it), the clock that dates a trusted result, the metrics that count calls, and
    whether ``drafter`` reaches a model that can call the client's tools."""
    threshold = policy.thresholds.verification.quote_fuzzy_threshold
    return ToolPassages(policy.tools, threshold, today, metrics, drafter.calls_tools)


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


def build_triager(settings: Settings, policy: Policy, embedder: Embedder) -> Triager:
    """The triage stage: the operating context's rules and the triage policy's semantic layers, whose
    exemplar banks ``embedder`` encodes here, once; the speller's thresholds are ``query.yaml``'s."""
    model = SemanticTriage(policy.triage, embedder, build_planner(settings).words)
    return LayeredTriager(policy.context, model, embedder)


def build_query_rewriter(settings: Settings, models: ModelPool) -> QueryRewriter | None:
    """The upstream model's query rewrite (knowledge/rewrite.py) when ``query_rewrite`` is on: the
    upstream endpoint's model (its slots, queue and deadline), counted as purpose ``query``."""
    if not settings.query_rewrite or not settings.upstream_base_url:
        return None
    words = build_planner(settings).words.model_rewrite
    return QueryRewriter(
        models.model(Endpoint.upstream(settings), ModelCallPurpose.QUERY),
        words,
        settings.query_rewrite_deadline,
    )


def ensure_index(store: ChromaStore, settings: Settings) -> None:
    """Ingest the configured (or bundled) corpus when the collection is empty."""
    if store.count_sync() > 0 or not settings.build_index_if_missing:
        return
    directory = settings.knowledge_dir or bundled("knowledge")
    log.info("building_index", knowledge_dir=str(directory))
    summary = store.upsert_documents(load_manifest(directory))
    log.info("index_built", documents=summary.added, passages=store.count_sync())


def instruction_detector(
    settings: Settings, embedder: Embedder | None, policy: Policy | None = None
) -> InstructionDetector:
    """The knowledge store's quarantine detector: the planted-instruction rules of ``policy`` (cleanup's;
    the configured policy is loaded when none is given) and the configured ``instructions.yaml``."""
    policy = policy or load_configured_policy(settings)
    return InstructionDetector.configured(settings, policy.thresholds.cleanup.planted_instruction, embedder)


def open_store(
    settings: Settings,
    embedder: Embedder,
    options: SearchOptions | None = None,
    planner: QueryPlanner | None = None,
    *,
    policy: Policy | None = None,
    exact_max_passages: int = EXACT_MAX_PASSAGES,
    exact_max_titles: int = EXACT_MAX_TITLES,
    clock: Callable[[], float] = time.monotonic,
) -> ChromaStore:
    """``ChromaStore.open`` with the detector of ``policy`` (the configured one when not given);
    ``clock`` times the index refresh (tests drive it)."""
    return ChromaStore.open(
        settings,
        embedder,
        options,
        planner,
        exact_max_passages,
        exact_max_titles,
        instructions=instruction_detector(settings, embedder, policy),
        clock=clock,
    )


def build_services(
    settings: Settings,
    embedder: Embedder | None = None,
    store: ChromaStore | None = None,
    connect: Connect | None = None,
) -> Services:
    """Everything a request needs. Pass ``embedder``/``store`` to share already-loaded ones, ``connect``
    for chat models of your own (tests: ``gateway.testing.ScriptedConnections``): the pool is built
    here either way, so its calls are counted in the services' one metrics registry."""
    policy = load_configured_policy(settings)
    embedder = embedder or Embedder.from_settings(settings)
    if store is None:
        store = open_store(
            settings, embedder, search_options(settings, policy), build_planner(settings), policy=policy
        )
        ensure_index(store, settings)
    metrics = GatewayMetrics()
    metrics.declare_tiers(t.id for t in policy.tiers.tiers)
    metrics.knowledge_passages.set(store.count_sync())
    metrics.knowledge_quarantined.set(store.quarantined_count())
    models = build_models(settings, metrics, connect)
    verifier = build_verifier(settings, policy, embedder, models)
    today = utc_today  # the one clock: the badger's and the pages'
    upstream = build_upstream(settings, embedder, models, policy.thresholds.retrieval.min_relevance)
    rewriter = build_rewriter(settings, policy, embedder, verifier, models)
    messages = Messages(settings.templates_dir or bundled("templates"), policy.context)
    audit = open_audit_store(settings)
    triager = build_triager(settings, policy, embedder)
    fetcher = build_fetcher(settings, policy)
    query_rewriter = build_query_rewriter(settings, models)
    drafter = Drafter(upstream)
    services = Services(
        settings=settings,
        policy=policy,
        embedder=embedder,
        store=store,
        models=models,
        drafter=drafter,
        verifier=verifier,
        messages=messages,
        metrics=metrics,
        audit=audit,
        triager=triager,
        retriever=Retriever(store, policy.thresholds.retrieval, query_rewriter),
        splitter=build_splitter(settings, policy),
        checker=ClaimChecker(verifier),
        cleaner=build_cleaner(settings, policy, rewriter, metrics),
        badger=TierBadger(policy.tiers, today, operating_point(verifier)),  # what /v1/verify names
        tools=build_tools(policy, metrics, today, drafter),
        notes=ReplyNotes(messages),
        trail=build_trail(settings, policy, audit, metrics, verifier),
        today=today,
        fetcher=fetcher,
        query_rewriter=query_rewriter,
    )
    metrics.ready.set(1)
    log.info(
        "gateway_ready",
        upstream=services.drafter.name,
        verifier=verifier.name,
        context=policy.context.name,
        passages=store.count_sync(),
        audit=services.audit.backend,
        rate_limits="redis" if settings.redis_url else "process",
    )
    return services
