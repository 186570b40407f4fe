"""The model's own urgency read as a second net behind triage (issue #31, item 5), at no extra call.

The citation contract's first line is the answering model's read of how urgently the patient needs
care (``drafting.contract.UrgencyRead``). It can only raise urgency, never lower it:

- ``emergency`` on a message triage let through: the patient gets the emergency safety message before
  any sentence of the answer is released; the decision is counted and audited under its own triage
  layer, ``model``, with the model's reason (clinicians see it; the patient's message does not quote
  model text);
- ``urgent``: the answer goes on, with the ``model_urgent`` note after it;
- ``routine``, or a missing or malformed read: nothing changes (the read, or what was wrong with it, is
  recorded in the trust object and the audit record).

Kept apart from ``triage.py`` (the rules, exemplars and classifier) so that each can change on its own.
"""

from __future__ import annotations

from dataclasses import replace

from gateway.domain import Scope, Triage, TriageLayer
from gateway.drafting.contract import Urgency, UrgencyRead

MODEL_EMERGENCY_RULE = "model_urgency"
"""The rule id recorded for an emergency raised by the model's read."""


def raises_emergency(read: UrgencyRead | None, triage: Triage) -> bool:
    """The model reads an emergency where triage did not decide one."""
    return read is not None and read.level is Urgency.EMERGENCY and triage.scope is not Scope.EMERGENCY


def raises_urgent(read: UrgencyRead | None, triage: Triage) -> bool:
    """The model reads an urgent need on a message triage answered as in scope."""
    return read is not None and read.level is Urgency.URGENT and triage.scope is Scope.IN_SCOPE


def model_emergency(read: UrgencyRead, triage: Triage) -> Triage:
    """Triage raised to an emergency by the model's read: layer ``model``, the model's reason kept."""
    why = read.reason or "no reason given"
    return replace(
        triage,
        scope=Scope.EMERGENCY,
        reason=f"the answering model read an emergency: {why}",
        rule=MODEL_EMERGENCY_RULE,
        layer=TriageLayer.MODEL,
        recognised=None,
        questions=(),  # the message is not split into answered and deferred parts: none is answered
    )


def read_json(read: UrgencyRead | None) -> dict[str, str | None] | None:
    """The read as the trust object and the audit record show it (None: the upstream gives none)."""
    if read is None:
        return None
    return {
        "level": read.level.value if read.level else None,
        "reason": read.reason or None,
        "problem": read.problem,
    }
