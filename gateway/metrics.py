"""Every Prometheus metric the gateway exports, in one place, and the helpers that count on them.

Labels are bounded enums (outcomes, verdicts, methods, reasons, tier ids from policy, error types):
never user text, never request or passage ids; their values and the ``*_label`` functions that bound
them are ``gateway.metric_labels``. Each ``GatewayMetrics`` owns its registry, so an app (or a test)
builds its own and nothing is global.

Alerts are on what happened to claims (``gateway_claim_results_total``, ``record.claim_labels``);
a rewrite to the source is normal and never alerts (``docs/operations.md``: alerts, thresholds).
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from gateway.domain import Verdict
from gateway.errors import DraftLimitExceeded, UpstreamError
from gateway.metric_labels import (
    ACCESS_AREAS,
    AUDIT_OPERATIONS,
    AUTH_FAILURE_REASONS,
    BOOLEAN,
    CALL_RESULTS,
    CLAIM_RESULTS,
    CLAIM_STATUSES,
    DRAFT_LIMITS,
    MODEL_CALL_PURPOSES,
    MODEL_FAILURES,
    MODEL_STAGES,
    PIPELINE_STAGES,
    REFUSAL_REASONS,
    REJECTED_STATUSES,
    REQUEST_OUTCOMES,
    REWRITE_SKIP_REASONS,
    STATEMENT_KINDS,
    TOOL_CALL_OUTCOMES,
    TRIAGE_LAYERS,
    TRIAGE_SCOPES,
    UPSTREAM_ERROR_TYPES,
    URL_FAILURE_REASONS,
    VERDICTS,
    VERIFIER_METHODS,
    bounded,
    flag,
    upstream_error_label,
)

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
RELEVANCE_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


class GatewayMetrics:
    """The gateway's collectors. Python attribute names are the API other modules record through."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        # --- requests -------------------------------------------------------------------------------
        self.requests = Counter(
            "gateway_requests",
            "Chat requests by final outcome: answered, rewritten (a claim was rewritten or removed), "
            "refused, emergency (safety message), error (a stage failed; the patient got a refusal).",
            ["outcome"],
            registry=r,
        )
        self.refusals = Counter(
            "gateway_refusals",
            "Answers replaced by a refusal or safety message, by reason (RefusalReason).",
            ["reason"],
            registry=r,
        )
        self.ended_early = Counter(
            "gateway_answers_ended_early",
            "Answers that stopped after verified sentences were sent, ending with a note (docs/safety.md), "
            "by reason (RefusalReason).",
            ["reason"],
            registry=r,
        )
        self.triage_decisions = Counter(
            "gateway_triage_decisions",
            "Triage decisions by scope (in_scope, out_of_scope, non_clinical, emergency) and the layer "
            "that decided (rule, exemplar, classifier, context, default).",
            ["scope", "layer"],
            registry=r,
        )
        self.context_relevance_checks = Counter(
            "gateway_context_relevance_checks",
            "In-scope questions whose retrieved context was judged, by whether it was relevant "
            "(relevant=false is a context-relevance refusal; ASTRID context relevance).",
            ["relevant"],
            registry=r,
        )
        self.context_relevance = Histogram(
            "gateway_context_relevance_score",
            "Relevance score of the best retrieved passage for each in-scope question.",
            buckets=RELEVANCE_BUCKETS,
            registry=r,
        )
        # --- claims and statements -------------------------------------------------------------------
        self.statements = Counter(
            "gateway_statements",
            "Statements of the model's drafts by kind (claim, acknowledgement, question, disclaimer).",
            ["kind"],
            registry=r,
        )
        self.claims = Counter(
            "gateway_claims",
            "Claims of the model's drafts by first verdict, before SourceCleanup "
            "(SourceCheckup statement-level support = supported / all).",
            ["verdict"],
            registry=r,
        )
        self.claim_methods = Counter(
            "gateway_claim_verdicts",
            "Claim verdicts by the verifier that decided them (method) and the verdict.",
            ["method", "verdict"],
            registry=r,
        )
        self.claim_results = Counter(
            "gateway_claim_results",
            "Claims by what happened to them: the verification status (supported, contradicted, "
            "unanchored: quote not in the cited passage, unsupported, not_verified) and what SourceCleanup "
            "did (kept, rewritten_source, rewritten_model, removed).",
            ["status", "outcome"],
            registry=r,
        )
        self.responses_checked = Counter(
            "gateway_checked_responses",
            "Drafts with at least one claim, by whether every claim was supported "
            "(SourceCheckup response-level support = fully_supported=true / all).",
            ["fully_supported"],
            registry=r,
        )
        self.informative_sentences = Counter(
            "gateway_informative_sentences",
            "Informative sentences of drafts by whether every claim in them was supported (ASTRID "
            "conversational faithfulness); acknowledgements and questions are not counted.",
            ["grounded"],
            registry=r,
        )
        self.supported_by_tier = Counter(
            "gateway_claim_evidence",
            "Supported claims that reached the patient, by the policy tier of the source that "
            "supplied the evidence.",
            ["tier"],
            registry=r,
        )
        self.cited_urls = Counter(
            "gateway_cited_urls",
            "Web URLs cited outside the knowledge base, by validity: the page was fetched from an "
            "allow-listed domain and had text (SourceCheckup URL validity = valid=true / all).",
            ["valid"],
            registry=r,
        )
        self.cited_url_failures = Counter(
            "gateway_cited_url_failures",
            "Cited web URLs that were not valid, by reason (blocked, timeout, status, too_large, ...).",
            ["reason"],
            registry=r,
        )
        # --- errors -------------------------------------------------------------------------------
        self.upstream_errors = Counter(
            "gateway_upstream_errors",
            "Upstream failures by type (timeout, connection, rate_limited, http_status, malformed).",
            ["type"],
            registry=r,
        )
        self.stage_errors = Counter(
            "gateway_stage_errors",
            "Run-time failures by the pipeline stage that failed.",
            ["stage"],
            registry=r,
        )
        self.verifier_failures = Counter(
            "gateway_verifier_failures",
            "Claims whose judge or entailment-model call failed (timeout, error, invalid_output) and "
            "therefore failed closed.",
            ["stage", "kind"],
            registry=r,
        )
        # --- access (issue 8: authentication and limits) ------------------------------------------
        self.auth_failures = Counter(
            "gateway_auth_failures",
            "Requests refused by authentication, by area (client, staff, metrics) and reason "
            "(missing, invalid, forbidden).",
            ["area", "reason"],
            registry=r,
        )
        self.rate_limited = Counter(
            "gateway_rate_limited",
            "Client requests refused with 429 by the per-key token bucket.",
            registry=r,
        )
        self.rate_limiter_errors = Counter(
            "gateway_rate_limiter_errors",
            "Client requests refused with 503 because the shared rate limiter (Redis) did not answer.",
            registry=r,
        )
        self.dependency_up = Gauge(
            "gateway_dependency_up",
            "1 when the last /readyz check of a shared service passed, 0 when it failed.",
            ["dependency"],
            registry=r,
        )
        self.auth_throttled = Counter(
            "gateway_auth_throttled",
            "Requests refused with 429 because their client address failed authentication too often.",
            registry=r,
        )
        self.rejected_requests = Counter(
            "gateway_rejected_requests",
            "Requests answered with an HTTP error before reaching the pipeline, by status.",
            ["status"],
            registry=r,
        )
        self.audit_errors = Counter(
            "gateway_audit_errors",
            "Audit store failures by operation: begin (provisional row; the request is refused), "
            "deliver (a streamed piece's write-ahead; the stream stops), complete (final row), "
            "check (readiness probe).",
            ["operation"],
            registry=r,
        )
        self.audit_chain_seq = Gauge(
            "gateway_audit_chain_head_seq",
            "The audit chain's newest entry number (gateway.audit.chain), read periodically.",
            registry=r,
        )
        self.audit_chain_hash = Gauge(
            "gateway_audit_chain_head_hash52",
            "The first 13 hex digits (52 bits) of the audit chain head's hash as a number, to anchor it "
            "outside the database; the full hash is in the audit_chain_head log line.",
            registry=r,
        )
        self.model_calls = Counter(
            "gateway_model_calls",
            "Model calls made under the shared upstream limits, by purpose and result.",
            ["purpose", "result"],
            registry=r,
        )
        self.rewrites_skipped = Counter(
            "gateway_rewrites_skipped",
            "Failing claims denied a model rewrite (cap: source rewrite only) or cut at the deadline.",
            ["reason"],
            registry=r,
        )
        self.tool_calls = Counter("gateway_tool_calls", "Tool calls, by outcome.", ["outcome"], registry=r)
        self.draft_limits = Counter(
            "gateway_draft_limit_exceeded",
            "Model replies refused as malformed_output for exceeding a bound, by bound.",
            ["limit"],
            registry=r,
        )
        self.upstream_in_flight = Gauge(
            "gateway_upstream_in_flight", "Upstream calls running now (concurrency limit).", registry=r
        )
        self.upstream_waiting = Gauge(
            "gateway_upstream_waiting", "Upstream calls waiting for a free slot now.", registry=r
        )
        # --- latency ------------------------------------------------------------------------------
        self.request_latency = Histogram(
            "gateway_request_duration_seconds",
            "Total time the gateway took to produce a chat answer (or refusal).",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.upstream_latency = Histogram(
            "gateway_upstream_duration_seconds",
            "Time spent waiting for the upstream model, per upstream call (failed calls included).",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.added_latency = Histogram(
            "gateway_added_duration_seconds",
            "Time the gateway adds to a request: total minus upstream time.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.retrieval_latency = Histogram(
            "gateway_retrieval_duration_seconds",
            "Time spent retrieving passages from the knowledge store.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.verification_latency = Histogram(
            "gateway_verification_duration_seconds",
            "Time spent verifying (and re-verifying rewrites of) one answer's claims.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.first_token_latency = Histogram(
            "gateway_time_to_first_verified_token_seconds",
            "Time from request to the first verified text sent on a stream.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        # --- state --------------------------------------------------------------------------------
        self.knowledge_passages = Gauge(
            "gateway_knowledge_passages", "Passages in the knowledge store.", registry=r
        )
        self.knowledge_quarantined = Gauge(
            "gateway_knowledge_quarantined_sentences",
            "Sentences of the committed documents quarantined at ingestion as instructions to a model "
            "or system (not indexed; listed in the ingest report).",
            registry=r,
        )
        self.ready = Gauge(
            "gateway_ready", "1 when the embedding model and the store are loaded.", registry=r
        )
        self._declare_series()

    def _declare_series(self) -> None:
        """Create every bounded series at zero, so rates and ratios exist before the first event."""
        for outcome in REQUEST_OUTCOMES:
            self.requests.labels(outcome=outcome)
        for reason in REFUSAL_REASONS:
            self.ended_early.labels(reason=reason)
            self.refusals.labels(reason=reason)
        for scope in TRIAGE_SCOPES:
            for layer in TRIAGE_LAYERS:
                self.triage_decisions.labels(scope=scope, layer=layer)
        for kind in STATEMENT_KINDS:
            self.statements.labels(kind=kind)
        for verdict in VERDICTS:
            self.claims.labels(verdict=verdict)
        for status in CLAIM_STATUSES:
            for outcome in CLAIM_RESULTS:
                self.claim_results.labels(status=status, outcome=outcome)
        for outcome in TOOL_CALL_OUTCOMES:
            self.tool_calls.labels(outcome=outcome)
        for value in BOOLEAN:
            self.responses_checked.labels(fully_supported=value)
            self.informative_sentences.labels(grounded=value)
            self.context_relevance_checks.labels(relevant=value)
            self.cited_urls.labels(valid=value)
        for method in VERIFIER_METHODS:
            for verdict in VERDICTS:
                self.claim_methods.labels(method=method, verdict=verdict)
        for stage in PIPELINE_STAGES:
            self.stage_errors.labels(stage=stage)
        for error_type in UPSTREAM_ERROR_TYPES:
            self.upstream_errors.labels(type=error_type)
        for operation in AUDIT_OPERATIONS:
            self.audit_errors.labels(operation=operation)
        for purpose in MODEL_CALL_PURPOSES:
            for result in CALL_RESULTS:
                self.model_calls.labels(purpose=purpose, result=result)
        for reason in REWRITE_SKIP_REASONS:
            self.rewrites_skipped.labels(reason=reason)
        for limit in DRAFT_LIMITS:
            self.draft_limits.labels(limit=limit)
        for status in REJECTED_STATUSES:
            self.rejected_requests.labels(status=status)
        for area in ACCESS_AREAS:
            for reason in AUTH_FAILURE_REASONS:
                self.auth_failures.labels(area=area, reason=reason)

    def declare_tiers(self, tier_ids: Iterable[str]) -> None:
        """Create the per-tier series of the loaded policy at zero."""
        for tier in tier_ids:
            self.supported_by_tier.labels(tier=tier)

    def record_cited_url(self, valid: bool, reason: str = "") -> None:
        """Count one web URL cited outside the knowledge base (for the URL fetcher to call).

        ``reason`` is the ``FetchReason`` value when the URL was not valid.
        """
        self.cited_urls.labels(valid=flag(valid)).inc()
        if not valid:
            self.cited_url_failures.labels(reason=bounded(reason, URL_FAILURE_REASONS)).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)

    def names(self) -> set[str]:
        """Every series name this registry can expose (``_total``, ``_bucket``, ``_count``, ...)."""
        suffixes = {
            "counter": ("_total", "_created"),
            "histogram": ("_bucket", "_count", "_sum", "_created"),
            "gauge": ("",),
        }
        return {
            family.name + suffix
            for family in self.registry.collect()
            for suffix in suffixes.get(family.type, ("",))
        }


def count_verifier_failures(verdicts: Iterable[Verdict], metrics: GatewayMetrics) -> None:
    """``gateway_verifier_failures_total{stage, kind}``: one count per claim a model stage failed on."""
    for verdict in verdicts:
        if verdict.failure is not None:
            metrics.verifier_failures.labels(
                stage=bounded(verdict.method, MODEL_STAGES), kind=bounded(verdict.failure, MODEL_FAILURES)
            ).inc()


def count_draft_failure(error: Exception, metrics: GatewayMetrics) -> None:
    """When a request's draft failed: ``gateway_upstream_errors_total{type}`` for an upstream failure
    (the draft's model calls are not counted there by ``MeteredModel``), and
    ``gateway_draft_limit_exceeded_total{limit}`` for a reply over a bound. Called where the failed stage
    is handled, so the count does not depend on the request's record being written."""
    if isinstance(error, UpstreamError):
        metrics.upstream_errors.labels(type=upstream_error_label(error.kind)).inc()
    if isinstance(error, DraftLimitExceeded):
        metrics.draft_limits.labels(limit=bounded(error.limit, DRAFT_LIMITS)).inc()
