"""Stage 1: triage a message against the deployment's operating context, before any retrieval.

Emergencies win over everything: one red flag anywhere in the message and the patient gets the
safety message, with no model call. Otherwise each question of the message is classified on its own
(non-clinical, out of scope, in scope), so a message with several questions can have some answered
and the rest explicitly declined.
"""

from __future__ import annotations

import re
from functools import lru_cache

from gateway.domain import QuestionTriage, Scope, Triage
from gateway.policy import OperatingContext, TriageRule

_QUESTION_END = re.compile(r"(?<=\?)\s+")


def split_questions(message: str) -> list[str]:
    """Split after each question mark; context sentences stay with the question that follows them."""
    parts = [p.strip() for p in _QUESTION_END.split(message.strip()) if p.strip()]
    return parts or [message.strip()]


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _matches(patterns: tuple[str, ...], text: str) -> bool:
    return any(_compiled(p).search(text) for p in patterns)


def _first_rule(rules: tuple[TriageRule, ...], text: str) -> TriageRule | None:
    return next((rule for rule in rules if _matches(rule.patterns, text)), None)


def classify_question(text: str, context: OperatingContext) -> QuestionTriage:
    rule = _first_rule(context.emergency, text)
    if rule:
        return QuestionTriage(text, Scope.EMERGENCY, f"red flag: {rule.id}", rule.id)
    rule = _first_rule(context.non_clinical, text)
    if rule:
        return QuestionTriage(text, Scope.NON_CLINICAL, f"not a clinical request: {rule.id}", rule.id)
    rule = _first_rule(context.out_of_scope, text)
    if rule:
        return QuestionTriage(text, Scope.OUT_OF_SCOPE, f"needs a clinician: {rule.id}", rule.id)
    if context.clinical_terms and not _matches(context.clinical_terms, text):
        return QuestionTriage(text, Scope.NON_CLINICAL, "no clinical topic recognised", None)
    if context.in_scope and not _matches(context.in_scope, text):
        return QuestionTriage(text, Scope.OUT_OF_SCOPE, f"outside the {context.name} service", None)
    return QuestionTriage(text, Scope.IN_SCOPE, "in scope", None)


def triage(message: str, context: OperatingContext) -> Triage:
    questions = tuple(classify_question(q, context) for q in split_questions(message))
    emergency = next((q for q in questions if q.scope is Scope.EMERGENCY), None)
    if emergency is None:
        whole = classify_question(message, context)
        if whole.scope is Scope.EMERGENCY:
            emergency = whole
    if emergency is not None:
        return Triage(Scope.EMERGENCY, emergency.reason, emergency.rule, questions)
    answerable = next((q for q in questions if q.scope is Scope.IN_SCOPE), None)
    if answerable is not None:
        return Triage(Scope.IN_SCOPE, "in scope", None, questions)
    first = questions[0]
    return Triage(first.scope, first.reason, first.rule, questions)
