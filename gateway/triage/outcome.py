"""What the rest of the pipeline reads from a triage decision: the safety notes to attach, the
questions deferred by an emergency, and the request the model is asked to answer."""

from __future__ import annotations

from dataclasses import replace

from gateway.domain import ChatRequest, Message, Role, Scope, Triage


def red_flag_notes(result: Triage) -> tuple[str, ...]:
    """Ids of the red-flag rules whose information questions are answered (each gets a safety note)."""
    rules = [q.rule for q in result.questions if q.scope is Scope.IN_SCOPE and q.rule]
    return tuple(dict.fromkeys(rules))


def named_signs(result: Triage, rule: str) -> tuple[str, ...]:
    """The signs the safety note of ``rule`` names: what the message tells of now when a red flag
    raised without its own signs was dropped to that note (none for an information question)."""
    told = (s for q in result.questions if q.unbound and q.rule == rule for s in q.signs)
    return tuple(dict.fromkeys(told))


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
