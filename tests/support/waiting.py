"""Waiting for a condition, with a deadline, instead of sleeping for a guessed time.

A test that needs something to have happened (a server up, a request arrived, a caller queued) waits
for exactly that: ``wait_until`` polls ``condition`` until it returns something true and fails with
``what`` if the deadline passes first (a failure, never a hang). ``until`` is the same for code on an
event loop: it yields to the loop between checks, so that the tasks it waits for can run. The deadline
is generous because it only bounds a failure; a passing test waits no longer than the condition takes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

import httpx

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
