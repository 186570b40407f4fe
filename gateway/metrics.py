"""Every Prometheus metric the gateway exports, in one place.

Labels are bounded enums (outcomes, verdicts, methods, reasons, tier ids from policy, error types):
never user text, never request or passage ids. Each ``GatewayMetrics`` owns its registry, so an app
(or a test) builds its own and nothing is global.

The grounding rate that operations alert on is

    sum(rate(gateway_claims_total{verdict="supported"}[5m])) / sum(rate(gateway_claims_total[5m]))

i.e. the share of the model's claims that the verifier found supported by their cited source
(SourceCheckup's statement-level support), measured before SourceCleanup.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

REQUEST_OUTCOMES = ("answered", "rewritten", "refused", "emergency", "error")


class GatewayMetrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "gateway_requests",
            "Chat requests by final outcome (answered, rewritten, refused, emergency, error).",
            ["outcome"],
            registry=r,
        )
        self.refusals = Counter("gateway_refusals", "Refused answers by reason.", ["reason"], registry=r)
        self.claims = Counter(
            "gateway_claims",
            "Claims of the model's drafts by first verdict (before SourceCleanup).",
            ["verdict"],
            registry=r,
        )
        self.claim_methods = Counter(
            "gateway_claim_decisions",
            "Claim verdicts by the verifier that decided them and the verdict.",
            ["method", "verdict"],
            registry=r,
        )
        self.claim_outcomes = Counter(
            "gateway_claim_outcomes",
            "What SourceCleanup did to each claim (verified, rewritten, removed).",
            ["outcome"],
            registry=r,
        )
        self.responses_checked = Counter(
            "gateway_responses_checked",
            "Drafts with at least one claim, by whether every claim was supported "
            "(SourceCheckup response-level support).",
            ["fully_supported"],
            registry=r,
        )
        self.informative_sentences = Counter(
            "gateway_informative_sentences",
            "Informative sentences of drafts by whether they were grounded (ASTRID conversational "
            "faithfulness); acknowledgements and questions are not counted.",
            ["grounded"],
            registry=r,
        )
        self.statements = Counter("gateway_statements", "Statements of drafts by kind.", ["kind"], registry=r)
        self.context_relevance = Histogram(
            "gateway_context_relevance",
            "Relevance of the best retrieved passage for each in-scope question.",
            buckets=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
            registry=r,
        )
        self.cited_urls = Counter(
            "gateway_cited_urls",
            "Web URLs cited outside the knowledge base, by validity (HTTP 200 with text).",
            ["valid"],
            registry=r,
        )
        self.supported_by_tier = Counter(
            "gateway_supported_claims_by_tier",
            "Claims that reached the patient, by the tier of the source that supported them.",
            ["tier"],
            registry=r,
        )
        self.upstream_errors = Counter(
            "gateway_upstream_errors",
            "Upstream failures by type (timeout, connection, rate_limited, http_status, malformed).",
            ["type"],
            registry=r,
        )
        self.stage_errors = Counter(
            "gateway_stage_errors", "Run-time failures by pipeline stage.", ["stage"], registry=r
        )
        self.upstream_latency = Histogram(
            "gateway_upstream_latency_seconds",
            "Time spent waiting for the upstream model.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.added_latency = Histogram(
            "gateway_added_latency_seconds",
            "Time the gateway adds to a request: total minus upstream time.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.verification_latency = Histogram(
            "gateway_verification_latency_seconds",
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
        self.request_latency = Histogram(
            "gateway_request_latency_seconds",
            "Total time to answer a chat request.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.knowledge_passages = Gauge(
            "gateway_knowledge_passages", "Passages in the knowledge store.", registry=r
        )
        self.ready = Gauge(
            "gateway_ready", "1 when the embedding model and the store are loaded.", registry=r
        )
        for outcome in REQUEST_OUTCOMES:
            self.requests.labels(outcome=outcome)
        for verdict in ("supported", "unsupported", "contradicted"):
            self.claims.labels(verdict=verdict)

    def render(self) -> bytes:
        return generate_latest(self.registry)
