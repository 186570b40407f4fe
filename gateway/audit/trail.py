"""What recording a request needs, built once at start-up: the audit store, the metrics it counts in,
and the names and settings every record carries (``gateway.pipeline.recording`` and ``.delivery`` take
this instead of the whole ``Services``). The upstream's name is not among them: each record names the
drafter that served its request (``RequestState.upstream``), so a swapped drafter is named truly."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.audit.store import AuditStore
from gateway.metrics import GatewayMetrics


@dataclass(frozen=True)
class AuditTrail:
    """The request's record side: its store and counters, and what each record names."""

    store: AuditStore
    metrics: GatewayMetrics
    policy_hash: str
    """The SHA-256 of the policy directory in effect (``provenance.policy_hash``), in each record."""
    gateway_version: str
    """The installed gateway's version, in each record's provenance."""
    context: str
    """The operating context's name."""
    tier_ids: tuple[str, ...]
    """The trust tiers of the policy (the bounded labels of ``gateway_claim_evidence_total``)."""
    verifier: str
    """The name of the verifier that checks (recorded and logged)."""
    keep_identifiers: bool
    """``store_patient_identifiers``: the request's user and metadata are kept in the record."""
    log_patient_text: bool
    """``log_patient_text``: the question and answer are written to the request's log line."""
