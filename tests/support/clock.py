"""A clock the test moves: for product code that takes a ``clock`` (seconds, like ``time.monotonic``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class ManualClock:
    """Stands still until ``advance``; safe to read from the gateway's threads."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds


def services_on_clock(settings: Any, embedder: Any, clock: Callable[[], float]) -> Any:
    """``build_services`` over the store it would open itself, its index refresh timed on ``clock``."""
    from gateway.bootstrap import build_planner, build_services, open_store, search_options
    from gateway.policies import load_configured_policy

    policy = load_configured_policy(settings)
    options, planner = search_options(settings, policy), build_planner(settings)
    store = open_store(settings, embedder, options, planner, policy=policy, clock=clock)
    return build_services(settings, embedder=embedder, store=store)
