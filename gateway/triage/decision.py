"""Stage 1: triage a message against the deployment's operating context, before any retrieval.

Layers, each recorded as the deciding ``TriageLayer`` (docs/safety.md):

1. **rule**: the context's red-flag rules (``policies/contexts/<name>.yaml``), negation-aware: a match
   whose words are negated ("no chest pain", "denies", "without fever") does not fire;
2. **exemplar**: the nearest exemplar of ``policies/triage/emergency_exemplars.yaml`` (MiniLM cosine);
3. **classifier**: logistic-regression heads over the same embeddings (``classifier.json``);
4. **context**: the last few user turns: an emergency reported earlier is not forgotten, and a
   follow-up ("what are other causes?") inherits a clinical conversation.

Emergencies win over everything and are recall-first: any layer firing anywhere in the message (or in
a recent turn) gets the safety message, with no model call. Otherwise each question of the message is
judged on its own (non-clinical, out of scope, in scope), so a message with several questions can have
some answered and the rest explicitly declined. Health-question recognition is semantic (classifier
plus banks); when unsure, a message is clinical: refusing a real health question is the worse error.

A general information question about a red flag ("what are the signs of a stroke?") is answered with
the emergency safety note when the rule or category is ``information_exempt``; a question that also
reports a personal situation ("how do I know if I'm having a stroke?") stays an emergency.

All texts of one request (its questions, the whole message, the recent turns) are encoded in one
``encode`` call, off the event loop, by the pipeline's component (``gateway.triage.triager``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from gateway.domain import (
    ChatRequest,
    QuestionTriage,
    Role,
    Scope,
    Triage,
    TriageEvidence,
    TriageLayer,
)
from gateway.text import sentence_spans
from gateway.triage.contexts import OperatingContext, TriageRule
from gateway.triage.evidence import EvidenceReader, Reading, Signs, distinct, negated
from gateway.triage.policy import NegationPolicy, TriagePolicy
from gateway.triage.red_flags import Emergency, bound_semantic
from gateway.triage.semantic import SemanticScore
from gateway.triage.vitals import check_vitals


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _matches(patterns: tuple[str, ...], text: str) -> bool:
    return any(_compiled(p).search(text) for p in patterns)


# --- layer 1: rules, negation-aware ------------------------------------------------------------------


def _fires(rule: TriageRule, text: str, negation: NegationPolicy | None) -> bool:
    return _fired(rule, text, negation) is not None


def _fired(rule: TriageRule, text: str, negation: NegationPolicy | None) -> str | None:
    """The words of the first match of ``rule`` that is not negated, if any."""
    for pattern in rule.patterns:
        for match in _compiled(pattern).finditer(text):
            if negation is None or not rule.negatable or not negated(text, _flag_start(match), negation):
                return match.group(0)
    return None


def _flag_start(match: re.Match[str]) -> int:
    """Where the red flag itself starts: the named group ``flag`` when the pattern has one (so that
    "30 weeks pregnant, no bleeding" checks the words before "bleeding"), else the whole match."""
    if "flag" in match.re.groupindex and match.start("flag") >= 0:
        return match.start("flag")
    return match.start()


def _first_rule(
    rules: tuple[TriageRule, ...], text: str, negation: NegationPolicy | None = None
) -> TriageRule | None:
    return next((rule for rule in rules if _fires(rule, text, negation)), None)


def _is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?")


def information_only(text: str, context: OperatingContext, policy: TriagePolicy | None = None) -> bool:
    """A general question that reports nothing personal ("what are the signs of a stroke?"); with a
    policy, vignette and third-person reports (``evidence.yaml`` ``information_personal``) are personal."""
    extra = policy.evidence.information_questions if policy is not None else ()
    if not (_matches(context.information_questions, text) or _matches(extra, text)):
        return False
    if _matches(context.personal_report, text):
        return False
    return policy is None or not _matches(policy.evidence.information_personal, text)


def red_flag(
    text: str, context: OperatingContext, negation: NegationPolicy | None = None
) -> TriageRule | None:
    """The emergency rule this text reports, if any (information questions excepted)."""
    rule = _first_rule(context.emergency, text, negation)
    if rule is None or (rule.information_exempt and information_only(text, context)):
        return None
    return rule


def split_questions(
    message: str,
    context: OperatingContext,
    negation: NegationPolicy | None = None,
    correct: Callable[[str], str] | None = None,
) -> list[str]:
    """Group sentences into questions: each group ends at a question mark and carries the statements
    before it (their context). A statement that raises a red flag on its own stands alone, so it
    cannot drag a routine question into the emergency and that question can be declined explicitly.
    Statements after the last question join it."""
    return [written for written, _ in _question_groups(message, context, negation, correct)]


def _question_groups(
    message: str,
    context: OperatingContext,
    negation: NegationPolicy | None,
    correct: Callable[[str], str] | None,
) -> list[tuple[str, str]]:
    """``split_questions`` as (the patient's words, the spelling-corrected words) per question."""
    text = message.strip()
    groups: list[tuple[list[str], list[str]]] = []
    pending: tuple[list[str], list[str]] = ([], [])
    for span in sentence_spans(text):
        written = text[span.start : span.end]
        read = correct(written) if correct else written
        if not _is_question(written) and red_flag(read, context, negation):
            groups.extend([pending, ([written], [read])] if pending[0] else [([written], [read])])
            pending = ([], [])
            continue
        pending[0].append(written)
        pending[1].append(read)
        if _is_question(written):
            groups.append(pending)
            pending = ([], [])
    if pending[0]:
        if groups and _is_question(groups[-1][0][-1]):
            groups[-1][0].extend(pending[0])
            groups[-1][1].extend(pending[1])
        else:
            groups.append(pending)
    joined = [(" ".join(w), " ".join(r)) for w, r in groups]
    return joined or [(text, correct(text) if correct else text)]


# --- the plan: which texts one request encodes ------------------------------------------------------


@dataclass(frozen=True)
class TriagePlan:
    """The texts of one request, in the order they are encoded (one batch)."""

    questions: tuple[str, ...]
    """The message's questions as triage reads them (spelling corrected: ``triage_spelling``)."""
    message: str
    history: tuple[str, ...]
    """Earlier user turns, most recent last (bounded by ``context_turns`` and ``context_max_chars``)."""
    written: tuple[str, ...] = ()
    """The same questions in the patient's own words (what the rest of the pipeline is given)."""

    @property
    def texts(self) -> list[str]:
        whole = [self.message] if len(self.questions) > 1 else []
        # the latest message first: the encoder truncates long texts from the end
        conversation = [" ".join([self.message, *reversed(self.history)])] if self.history else []
        return [*self.questions, *whole, *self.history, *conversation]


def plan(
    request: ChatRequest,
    context: OperatingContext,
    policy: TriagePolicy,
    correct: Callable[[str], str] | None = None,
) -> TriagePlan:
    """The texts triage reads; ``correct`` (a ``TriageSpeller``) fixes misspellings in all of them."""
    settings = policy.settings
    fix = correct or (lambda text: text)
    users = [m.content for m in request.messages if m.role is Role.USER]
    message = (users[-1] if users else "").strip()
    earlier = users[:-1][-settings.context_turns :] if settings.context_turns else []
    history = tuple(fix(t.strip()[-settings.context_max_chars :]) for t in earlier if t.strip())
    groups = _question_groups(message, context, settings.negation, correct)
    questions = tuple(read for _, read in groups)
    return TriagePlan(questions, fix(message), history, tuple(written for written, _ in groups))


# --- decisions -----------------------------------------------------------------------------------


_READERS: dict[int, tuple[TriagePolicy, EvidenceReader]] = {}


def evidence_reader(policy: TriagePolicy) -> EvidenceReader:
    """The policy's evidence reader (built once per policy object)."""
    cached = _READERS.get(id(policy))
    if cached is None or cached[0] is not policy:
        cached = (policy, EvidenceReader(policy.evidence, policy.settings.negation))
        _READERS[id(policy)] = cached
    return cached[1]


def _exempt(category: str, context: OperatingContext, policy: TriagePolicy) -> bool:
    """Whether an information question about this red flag is answered (with its safety note)."""
    known = policy.categories.get(category)
    if known is not None:
        return known.information_exempt
    rule = next((r for r in context.emergency if r.id == category), None)
    return rule is not None and rule.information_exempt


@dataclass(frozen=True)
class _Evidence:
    """What the rule layers find in one text, before any semantic score."""

    found: Emergency | None
    """An emergency the rules, vital signs or escalated signs decide (the first escalated category
    when several: the semantic scores then pick the nearest)."""
    reading: Reading
    met: dict[str, Signs]
    info: bool
    ambiguous: bool = False
    """Several red flags' signs escalate: the semantic scores pick the category."""


def _evidence(text: str, context: OperatingContext, policy: TriagePolicy) -> _Evidence:
    reader = evidence_reader(policy)
    reading = reader.read(text)
    info = information_only(text, context, policy)
    if not reading.health:
        return _Evidence(None, reading, {}, info)
    current = reading.current()
    whole = reading.current(text_of_background=True)
    negation = policy.settings.negation
    found: Emergency | None = None
    for rule in context.emergency:
        signs_rule = policy.evidence.categories.get(rule.id)
        target = whole if signs_rule is not None and signs_rule.history_fires else current
        matched = _fired(rule, target, negation)
        if matched is not None:
            signs = reader.signs(reading, rule.id)
            found_signs = signs.evidence() if signs else ()
            extra = () if any(matched.lower() in e.text.lower() for e in found_signs) else (matched,)
            evidence = distinct((*(TriageEvidence("rule", m) for m in extra), *found_signs))
            found = Emergency(rule.id, TriageLayer.RULE, evidence)
            break
    if found is None:
        reported = [s.reported for s in reading.sentences if not s.background]
        findings = check_vitals(current, policy.vitals, reported)
        if findings:
            evidence = tuple(f.evidence() for f in findings)
            found = Emergency(findings[0].limit.category, TriageLayer.VITALS, evidence)
    met = {c: signs for c in policy.evidence.categories if (signs := reader.signs(reading, c)) is not None}
    if found is None:
        escalated = [signs for signs in met.values() if signs.escalated]
        if escalated:
            found = Emergency(escalated[0].category, TriageLayer.SIGNS, escalated[0].evidence())
            return _Evidence(found, reading, met, info, len(escalated) > 1)
    return _Evidence(found, reading, met, info)


def _emergency(
    text: str, score: SemanticScore, context: OperatingContext, policy: TriagePolicy
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
    seen = _evidence(text, context, policy)
    reading, met, info = seen.reading, seen.met, seen.info
    if not reading.health:  # only a red flag bound to nothing (``semantic: free``) can be raised
        unbound = bound_semantic(score, {}, policy, health_terms=False)
        if unbound is None:
            return None, None
        if info and _exempt(unbound.category, context, policy):
            return None, unbound.category
        return unbound, None
    found = seen.found
    if found is not None and found.layer is TriageLayer.SIGNS:
        escalated = [signs for signs in met.values() if signs.escalated]
        best = max(escalated, key=lambda signs: score.similarity_of(signs.category))
        found = Emergency(best.category, TriageLayer.SIGNS, best.evidence())
    reader = evidence_reader(policy)
    asked_rule = _first_rule(context.emergency, text, policy.settings.negation) if info else None
    if found is None and asked_rule is not None and asked_rule.information_exempt:  # with its note
        return None, asked_rule.id
    if found is None:
        groups = frozenset(hit.group for hit in reading.hits)
        denied = frozenset(
            c for c in policy.evidence.categories if c not in met and reader.denied(reading, c)
        )
        terms = _gate_terms(reading, policy)
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
            return None, category if _exempt(category, context, policy) else None
        return None, None
    if info and _exempt(found.category, context, policy):
        return None, found.category
    return found, None


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


def decide_by_evidence(
    triage_plan: TriagePlan, context: OperatingContext, policy: TriagePolicy
) -> Triage | None:
    """The decision when the rule layers alone make the message an emergency (a red-flag rule, a vital
    sign out of range, or a red flag's signs with a severity word, in a question that is not a general
    information question): the semantic layers cannot lower an emergency, so the encoder is skipped.
    None when the semantic scores are needed. The other questions are left undecided (they are
    deferred by the emergency; ``deferred_questions``)."""
    found: Emergency | None = None
    questions: list[QuestionTriage] = []
    written = triage_plan.written or triage_plan.questions
    for text, shown in zip(triage_plan.questions, written, strict=True):
        seen = _evidence(text, context, policy)
        emergency = seen.found
        if seen.ambiguous or (
            emergency is not None and seen.info and _exempt(emergency.category, context, policy)
        ):
            return None  # the scores name the category, or give an information question its note
        if emergency is not None:
            reason = f"red flag ({emergency.layer.value}): {emergency.category}"
            questions.append(
                QuestionTriage(shown, Scope.EMERGENCY, reason, emergency.category, emergency.layer)
            )
            found = found or emergency
        else:
            questions.append(
                QuestionTriage(
                    shown, Scope.IN_SCOPE, "not judged: deferred by the emergency", None, TriageLayer.DEFAULT
                )
            )
    if found is None:
        return None
    reason = f"red flag ({found.layer.value}): {found.category}"
    return Triage(
        Scope.EMERGENCY,
        reason,
        found.category,
        tuple(questions),
        found.layer,
        _label(found.category, policy),
        found.evidence,
    )


def _label(category: str, policy: TriagePolicy) -> str | None:
    """The emergency message's name for a category (a vital sign's own category: its limit's label)."""
    if category not in policy.categories:
        limit = next((lim for lim in policy.vitals.limits if lim.category == category), None)
        if limit is not None:
            return limit.label
    return policy.label(category)


def _health(score: SemanticScore, policy: TriagePolicy) -> bool | None:
    """True: a health question; False: not one; None: unsure (treated as clinical)."""
    settings = policy.settings
    if score.health_probability >= max(settings.clinical_probability, 0.5):
        return True
    if (
        score.health_probability < settings.clinical_probability
        and score.health_similarity < settings.health_similarity
    ):
        return False
    return None


def _scope(
    text: str,
    score: SemanticScore,
    context: OperatingContext,
    policy: TriagePolicy,
    conversation_clinical: bool,
    note: str | None,
) -> QuestionTriage:
    rule = _first_rule(context.non_clinical, text)
    if rule:
        return QuestionTriage(
            text, Scope.NON_CLINICAL, f"not a clinical request: {rule.id}", rule.id, TriageLayer.RULE
        )
    health = _health(score, policy)
    layer = TriageLayer.CLASSIFIER if health else TriageLayer.DEFAULT
    if health is False and context.clinical_terms and _matches(context.clinical_terms, text):
        health, layer = None, TriageLayer.RULE
    if health is False:
        inherits = conversation_clinical and score.health_probability >= policy.settings.inherit_probability
        if not inherits:
            return QuestionTriage(
                text, Scope.NON_CLINICAL, "no health question recognised", None, TriageLayer.CLASSIFIER
            )
        layer = TriageLayer.CONTEXT
    rule = _first_rule(context.out_of_scope, text)
    if rule:
        return QuestionTriage(
            text, Scope.OUT_OF_SCOPE, f"needs a clinician: {rule.id}", rule.id, TriageLayer.RULE
        )
    if context.in_scope and not _matches(context.in_scope, text):
        return QuestionTriage(
            text, Scope.OUT_OF_SCOPE, f"outside the {context.name} service", None, TriageLayer.RULE
        )
    if note is not None:
        return QuestionTriage(text, Scope.IN_SCOPE, f"information about a red flag: {note}", note, layer)
    return QuestionTriage(text, Scope.IN_SCOPE, "in scope", None, layer)


def decide(
    triage_plan: TriagePlan, scores: Sequence[SemanticScore], context: OperatingContext, policy: TriagePolicy
) -> Triage:
    """Combine the rule layer with the semantic scores of ``triage_plan.texts`` (same order)."""
    if len(scores) != len(triage_plan.texts):
        raise ValueError("one semantic score per planned text is required")
    n = len(triage_plan.questions)
    question_scores = scores[:n]
    rest = list(scores[n:])
    whole_score = rest.pop(0) if n > 1 else None
    history_scores = rest[: len(triage_plan.history)]
    conversation_score = rest[len(triage_plan.history)] if triage_plan.history else None

    conversation_clinical = any(
        _health(s, policy) is not False
        for s in [*history_scores, *([conversation_score] if conversation_score else [])]
    )
    questions: list[QuestionTriage] = []
    found: Emergency | None = None
    for text, score in zip(triage_plan.questions, question_scores, strict=True):
        emergency, note = _emergency(text, score, context, policy)
        if emergency is not None:
            reason = f"red flag ({emergency.layer.value}): {emergency.category}"
            questions.append(
                QuestionTriage(text, Scope.EMERGENCY, reason, emergency.category, emergency.layer)
            )
            found = found or emergency
            continue
        questions.append(_scope(text, score, context, policy, conversation_clinical, note))
    if found is None and whole_score is not None:
        found, _ = _emergency(triage_plan.message, whole_score, context, policy)
    if found is None:
        for turn, score in zip(triage_plan.history, history_scores, strict=True):
            earlier, _ = _emergency(turn, score, context, policy)
            if earlier is not None:
                found = Emergency(earlier.category, TriageLayer.CONTEXT, earlier.evidence)
    written = triage_plan.written or triage_plan.questions
    result = tuple(replace(q, text=w) for q, w in zip(questions, written, strict=True))
    if found is not None:
        reason = f"red flag ({found.layer.value}): {found.category}"
        return Triage(
            Scope.EMERGENCY,
            reason,
            found.category,
            result,
            found.layer,
            _label(found.category, policy),
            found.evidence,
        )
    answered = next((q for q in result if q.scope is Scope.IN_SCOPE), None)
    if answered is not None:
        return Triage(Scope.IN_SCOPE, "in scope", None, result, answered.layer)
    first = result[0]
    return Triage(first.scope, first.reason, first.rule, result, first.layer)
