"""A clock the test moves: for product code that takes a ``clock`` (seconds, like ``time.monotonic``)."""

from __future__ import annotations

import threading


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
