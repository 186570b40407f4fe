"""Which red flag one text reports: the evidence layers (rules, vital signs, signs with a severity
word), then the exemplar and classifier layers, bound to the evidence (docs/safety.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gateway.domain import TriageEvidence, TriageLayer
from gateway.triage.contexts import OperatingContext
from gateway.triage.evidence import EvidenceReader, negated
from gateway.triage.found import Reading, Signs, distinct
from gateway.triage.planning import TriagePlan
from gateway.triage.policy import TriagePolicy
from gateway.triage.red_flags import Dropped, Emergency, bind_unbound, bound_semantic
from gateway.triage.rule_layer import fired, first_rule, information_only
from gateway.triage.semantic import SemanticScore
from gateway.triage.tense import Memo
from gateway.triage.vitals import check_vitals


def evidence_reader(policy: TriagePolicy) -> EvidenceReader:
    """A new evidence reader of the policy: the triage component builds its own once, at start-up
    (``LayeredTriager.reader``), and hands it down; nothing here keeps one."""
    return EvidenceReader(policy.evidence, policy.settings.negation, policy.vitals.pressure_signs)


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
    safe: tuple[str, ...] = ()
    """The red flags the text states itself safe from ("I won't hurt myself", ``safe_when``), read once
    for every layer: none raises them, and the text is answered with the first one's safety note
    (crisis lines) unless another layer decides."""


class RuleReadings:
    """One request's rule evidence: each text read once (``decide_by_evidence`` and ``decide``, and a
    message that is also its only question, share it), each sentence's tense read once
    (``gateway.triage.tense``), and what the whole message says of its episodes (``resolved``,
    ``over``) found once. The reading is the costly part of the rule layers (docs/benchmarks.md).
    Made per request and dropped with it; never shared across contexts or policies."""

    def __init__(
        self,
        message: str,
        context: OperatingContext,
        policy: TriagePolicy,
        reader: EvidenceReader | None = None,
    ) -> None:
        """``reader``: the triage component's evidence reader (None: one built for this request)."""
        self.message = message
        self.context = context
        self.policy = policy
        self.reader = reader if reader is not None else evidence_reader(policy)
        self.tenses: Memo = {}
        self._readings: dict[tuple[str, bool], Reading] = {}
        """Each text read once, keyed by whether it is read as cut from the message."""
        self._evidence: dict[tuple[str, bool], RuleEvidence] = {}
        self._over: frozenset[str] | None = None
        self._history: frozenset[str] | None = None
        self.resolved = self.reader.tense.resolved(message)
        """The message says an episode is over (``evidence.yaml`` ``resolved``): in each of its
        questions (which may not say so) no history fires."""

    @classmethod
    def of(
        cls,
        triage_plan: TriagePlan,
        context: OperatingContext,
        policy: TriagePolicy,
        reader: EvidenceReader | None = None,
    ) -> RuleReadings:
        return cls(triage_plan.message, context, policy, reader)

    @property
    def over(self) -> frozenset[str]:
        """The red flags whose history fires told as over in the message (``EvidenceReader.over``);
        the message is read for it only when it says an episode is over."""
        if self._over is None:
            self._over = self.reader.over(self.reading(self.message)) if self.resolved else frozenset()
        return self._over

    @property
    def texts(self) -> frozenset[str]:
        """The texts read so far."""
        return frozenset(text for text, _ in self._readings)

    @property
    def history(self) -> frozenset[str]:
        """The message's sentences told as history (its tense alone is read, once)."""
        if self._history is None:
            sentences = self.reader.sentences(self.message, self.tenses)
            self._history = frozenset(s.text.strip() for s in sentences if s.background)
        return self._history

    def reading(self, text: str, of_message: bool = True) -> Reading:
        """``text`` read once. A question of a long post is read with the post's history: a sentence
        the whole message tells as history (a dated episode, the run of past-tense sentences around
        it) is history in the question cut from it too, where its date or frame may not be (#31 item
        6: "in the October I took an overdose" stood alone after "In 2020, ...")."""
        cut = of_message and text != self.message
        known = self._readings.get((text, cut))
        if known is None:
            history = self.history if cut else frozenset()
            known = self._readings[(text, cut)] = self.reader.read(text, self.tenses, history)
        return known

    def evidence(self, text: str, of_message: bool = True) -> RuleEvidence:
        """What the rule layers find in ``text``: a question of the message (or the message), read
        with the message's ``resolved``, or (``of_message`` false) an earlier turn, read on its own."""
        resolved = self.resolved and of_message
        known = self._evidence.get((text, resolved))
        if known is None:
            reading = self.reading(text, of_message)
            if resolved and not reading.resolved:
                reading = replace(reading, resolved=True)
            known = _rule_evidence(text, reading, self.context, self.policy, self.reader)
            self._evidence[(text, resolved)] = known
        return known


