"""Waiting for a condition, with a deadline, instead of sleeping for a guessed time.

A test that needs something to have happened (a server up, a request arrived, a caller queued) waits
for exactly that: ``wait_until`` polls ``condition`` until it returns something true and fails with
``what`` if the deadline passes first (a failure, never a hang). ``until`` is the same for code on an
event loop: it yields to the loop between checks, so that the tasks it waits for can run. The deadline
is generous because it only bounds a failure; a passing test waits no longer than the condition takes.

Where the thing waited for can signal, the test waits on that signal instead, without polling:
``wait_for`` on a ``threading.Event`` the test's double sets, ``EventLog.reached`` on the event loop,
``ScriptedChatModel.wait_for_calls`` and ``ScriptedUpstream.wait_for_requests`` for a model's calls,
``AuditWrites.wait_for`` for an outcome the audit store committed, ``changed_until`` and ``reached`` for
a state of the counters that notify a ``gateway.models.changes.Changes`` (``CallLimits``: calls in flight
and waiting for a slot; ``Embedder``: callers queued for the model). Where time is what changes the
state, the test drives the clock if the product takes one (``tests.support.clock.ManualClock``).
``wait_until`` and ``until`` are left for what gives no signal: another process's readiness, a gauge read
over HTTP, a state that another process's time changes. ``bench/audit_tests.py``
lists them.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import httpx

from gateway.models.changes import Changes

T = TypeVar("T")

DEADLINE_SECONDS = 60.0
"""How long a wait may take before the test fails (only reached when something is wrong)."""
POLL_SECONDS = 0.02
"""Between two checks of a condition."""


def wait_until(
    condition: Callable[[], T],
    what: str | Callable[[], str],
    timeout: float = DEADLINE_SECONDS,
    interval: float = POLL_SECONDS,
) -> T:
    """Call ``condition`` until it returns a true value and return that value; fail naming ``what`` (a
    text, or a function giving one at the time of failure, e.g. with a server's log) after ``timeout``
    seconds. ``condition`` may raise to fail at once (a server process that exited)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:g} s: {what() if callable(what) else what}")
        time.sleep(interval)


def answers_ok(url: str, timeout: float = 2.0) -> bool:
    """Whether a GET of ``url`` answers 200 now (a refused or timed-out connection is a no)."""
    try:
        return httpx.get(url, timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


async def until(
    condition: Callable[[], T], what: str, seconds: float = DEADLINE_SECONDS, interval: float = 0.005
) -> T:
    """``wait_until`` on an event loop (``seconds``: the deadline): lets the loop run other tasks between
    checks."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:g} s: {what}")
        await asyncio.sleep(interval)


def changed_until(
    changes: Changes, state: Callable[[], bool], what: str, timeout: float = DEADLINE_SECONDS
) -> None:
    """Block until ``state()`` holds, checked at each change ``changes`` is told of (no polling); fail
    naming ``what`` after ``timeout`` seconds."""
    if not changes.wait_for(state, timeout):
        raise AssertionError(f"waited {timeout:g} s: {what}")


async def reached(
    changes: Changes, state: Callable[[], bool], what: str, seconds: float = DEADLINE_SECONDS
) -> None:
    """``changed_until`` on an event loop: the loop's tasks run (and change the counters) meanwhile."""
    if not await changes.reached(state, seconds):
        raise AssertionError(f"waited {seconds:g} s: {what}")


def wait_for(event: threading.Event, what: str, timeout: float = DEADLINE_SECONDS) -> None:
    """Block until ``event`` is set (no polling); fail naming ``what`` after ``timeout`` seconds."""
    if not event.wait(timeout):
        raise AssertionError(f"waited {timeout:g} s: {what}")


class EventLog(list[str]):
    """What happened, in order (names appended from the event loop's thread); ``reached`` waits on an
    ``asyncio.Event`` per name, set when the name is appended, instead of polling the list."""

    def __init__(self) -> None:
        super().__init__()
        self._logged: dict[str, asyncio.Event] = {}

    def _event(self, name: str) -> asyncio.Event:
        return self._logged.setdefault(name, asyncio.Event())

    def append(self, name: str) -> None:
        super().append(name)
        self._event(name).set()

    async def reached(self, name: str, what: str, seconds: float = DEADLINE_SECONDS) -> None:
        """Return once ``name`` was appended; fail naming ``what`` after ``seconds``."""
        try:
            await asyncio.wait_for(self._event(name).wait(), seconds)
        except TimeoutError:
            raise AssertionError(f"waited {seconds:g} s: {what}") from None


class AuditWrites:
    """The outcomes an audit store committed, in order: ``watch`` wraps its ``write_sync`` (every write,
    on a worker thread or the loop's, goes through it), and ``wait_for`` blocks on a condition set by
    each commit instead of polling the store."""

    def __init__(self) -> None:
        self.outcomes: list[str] = []
        self._changed = threading.Condition()

    def watch(self, store: object) -> None:
        original = store.write_sync  # type: ignore[attr-defined]

        def write_sync(row: dict[str, object], record: object) -> None:
            original(row, record)
            with self._changed:
                self.outcomes.append(str(row["outcome"]))
                self._changed.notify_all()

        store.write_sync = write_sync  # type: ignore[attr-defined]

    def wait_for(
        self, condition: Callable[[list[str]], bool], what: str, timeout: float = DEADLINE_SECONDS
    ) -> None:
        """Block until ``condition(outcomes)`` holds; fail naming ``what`` after ``timeout`` seconds."""
        with self._changed:
            if not self._changed.wait_for(lambda: condition(self.outcomes), timeout):
                raise AssertionError(f"waited {timeout:g} s: {what} (committed: {self.outcomes})")
