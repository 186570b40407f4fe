"""A condition that counters notify on every change, so that a caller waits for the state it needs
instead of polling the counters: ``CallLimits`` (calls in flight and waiting for a slot, changed on
the event loop) and ``Embedder`` (callers queued for the model, changed on worker threads).

The counters are read by the waiter's own ``state`` function, under no lock of theirs; each change
notifies after it is made, so a waiter that found the state false is woken by the next change.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import anyio.to_thread


class Changes:
    """Notified on every change of some counters; ``wait_for`` blocks (a thread), ``reached`` awaits
    (an event loop: the wait runs on a worker thread, so the loop's tasks go on changing them)."""

    def __init__(self) -> None:
        self._condition = threading.Condition(threading.Lock())

    def notify(self) -> None:
        """Wake every waiter to check its state again (after a counter changed)."""
        with self._condition:
            self._condition.notify_all()

    def wait_for(self, state: Callable[[], bool], timeout: float) -> bool:
        """Block until ``state()`` holds (checked now and after each change); False after ``timeout`` s."""
        with self._condition:
            return self._condition.wait_for(state, timeout)

    async def reached(self, state: Callable[[], bool], seconds: float) -> bool:
        """``wait_for`` (for at most ``seconds``) without blocking the event loop."""
        return await anyio.to_thread.run_sync(self.wait_for, state, seconds)
