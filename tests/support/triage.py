"""Triage tests without a model: a semantic read that says what the test needs, and the decision on one
message with it, the rule layers reading with one evidence reader per policy (as the triage component
holds one, built once)."""

from __future__ import annotations

import dataclasses

from gateway.domain import ChatRequest, Message, Role, Scope, Triage
from gateway.policies import Policy
from gateway.triage.contexts import OperatingContext
from gateway.triage.decision import decide
from gateway.triage.emergency import RuleReadings, evidence_reader
from gateway.triage.evidence import EvidenceReader
from gateway.triage.planning import TriagePlan, plan
from gateway.triage.policy import TriagePolicy
from gateway.triage.semantic import SemanticScore

_READERS: dict[int, tuple[TriagePolicy, EvidenceReader]] = {}


def reader_of(policy: TriagePolicy) -> EvidenceReader:
    """The tests' one evidence reader of ``policy`` (built on first use, ~50 ms)."""
    known = _READERS.get(id(policy))
    if known is None or known[0] is not policy:
        known = _READERS[id(policy)] = (policy, evidence_reader(policy))
    return known[1]


def readings_of(triage_plan: TriagePlan, context: OperatingContext, policy: TriagePolicy) -> RuleReadings:
    """New rule readings of one request (nothing read yet), reading with the tests' one reader."""
    return RuleReadings.of(triage_plan, context, policy, reader_of(policy))


def semantic_read(
    policy: TriagePolicy,
    *,
    near: str | None = None,
    similarity: float = 0.0,
    emergency: float = 0.0,
    exemplar: bool = False,
    classifier: bool = False,
    health: float = 0.9,
    health_similarity: float = 0.7,
) -> SemanticScore:
    """What the semantic layers would say: by default nothing (a health question, no emergency);
    ``near`` the nearest red flag, at ``similarity`` (every other at 0.1)."""
    categories = tuple(dict.fromkeys(policy.categories))
    return SemanticScore(
        category=near or categories[0],
        similarity=similarity,
        contrast=0.3,
        exemplar_fired=exemplar,
        emergency_probability=emergency,
        health_probability=health,
        health_similarity=health_similarity,
        classifier_fired=classifier,
        by_category=tuple((c, similarity if c == near else 0.1) for c in categories),
    )


def confident_read(policy: TriagePolicy, near: str) -> SemanticScore:
    """A semantic read sure of ``near``: well above the unbound bars and every exemplar threshold."""
    return semantic_read(
        policy,
        near=near,
        similarity=0.9,
        emergency=0.95,
        exemplar=True,
        classifier=True,
        health=0.95,
        health_similarity=0.8,
    )


def decide_message(
    message: str, context: OperatingContext, policy: TriagePolicy, semantic: SemanticScore
) -> Triage:
    """The layered decision on one patient message whose every planned text reads ``semantic``."""
    request = ChatRequest(messages=(Message(Role.USER, message),), model="m")
    triage_plan = plan(request, context, policy, reader_of(policy))
    readings = readings_of(triage_plan, context, policy)
    return decide(triage_plan, [semantic] * len(triage_plan.texts), context, policy, readings)


def rules_only(message: str, policy: Policy) -> Triage:
    """The decision on ``message`` when the semantic layers say nothing: only the rule layers decide."""
    return decide_message(message, policy.context, policy.triage, semantic_read(policy.triage))


def flagged_rule(message: str, policy: Policy) -> str | None:
    """The red flag the rule layers raise on ``message``, or None when it is no emergency."""
    result = rules_only(message, policy)
    return result.rule if result.scope is Scope.EMERGENCY else None


def sign_groups(message: str, policy: TriagePolicy, *, of_now: bool = False) -> set[str]:
    """The sign groups found in ``message``, not negated (``of_now``: nor history nor supposed)."""
    hits = reader_of(policy).read(message).hits
    return {h.group for h in hits if not (h.negated or (of_now and (h.background or h.supposed)))}


def escalated(policy: TriagePolicy, message: str, category: str) -> bool:
    """Whether ``message`` holds ``category``'s signs with an escalating one among them."""
    reader = reader_of(policy)
    found = reader.signs(reader.read(message), category)
    return found is not None and found.escalated


def with_unbound_rule(policy: TriagePolicy, *, enabled: bool = True, rehome: bool = True) -> TriagePolicy:
    """``policy`` with ``evidence.yaml`` ``unbound`` switched (it ships on): on, a red flag the semantic
    layers raise without its own signs is re-homed, stands on acuity, or gets the safety note."""
    evidence = policy.evidence
    unbound = dataclasses.replace(evidence.unbound, enabled=enabled, rehome=rehome)
    return dataclasses.replace(policy, evidence=dataclasses.replace(evidence, unbound=unbound))


def without_unbound_rule(policy: TriagePolicy) -> TriagePolicy:
    """``policy`` with ``evidence.yaml`` ``unbound`` off: the semantic layers' gate-bound raises as they
    were before it (the tests of the gate, the bars and adoption read them so)."""
    return with_unbound_rule(policy, enabled=False)
