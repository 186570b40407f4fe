"""Services with a component of the test's own, built through the constructor (issue #34 item 1).

A test never assigns to a field of running ``Services`` nor patches a module: it builds the Services
(or the gateway, ``start_gateway(prepare=...)``) with the component it wants, before anything runs.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gateway.services import Services
from gateway.trust.badge import TierBadger
from gateway.verification.verifier import operating_point


def with_components(services: Services, **components: Any) -> Services:
    """``services`` with ``components`` (fields of ``Services`` by name) in place of its own: a new
    Services, so what the constructor derives from its components (``Services.answer_parts``) is derived
    from these. Another drafter gets the tool steps told whether it reaches a tool-calling model, as
    ``bootstrap.build_tools`` does at start-up; another audit store is the one the record side (``trail``)
    writes to, as ``bootstrap.build_trail`` hands it; another verify stage (``checker``) gets a badge
    stage naming its verifier's operating point, as ``bootstrap.build_services`` builds it (unless the
    test gives a ``badger`` of its own)."""
    drafter = components.get("drafter")
    if drafter is not None and "tools" not in components:
        components["tools"] = dataclasses.replace(services.tools, calls_tools=drafter.calls_tools)
    audit = components.get("audit")
    if audit is not None and "trail" not in components:
        components["trail"] = dataclasses.replace(services.trail, store=audit)
    checker = components.get("checker")
    if checker is not None and "badger" not in components:
        point = operating_point(checker.verifier)
        components["badger"] = TierBadger(services.policy.tiers, services.today, point)
    return dataclasses.replace(services, **components)
