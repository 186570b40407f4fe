"""Which red flag one text reports: the evidence layers (rules, vital signs, signs with a severity
word), then the exemplar and classifier layers, bound to the evidence (docs/safety.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gateway.domain import TriageEvidence, TriageLayer
from gateway.triage.contexts import OperatingContext
from gateway.triage.evidence import EvidenceReader, Reading, Signs, distinct, negated
from gateway.triage.policy import TriagePolicy
from gateway.triage.red_flags import Emergency, bound_semantic
from gateway.triage.rule_layer import fired, first_rule, information_only
from gateway.triage.semantic import SemanticScore
from gateway.triage.vitals import check_vitals


def evidence_reader(policy: TriagePolicy) -> EvidenceReader:
    """A new evidence reader of the policy: the triage component builds its own once, at start-up
    (``LayeredTriager.reader``), and hands it down; nothing here keeps one."""
    return EvidenceReader(policy.evidence, policy.settings.negation)


def exempt(category: str, context: OperatingContext, policy: TriagePolicy) -> bool:
    """Whether an information question about this red flag is answered (with its safety note)."""
    known = policy.categories.get(category)
    if known is not None:
        return known.information_exempt
    rule = next((r for r in context.emergency if r.id == category), None)
    return rule is not None and rule.information_exempt


@dataclass(frozen=True)
class RuleEvidence:
    """What the rule layers find in one text, before any semantic score."""

    found: Emergency | None
    """An emergency the rules, vital signs or escalated signs decide (the first escalated category
    when several: the semantic scores then pick the nearest)."""
    reading: Reading
    met: dict[str, Signs]
    info: bool
    ambiguous: bool = False
    """Several red flags' signs escalate: the semantic scores pick the category."""


RuleReadings = dict[tuple[str, bool], RuleEvidence]
"""One request's rule evidence by (text, resolved), so that ``decide_by_evidence`` and ``decide`` (and a
message that is also its only question) read each text once: the reading is the costly part of the rule
layers (docs/benchmarks.md). Made per request and dropped with it; never shared across contexts or
policies."""


def rule_evidence(
    text: str,
    context: OperatingContext,
    policy: TriagePolicy,
    reader: EvidenceReader,
    resolved: bool = False,
    readings: RuleReadings | None = None,
) -> RuleEvidence:
    """What the rule layers find in ``text``; remembered in ``readings`` when given.

    ``resolved``: the whole message says an episode is over (``EvidenceReader.resolved``), though
    ``text`` (one of its questions) may not: no history fires."""
    if readings is not None and (known := readings.get((text, resolved))) is not None:
        return known
    seen = _rule_evidence(text, context, policy, reader, resolved)
    if readings is not None:
        readings[(text, resolved)] = seen
    return seen


def _rule_evidence(
    text: str, context: OperatingContext, policy: TriagePolicy, reader: EvidenceReader, resolved: bool
) -> RuleEvidence:
    reading = reader.read(text)
    if resolved and not reading.resolved:
        reading = replace(reading, resolved=True)
    info = information_only(text, context, policy)
    if not reading.health:
        return RuleEvidence(None, reading, {}, info)
    current = reading.current()
    whole = reading.current(text_of_background=True)
    negation = policy.settings.negation
    found: Emergency | None = None
    for rule in context.emergency:
        signs_rule = policy.evidence.categories.get(rule.id)
        history = signs_rule is not None and signs_rule.history_fires and not reading.resolved
        target = whole if history else current
        matched = fired(rule, target, negation)
        if matched is not None:
            signs = reader.signs(reading, rule.id)
            found_signs = signs.evidence() if signs else ()
            extra = () if any(matched.lower() in e.text.lower() for e in found_signs) else (matched,)
            evidence = distinct((*(TriageEvidence("rule", m) for m in extra), *found_signs))
            found = Emergency(rule.id, TriageLayer.RULE, evidence)
            break
    if found is None:
        reported = [s.reported for s in reading.sentences if not s.background]
        findings = check_vitals(
            current, policy.vitals, reported, lambda sentence, at: negated(sentence, at, negation)
        )
        if findings:
            evidence = tuple(f.evidence() for f in findings)
            found = Emergency(findings[0].limit.category, TriageLayer.VITALS, evidence)
    met = {c: signs for c in policy.evidence.categories if (signs := reader.signs(reading, c)) is not None}
    if found is None:
        escalated = [signs for signs in met.values() if signs.escalated]
        if escalated:
            found = Emergency(escalated[0].category, TriageLayer.SIGNS, escalated[0].evidence())
            return RuleEvidence(found, reading, met, info, len(escalated) > 1)
    return RuleEvidence(found, reading, met, info)


