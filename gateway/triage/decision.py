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

The texts of one request (its questions, the whole message, the recent turns) are encoded off the
event loop, each in its own call, by the pipeline's component (``gateway.triage.triager``), and only
when the rule layers have not decided.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gateway.domain import QuestionTriage, Scope, Triage, TriageLayer
from gateway.triage.contexts import OperatingContext
from gateway.triage.emergency import RuleReadings, emergency_of, exempt
from gateway.triage.planning import TriagePlan
from gateway.triage.policy import TriagePolicy
from gateway.triage.red_flags import Dropped, Emergency
from gateway.triage.rule_layer import first_rule, matches
from gateway.triage.semantic import SemanticScore


def decide_by_evidence(
    triage_plan: TriagePlan,
    context: OperatingContext,
    policy: TriagePolicy,
    readings: RuleReadings | None = None,
) -> Triage | None:
    """The decision when the rule layers alone make the message an emergency (a red-flag rule, a vital
    sign out of range, or a red flag's signs with a severity word, in a question that is not a general
    information question): the semantic layers cannot lower an emergency, so the encoder is skipped.
    None when the semantic scores are needed. The other questions are left undecided (they are
    deferred by the emergency; ``deferred_questions``). ``readings``: the request's rule evidence
    (``RuleReadings.of`` the plan), filled here and passed on to ``decide`` so that no text is read
    twice."""
    readings = readings or RuleReadings.of(triage_plan, context, policy)
    found: Emergency | None = None
    questions: list[QuestionTriage] = []
    written = triage_plan.written or triage_plan.questions
    for text, shown in zip(triage_plan.questions, written, strict=True):
        seen = readings.evidence(text)
        emergency = seen.found
        if seen.ambiguous or (
            emergency is not None and seen.info and exempt(emergency.category, context, policy)
        ):
            return None  # the scores name the category, or give an information question its note
        if emergency is not None:
            questions.append(_emergency_question(shown, emergency))
            found = found or emergency
        else:
            questions.append(
                QuestionTriage(
                    shown, Scope.IN_SCOPE, "not judged: deferred by the emergency", None, TriageLayer.DEFAULT
                )
            )
    if found is None:
        return None
    return _emergency(found, tuple(questions), policy)


def _emergency_question(text: str, emergency: Emergency) -> QuestionTriage:
    """A question the red flag ``emergency`` was found in."""
    reason = f"red flag ({emergency.layer.value}): {emergency.category}"
    return QuestionTriage(text, Scope.EMERGENCY, reason, emergency.category, emergency.layer)


def _emergency(found: Emergency, questions: tuple[QuestionTriage, ...], policy: TriagePolicy) -> Triage:
    """The message's decision when the red flag ``found`` was found in it (its first, by the layers'
    order), with the emergency message's name for it."""
    reason = f"red flag ({found.layer.value}): {found.category}"
    return Triage(
        Scope.EMERGENCY,
        reason,
        found.category,
        questions,
        found.layer,
        label(found.category, policy),
        found.evidence,
    )


def label(category: str, policy: TriagePolicy) -> str | None:
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
    note: str | Dropped | None,
) -> QuestionTriage:
    rule = first_rule(context.non_clinical, text)
    if rule:
        return QuestionTriage(
            text, Scope.NON_CLINICAL, f"not a clinical request: {rule.id}", rule.id, TriageLayer.RULE
        )
    health = _health(score, policy)
    layer = TriageLayer.CLASSIFIER if health else TriageLayer.DEFAULT
    if health is False and context.clinical_terms and matches(context.clinical_terms, text):
        health, layer = None, TriageLayer.RULE
    if health is False:
        inherits = conversation_clinical and score.health_probability >= policy.settings.inherit_probability
        if not inherits:
            return QuestionTriage(
                text, Scope.NON_CLINICAL, "no health question recognised", None, TriageLayer.CLASSIFIER
            )
        layer = TriageLayer.CONTEXT
    rule = first_rule(context.out_of_scope, text)
    if rule:
        return QuestionTriage(
            text, Scope.OUT_OF_SCOPE, f"needs a clinician: {rule.id}", rule.id, TriageLayer.RULE
        )
    if context.in_scope and not matches(context.in_scope, text):
        return QuestionTriage(
            text, Scope.OUT_OF_SCOPE, f"outside the {context.name} service", None, TriageLayer.RULE
        )
    if isinstance(note, Dropped):  # visible to clinicians: the raising layer, the red flag, the signs
        reason = f"red flag raised without its signs ({note.layer.value}): {note.category}; its safety note"
        return QuestionTriage(text, Scope.IN_SCOPE, reason, note.category, note.layer, True, note.signs)
    if note is not None:
        return QuestionTriage(text, Scope.IN_SCOPE, f"information about a red flag: {note}", note, layer)
    return QuestionTriage(text, Scope.IN_SCOPE, "in scope", None, layer)


def decide(
    triage_plan: TriagePlan,
    scores: Sequence[SemanticScore],
    context: OperatingContext,
    policy: TriagePolicy,
    readings: RuleReadings | None = None,
) -> Triage:
    """Combine the rule layer with the semantic scores of ``triage_plan.texts`` (same order);
    ``readings``: the rule evidence ``decide_by_evidence`` already found for this request."""
    readings = readings or RuleReadings.of(triage_plan, context, policy)
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
        emergency, note = emergency_of(text, score, readings)
        if emergency is not None:
            questions.append(_emergency_question(text, emergency))
            found = found or emergency
            continue
        questions.append(_scope(text, score, context, policy, conversation_clinical, note))
    if found is None and whole_score is not None:
        found, _ = emergency_of(triage_plan.message, whole_score, readings)
    if found is None:
        for turn, score in zip(triage_plan.history, history_scores, strict=True):
            earlier, _ = emergency_of(turn, score, readings, of_message=False)
            if earlier is not None:
                found = Emergency(earlier.category, TriageLayer.CONTEXT, earlier.evidence)
    written = triage_plan.written or triage_plan.questions
    result = tuple(replace(q, text=w) for q, w in zip(questions, written, strict=True))
    if found is not None:
        return _emergency(found, result, policy)
    answered = next((q for q in result if q.scope is Scope.IN_SCOPE), None)
    if answered is not None:
        dropped = next((q for q in result if q.unbound), None)
        if dropped is not None:
            return Triage(Scope.IN_SCOPE, dropped.reason, None, result, dropped.layer)
        return Triage(Scope.IN_SCOPE, "in scope", None, result, answered.layer)
    first = result[0]
    return Triage(first.scope, first.reason, first.rule, result, first.layer)
