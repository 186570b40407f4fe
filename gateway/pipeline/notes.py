"""The notes that follow an in-scope reply (moved out of ``run``, which wires them)."""

from __future__ import annotations

from gateway.domain import Scope, Triage
from gateway.services import Services
from gateway.triage.outcome import red_flag_notes


def reply_notes(triage_result: Triage, services: Services) -> str:
    """After an in-scope reply: a note per declined question, and the safety note per red flag asked about."""
    if triage_result.scope is not Scope.IN_SCOPE:
        return ""
    notes = [
        services.messages.render("declined_question", scope=q.scope.value, question=q.text)
        for q in triage_result.declined
    ]
    notes += [
        services.messages.render("red_flag_information", rule=rule) for rule in red_flag_notes(triage_result)
    ]
    return " ".join(notes)