def emergency_of(
    text: str,
    score: SemanticScore,
    context: OperatingContext,
    policy: TriagePolicy,
    reader: EvidenceReader,
    resolved: bool = False,
    over: frozenset[str] = frozenset(),
    readings: RuleReadings | None = None,
) -> tuple[Emergency | None, str | None]:
    """(the emergency this text reports, the red flag an information question asks about).

    The layers, in order (docs/safety.md): the health gate (no health content: never an emergency),
    the context's red-flag rules, vital signs out of range, a red flag's signs with a severity word,
    then the exemplar and classifier layers, which may only raise a category whose signs are present
    or, for a category bound by the gate (``semantic: gate``: every red flag as shipped), the nearest
    category when the text names a term of the health gate's own groups.
    Background sentences, supposing clauses and figurative wording give no signs and match no rule;
    a red flag whose signs are only denied ("no chest pain") is not raised by the semantic layers.
    """
    seen = rule_evidence(text, context, policy, reader, resolved, readings)
    reading, met, info = seen.reading, seen.met, seen.info
    if not reading.health:  # only a red flag bound to nothing (``semantic: free``) can be raised
        unbound = bound_semantic(score, {}, policy, health_terms=False)
        if unbound is None:
            return None, None
        if info and exempt(unbound.category, context, policy):
            return None, unbound.category
        return unbound, None
    found = seen.found
    if found is not None and found.layer is TriageLayer.SIGNS:
        escalated = [signs for signs in met.values() if signs.escalated]
        best = max(escalated, key=lambda signs: score.similarity_of(signs.category))
        found = Emergency(best.category, TriageLayer.SIGNS, best.evidence())
    asked_rule = first_rule(context.emergency, text, policy.settings.negation) if info else None
    if found is None and asked_rule is not None and asked_rule.information_exempt:  # with its note
        return None, asked_rule.id
    if found is None:
        groups = frozenset(hit.group for hit in reading.hits)
        denied = frozenset(
            c for c in policy.evidence.categories if c not in met and reader.denied(reading, c)
        ) | over.difference(met)
        terms = _gate_terms(reading, policy) and not _only_asks(reading, score.category, policy)
        found = bound_semantic(score, met, policy, terms, groups, denied)
    if found is None:
        # a question about a red flag whose signs it names, or a supposing clause naming them ("what
        # if I took ten of them?"): answered with the red flag's safety note
        asked: dict[str, Signs] = {}
        if info or any(hit.supposed for hit in reading.hits):
            supposed = (reader.signs(reading, c, supposed=True) for c in policy.evidence.categories)
            asked = {signs.category: signs for signs in supposed if signs is not None}
        if asked:
            category = max(asked, key=score.similarity_of)
            return None, category if exempt(category, context, policy) else None
        return None, None
    if info and exempt(found.category, context, policy):
        return None, found.category
    return found, None


def _only_asks(reading: Reading, category: str, policy: TriagePolicy) -> bool:
    """A message that only asks about a topic (``Reading.only_asks``) opens no gate for a red flag
    raised without its signs (triage.yaml ``asking_needs_current``), except one whose history and
    supposing clauses fire (thoughts of suicide: "what's the point of going on?" is not a topic)."""
    rule = policy.evidence.categories.get(category)
    return (
        policy.settings.asking_needs_current
        and reading.only_asks
        and not (rule is not None and rule.history_fires)
    )


def _gate_terms(reading: Reading, policy: TriagePolicy) -> bool:
    """Whether the text names what opens the gate for a red flag without its signs (triage.yaml
    ``gate_needs_current``, ``gate_report_groups``)."""
    settings = policy.settings
    if not settings.gate_needs_current and not settings.gate_report_groups:
        return reading.health_terms
    groups = frozenset(settings.gate_report_groups or policy.evidence.health_gate)
    return any(
        hit.group in groups
        and not (settings.gate_needs_current and (hit.negated or hit.background or hit.supposed))
        for hit in reading.hits
    )
