"""Which red flags the exemplar and classifier layers may raise (``semantic`` in ``evidence.yaml``).

Triage's semantic layers recognise a category by nearness; this module binds them: to the category's
own signs (``signs``), to the health gate (``gate``) or to nothing (``free``). docs/safety.md,
"Evidence-bound red flags".
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.domain import TriageEvidence, TriageLayer
from gateway.pipeline.semantic_triage import SemanticScore
from gateway.pipeline.triage_evidence import Signs
from gateway.policy.triage import TriagePolicy


@dataclass(frozen=True)
class Emergency:
    """An emergency found in a message: its red flag, the deciding layer and the evidence shown."""

    category: str
    layer: TriageLayer
    evidence: tuple[TriageEvidence, ...] = ()


def bound_semantic(
    score: SemanticScore, met: dict[str, Signs], policy: TriagePolicy, health_terms: bool
) -> Emergency | None:
    """The exemplar and classifier layers, bound to the categories whose signs the text holds: the
    nearest exemplar among those categories must be near enough (exemplar) or the emergency
    probability high enough without a contrast exemplar much nearer (classifier).

    A category bound by the health gate only (``semantic: gate`` in ``evidence.yaml``, every red flag
    as shipped; first for thoughts of suicide, told in words of mood and intent no list covers) is a
    candidate when the semantic layer
    itself recognises it (it is the nearest category of all: ``score.category``) and the text names a
    term of the gate's own groups (``health_terms``; the other red flags' signs do not count for it).
    A category bound to nothing (``semantic: free``) is a candidate whenever it is the nearest
    category of all. Without its own signs it fires with no evidence words, and only on a confident
    read (``unbound_probability`` and ``unbound_margin`` in triage.yaml): nearness alone made the
    semantic layers name red flags whose signs a message did not hold (a wrist injury read as a
    stroke, a song title as suicide). The deciding layer is what the clinician sees."""
    nearest = policy.evidence.categories.get(score.category)
    unbound = nearest is not None and (
        nearest.semantic == "free" or (nearest.semantic == "gate" and health_terms)
    )
    gated = [score.category] if unbound else []
    candidates = list(dict.fromkeys([*met, *gated]))
    settings = policy.settings
    confident = False
    if nearest is not None:
        floor = nearest.unbound_probability
        margin = nearest.unbound_margin
        confident = score.emergency_probability >= (
            settings.unbound_probability if floor is None else floor
        ) and score.similarity - score.contrast >= (settings.unbound_margin if margin is None else margin)
    candidates = [c for c in candidates if c in policy.categories and (c in met or confident)]
    if not candidates:
        return None
    category = max(candidates, key=score.similarity_of)
    similarity = score.similarity_of(category)
    known = policy.categories[category]
    threshold = known.threshold if known.threshold is not None else settings.exemplar_threshold
    evidence = met[category].evidence() if category in met else ()
    if similarity >= threshold and similarity >= score.contrast + settings.exemplar_margin:
        return Emergency(category, TriageLayer.EXEMPLAR, evidence)
    if (
        score.emergency_probability >= settings.emergency_probability
        and score.contrast - similarity <= settings.classifier_veto_margin
    ):
        return Emergency(category, TriageLayer.CLASSIFIER, evidence)
    return None