def _rule_evidence(
    text: str, reading: Reading, context: OperatingContext, policy: TriagePolicy, reader: EvidenceReader
) -> RuleEvidence:
    info = information_only(text, context, policy)
    if not reading.health:
        return RuleEvidence(None, reading, {}, info)
    current = reading.current()
    whole = reading.current(text_of_background=True)
    negation = policy.settings.negation
    found: Emergency | None = None
    # the red flags the text states itself safe from ("I won't hurt myself"), read once for every layer
    safe = tuple(c for c in policy.evidence.categories if reader.states_safe(reading, c))
    for rule in context.emergency:
        signs_rule = policy.evidence.categories.get(rule.id)
        history = signs_rule is not None and signs_rule.history_fires and not reading.resolved
        target = whole if history else current
        matched = fired(rule, target, negation)
        if matched is None or rule.id in safe:
            continue
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
            return RuleEvidence(found, reading, met, info, len(escalated) > 1, safe)
    return RuleEvidence(found, reading, met, info, safe=safe)


def emergency_of(
    text: str, score: SemanticScore, readings: RuleReadings, of_message: bool = True
) -> tuple[Emergency | None, str | Dropped | None]:
    """(the emergency this text reports, the red flag an information question asks about or whose
    raise without its signs was dropped to its safety note).

    The layers, in order (docs/safety.md): the health gate (no health content: never an emergency),
    the context's red-flag rules, vital signs out of range, a red flag's signs with a severity word,
    then the exemplar and classifier layers, which may only raise a category whose signs are present
    or, for a category bound by the gate (``semantic: gate``: every red flag as shipped), the nearest
    category when the text names a term of the health gate's own groups.
    Background sentences, supposing clauses and figurative wording give no signs and match no rule;
    a red flag whose signs are only denied ("no chest pain") is not raised by the semantic layers.
    ``of_message``: ``text`` is the message or one of its questions (not an earlier turn): what the
    message says is over (``RuleReadings.over``) is not raised.
    """
    context, policy = readings.context, readings.policy
    seen = readings.evidence(text, of_message)
    over = readings.over if of_message else frozenset()
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
    reader = readings.reader
    asked_rule = first_rule(context.emergency, text, policy.settings.negation) if info else None
    if found is None and asked_rule is not None and asked_rule.information_exempt:  # with its note
        return None, asked_rule.id
    if found is None:
        groups = frozenset(hit.group for hit in reading.hits)
        denied = frozenset(
            c for c in policy.evidence.categories if c not in met and reader.denied(reading, c)
        ) | over.difference(met)
        terms = _gate_terms(reading, policy, score.category) and not _only_asks(
            reading, score.category, policy
        )
        found = bound_semantic(score, met, policy, terms, groups, denied)
        if found is not None and (
            reader.reassured(reading, found.category, found.category in met)
            or reader.acuity_denied(reading, found.category)
        ):
            # told as well now, or what would make it grave denied: answered with the red flag's safety note
            return None, found.category
        if found is not None:
            found, dropped = bind_unbound(found, reading, met, score, policy, denied)
            if found is None:
                return None, dropped  # no red flag's signs, no acuity or grave sign told: its note
            if found.category in seen.safe:  # they say they are safe from it now
                return None, found.category
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
        return None, next(iter(seen.safe), None)  # a red flag they state themselves safe from: its note
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


def _gate_terms(reading: Reading, policy: TriagePolicy, category: str) -> bool:
    """Whether the text names what opens the gate for red flag ``category`` without its signs (its
    ``gate_groups``, else triage.yaml ``gate_needs_current``, ``gate_report_groups``)."""
    settings = policy.settings
    rule = policy.evidence.categories.get(category)
    own = rule.gate_groups if rule is not None else ()
    if not own and not settings.gate_needs_current and not settings.gate_report_groups:
        return reading.health_terms
    groups = frozenset(own or settings.gate_report_groups or policy.evidence.health_gate)
    return any(
        hit.group in groups
        and not (settings.gate_needs_current and (hit.negated or hit.background or hit.supposed))
        for hit in reading.hits
    )
