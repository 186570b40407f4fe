"""Which red flags the exemplar and classifier layers may raise (``semantic`` in ``evidence.yaml``).

Triage's semantic layers recognise a category by nearness; this module binds them: to the category's
own signs (``signs``), to the health gate (``gate``) or to nothing (``free``). docs/safety.md,
"Evidence-bound red flags".
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.domain import TriageEvidence, TriageLayer
from gateway.triage.evidence_policy import SignRule
from gateway.triage.found import Reading, Signs
from gateway.triage.policy import TriagePolicy, TriageSettings
from gateway.triage.semantic import SemanticScore


@dataclass(frozen=True)
class Emergency:
    """An emergency found in a message: its red flag, the deciding layer and the evidence shown."""

    category: str
    layer: TriageLayer
    evidence: tuple[TriageEvidence, ...] = ()


@dataclass(frozen=True)
class Dropped:
    """A red flag the exemplar or classifier layer (``layer``) raised without its own signs and the
    unbound rule dropped: the text gets its safety note, naming ``signs`` (what it tells of now)."""

    category: str
    layer: TriageLayer
    signs: tuple[str, ...] = ()


def bound_semantic(
    score: SemanticScore,
    met: dict[str, Signs],
    policy: TriagePolicy,
    health_terms: bool,
    groups: frozenset[str] = frozenset(),
    denied: frozenset[str] = frozenset(),
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
    stroke, a song title as suicide). The deciding layer is what the clinician sees.

    When the nearest category is dropped so (no signs, not confident), a category whose ``adopts_when``
    groups the text names (``groups``: every term group found) is a candidate at its own bars: a post
    about despair whose nearest exemplar is a physical red flag is read as thoughts of suicide.

    A category in ``denied`` (its signs named only in denial: "no chest pain") is never a candidate."""
    nearest = policy.evidence.categories.get(score.category)
    unbound = nearest is not None and (
        nearest.semantic == "free" or (nearest.semantic == "gate" and health_terms)
    )
    gated = [score.category] if unbound else []
    candidates = list(dict.fromkeys([*met, *gated]))
    settings = policy.settings
    confident = nearest is not None and _confident(score, score.similarity, nearest, settings)
    candidates = [
        c for c in candidates if c in policy.categories and c not in denied and (c in met or confident)
    ]
    adopted: list[str] = []
    if unbound and not confident:
        adopted = [
            name
            for name, rule in policy.evidence.categories.items()
            if name in policy.categories
            and name not in candidates
            and name not in denied
            and groups.intersection(rule.adopts_when)
            and _confident(score, score.similarity_of(name), rule, settings)
        ]
    candidates += adopted
    if not candidates:
        return None
    category = max(candidates, key=score.similarity_of)
    similarity = score.similarity_of(category)
    known = policy.categories[category]
    threshold = known.threshold if known.threshold is not None else settings.exemplar_threshold
    evidence = met[category].evidence() if category in met else ()
    if similarity >= threshold and similarity >= score.contrast + settings.exemplar_margin:
        return Emergency(category, TriageLayer.EXEMPLAR, evidence)
    # an adopted category stands for the emergency read of the nearest exemplar: the veto compares
    # the contrast bank with that exemplar, as the classifier layer does
    nearest_emergency = score.similarity if category in adopted else similarity
    if (
        score.emergency_probability >= settings.emergency_probability
        and score.contrast - nearest_emergency <= settings.classifier_veto_margin
    ):
        return Emergency(category, TriageLayer.CLASSIFIER, evidence)
    return None


def _confident(score: SemanticScore, similarity: float, rule: SignRule, settings: TriageSettings) -> bool:
    """The semantic read is sure enough to raise ``rule``'s category without its signs: P(emergency),
    and the margin of ``similarity`` (the category's nearest exemplar) over the nearest contrast
    exemplar, at the category's own bars or triage.yaml's."""
    floor = settings.unbound_probability if rule.unbound_probability is None else rule.unbound_probability
    margin = settings.unbound_margin if rule.unbound_margin is None else rule.unbound_margin
    return score.emergency_probability >= floor and similarity - score.contrast >= margin


def bind_unbound(
    found: Emergency,
    reading: Reading,
    met: dict[str, Signs],
    score: SemanticScore,
    policy: TriagePolicy,
    denied: frozenset[str] = frozenset(),
) -> tuple[Emergency | None, Dropped | None]:
    """(the emergency, or the dropped raise whose safety note answers instead) for a semantic decision.

    A red flag raised without its own signs (``found.category`` not in ``met``; ``evidence.yaml``
    ``unbound``) is moved to the nearest red flag whose signs the text holds, or whose ``adopts_when``
    groups it names of now (a despairing post read as a physical red flag: thoughts of suicide;
    ``rehome``, never on ``rehome_ignores`` groups alone); else it stands only on a ``stands_on`` term
    (severity, trajectory, onset, a grave sign, mood) told of now, not denied, and not only asked
    about as a topic; otherwise the text gets the safety note of the red flag it resembles, naming the
    signs it tells of now."""
    rule = policy.evidence.unbound
    if not rule.enabled or found.category in met or found.category in rule.exempt:
        return found, None
    loose = frozenset(rule.rehome_ignores)
    told = [h for h in reading.hits if not (h.negated or h.supposed) and h.group not in loose]
    now = frozenset(h.group for h in told if not h.background)
    # a red flag whose history fires (thoughts of suicide) adopts on its groups told as history too,
    # unless the message says the episode is over ("I was suicidal at 16, I've been well for years")
    ever = now if reading.resolved else frozenset(h.group for h in told)
    homes = [
        c
        for c, signs_rule in policy.evidence.categories.items()
        if c in policy.categories
        and c not in denied
        and (
            (c in met and any(h.group not in loose for h in met[c].hits))
            or (ever if signs_rule.history_fires else now).intersection(signs_rule.adopts_when)
        )
    ]
    if rule.rehome and homes:
        home = max(homes, key=score.similarity_of)
        return Emergency(home, found.layer, met[home].evidence() if home in met else ()), None
    stands_on = frozenset(rule.stands_on)
    # a worry or a supposing clause still tells the sign ("I'm scared he won't wake up"); a question
    # about a topic does not
    if any(h.group in stands_on and not (h.negated or h.background or h.asked) for h in reading.hits):
        return found, None
    return None, Dropped(found.category, found.layer, _named(reading, policy))


def _named(reading: Reading, policy: TriagePolicy) -> tuple[str, ...]:
    """What a dropped raise's safety note names: the text's own words for any red flag's signs or a
    group of ``unbound.names`` (symptoms), told of now, first ``unbound.note_signs`` of them."""
    rule = policy.evidence.unbound
    groups = set(rule.names)
    for signs_rule in policy.evidence.categories.values():
        groups.update(g for need in (*signs_rule.requires, *signs_rule.escalate) for g in need)
    told = (
        h.text.lower()
        for h in reading.hits
        if h.group in groups and not (h.negated or h.background or h.supposed or h.asked)
    )
    return tuple(dict.fromkeys(told))[: rule.note_signs]
