"""Services with a component of the test's own, built through the constructor (issue #34 item 1).

A test never assigns to a field of running ``Services`` nor patches a module: it builds the Services
(or the gateway, ``start_gateway(prepare=...)``) with the component it wants, before anything runs.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gateway.services import Services


def with_components(services: Services, **components: Any) -> Services:
    """``services`` with ``components`` (fields of ``Services`` by name) in place of its own: a new
    Services, so what the constructor derives from its components is derived from these."""
    return dataclasses.replace(services, **components)
