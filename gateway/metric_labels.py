"""The label values of the gateway's Prometheus metrics, and the functions that bound them.

Labels are bounded enums (outcomes, verdicts, methods, reasons, tier ids from policy, error types):
never user text, never request or passage ids. Values that come from code or configuration (verifier
names, policy tier ids, error kinds) are normalised here by the ``*_label`` functions: anything outside
the known set is reported as ``other``. The collectors that use them are ``gateway.metrics``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gateway.domain import (
    RefusalReason,
    Scope,
    StatementKind,
    TriageLayer,
    VerdictLabel,
    VerificationStatus,
)
from gateway.vocabulary import (
    WITHOUT_VERIFIER,
    AccessArea,
    AuditOperation,
    AuthFailure,
    CallResult,
    CleanupResult,
    Dependency,
    DraftLimit,
    FetchReason,
    ModelCallPurpose,
    RequestOutcome,
    RewriteSkipReason,
    StageName,
    ToolCallOutcome,
    UpstreamErrorType,
    VerifierFailure,
    VerifierMethod,
)

OTHER = "other"
"""The label value every unknown method, tier, error type or stage is folded into."""

REQUEST_OUTCOMES = tuple(o.value for o in RequestOutcome)
"""Final outcome of a chat request (``gateway_requests_total{outcome}``)."""
AUDIT_OPERATIONS = tuple(o.value for o in AuditOperation)
MODEL_CALL_PURPOSES = tuple(p.value for p in ModelCallPurpose)
CALL_RESULTS = tuple(r.value for r in CallResult)
REWRITE_SKIP_REASONS = tuple(r.value for r in RewriteSkipReason)
TOOL_CALL_OUTCOMES = tuple(o.value for o in ToolCallOutcome)
DRAFT_LIMITS = tuple(limit.value for limit in DraftLimit)
"""Bounds on the model's reply that refuse it as ``malformed_output``."""
REJECTED_STATUSES = ("400", "401", "403", "404", "405", "413", "415", "429", "503")
"""HTTP statuses of requests turned away before the pipeline (never audited, counted here)."""
VERDICTS = tuple(v.value for v in VerdictLabel)
REFUSAL_REASONS = tuple(r.value for r in RefusalReason)
TRIAGE_SCOPES = tuple(s.value for s in Scope)
TRIAGE_LAYERS = tuple(layer.value for layer in TriageLayer)
"""The triage layer that decided (``gateway_triage_decisions_total{scope,layer}``)."""
CLAIM_STATUSES = (*(s.value for s in VerificationStatus), "unanchored")
"""What verification found (``gateway_claim_results_total{status}``): ``Verdict.status``, except
``unanchored``: the claim's quote is missing or not in the passage it cites (a fabricated quote)."""
CLAIM_RESULTS = tuple(r.value for r in CleanupResult)
"""What SourceCleanup did (``{outcome}``)."""
STATEMENT_KINDS = tuple(k.value for k in StatementKind)
VERIFIER_METHODS = tuple(m.value for m in VerifierMethod if m not in WITHOUT_VERIFIER)
"""Names of the verifiers that may decide a claim (a verifier added later is a ``VerifierMethod``)."""
UPSTREAM_ERROR_TYPES = tuple(t.value for t in UpstreamErrorType)
"""``UpstreamError.kind`` of every upstream failure class in ``gateway.errors``."""
AUTH_FAILURE_REASONS = tuple(r.value for r in AuthFailure)
ACCESS_AREAS = tuple(a.value for a in AccessArea if a is not AccessArea.PUBLIC)
"""The areas that need a credential (``gateway_auth_failures_total{area}``): the open one is never counted."""
PIPELINE_STAGES = tuple(s.value for s in StageName)
"""Stages named by ``gateway_stage_errors_total{stage}`` (``StageName``; ``rewrite``: one claim's rewrite)."""
URL_FAILURE_REASONS = tuple(reason.value for reason in FetchReason)
"""Why a cited web URL was not valid (``FetchResult.reason``: the fetcher's bounded reasons)."""
MODEL_STAGES = (VerifierMethod.JUDGE.value, VerifierMethod.NLI.value)
"""Model stages of verification whose failures are counted (``gateway_verifier_failures_total{stage}``)."""
MODEL_FAILURES = tuple(f.value for f in VerifierFailure)
"""``Verdict.failure`` kinds (``gateway_verifier_failures_total{kind}``)."""
BOOLEAN = ("true", "false")
DEPENDENCIES = tuple(d.value for d in Dependency)
"""Shared services ``/readyz`` checks (``gateway_dependency_up{dependency}``)."""

_TOKEN = re.compile(r"[a-z][a-z0-9_]*")


def bounded(value: str, allowed: Iterable[str]) -> str:
    """``value`` when it is one of ``allowed`` (after trimming and lower-casing), else ``other``.

    A compound name such as ``cascade:judge`` or ``local+checks`` is matched on its first token.
    """
    allowed = tuple(allowed)
    low = value.strip().lower()
    if low in allowed:
        return low
    first = _TOKEN.match(low)
    if first and first.group(0) in allowed:
        return first.group(0)
    return OTHER


def method_label(method: str) -> str:
    """The ``method`` label of a verdict: the verifier's name, bounded by ``VERIFIER_METHODS``."""
    return bounded(method, VERIFIER_METHODS)


def tier_label(tier: str, policy_tiers: Iterable[str]) -> str:
    """The ``tier`` label: a tier id declared in ``policies/tiers.yaml``, else ``other``."""
    return bounded(tier, policy_tiers)


def upstream_error_label(kind: str) -> str:
    return bounded(kind, UPSTREAM_ERROR_TYPES)


def stage_label(stage: str) -> str:
    return bounded(stage, PIPELINE_STAGES)


def flag(value: bool) -> str:
    return "true" if value else "false"
