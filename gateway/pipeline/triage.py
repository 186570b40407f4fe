"""Stage 1: triage a message against the deployment's operating context, before any retrieval.

Emergencies win over everything: one red flag anywhere in the message and the patient gets the
safety message, with no model call. Otherwise each question of the message is classified on its own
(non-clinical, out of scope, in scope), so a message with several questions can have some answered
and the rest explicitly declined.

Red-flag rules describe someone *having* the symptom. A rule marked ``information_exempt`` lets a
general information question about it ("what are the signs of a stroke?") through as in scope, tagged
with the rule, so the answer carries the emergency safety note; a question that also reports a
personal situation ("how do I know if I'm having a stroke?") stays an emergency.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from gateway.domain import ChatRequest, Message, QuestionTriage, Role, Scope, Triage
from gateway.policy import OperatingContext, TriageRule
from gateway.text import sentence_spans


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _matches(patterns: tuple[str, ...], text: str) -> bool:
    return any(_compiled(p).search(text) for p in patterns)


def _first_rule(rules: tuple[TriageRule, ...], text: str) -> TriageRule | None:
    return next((rule for rule in rules if _matches(rule.patterns, text)), None)


def _is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?")


def _information_only(rule: TriageRule, text: str, context: OperatingContext) -> bool:
    """A general question about the red flag that reports nothing personal."""
    return (
        rule.information_exempt
        and _matches(context.information_questions, text)
        and not _matches(context.personal_report, text)
    )


def red_flag(text: str, context: OperatingContext) -> TriageRule | None:
    """The emergency rule this text reports, if any (information questions excepted)."""
    rule = _first_rule(context.emergency, text)
    if rule is None or _information_only(rule, text, context):
        return None
    return rule


def split_questions(message: str, context: OperatingContext) -> list[str]:
    """Group sentences into questions: each group ends at a question mark and carries the statements
    before it (their context). A statement that raises a red flag on its own stands alone, so it
    cannot drag a routine question into the emergency and that question can be declined explicitly.
    Statements after the last question join it."""
    groups: list[str] = []
    pending: list[str] = []
    for span in sentence_spans(message.strip()):
        sentence = message.strip()[span.start : span.end]
        if not _is_question(sentence) and red_flag(sentence, context):
            groups.extend([" ".join(pending), sentence] if pending else [sentence])
            pending = []
            continue
        pending.append(sentence)
        if _is_question(sentence):
            groups.append(" ".join(pending))
            pending = []
    if pending:
        if groups and _is_question(groups[-1]):
            groups[-1] = f"{groups[-1]} {' '.join(pending)}"
        else:
            groups.append(" ".join(pending))
    return groups or [message.strip()]


def classify_question(text: str, context: OperatingContext) -> QuestionTriage:
    rule = _first_rule(context.emergency, text)
    if rule and not _information_only(rule, text, context):
        return QuestionTriage(text, Scope.EMERGENCY, f"red flag: {rule.id}", rule.id)
    decided = _scope(text, context)
    if rule and decided.scope is Scope.IN_SCOPE:
        return QuestionTriage(text, Scope.IN_SCOPE, f"information about a red flag: {rule.id}", rule.id)
    return decided


def _scope(text: str, context: OperatingContext) -> QuestionTriage:
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
    questions = tuple(classify_question(q, context) for q in split_questions(message, context))
    emergency = next((q for q in questions if q.scope is Scope.EMERGENCY), None)
    if emergency is None:
        whole = classify_question(message, context)
        if whole.scope is Scope.EMERGENCY:
            emergency = whole
    if emergency is not None:
        return Triage(Scope.EMERGENCY, emergency.reason, emergency.rule, questions)
    if any(q.scope is Scope.IN_SCOPE for q in questions):
        return Triage(Scope.IN_SCOPE, "in scope", None, questions)
    first = questions[0]
    return Triage(first.scope, first.reason, first.rule, questions)


def red_flag_notes(result: Triage) -> tuple[str, ...]:
    """Ids of the red-flag rules whose information questions are answered (each gets a safety note)."""
    rules = [q.rule for q in result.questions if q.scope is Scope.IN_SCOPE and q.rule]
    return tuple(dict.fromkeys(rules))


def deferred_questions(result: Triage) -> tuple[str, ...]:
    """In an emergency: the parts of the message that were not answered because of it."""
    return tuple(q.text for q in result.questions if q.scope is not Scope.EMERGENCY)


def answerable_request(request: ChatRequest, result: Triage) -> ChatRequest:
    """The request the model sees: its last user message keeps only the questions to be answered."""
    if not result.declined or not result.answerable:
        return request
    messages = list(request.messages)
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role is Role.USER:
            messages[index] = Message(Role.USER, " ".join(result.answerable))
            break
    return replace(request, messages=tuple(messages))
