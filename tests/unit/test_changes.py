"""``gateway.models.changes.Changes``: a waiter wakes at the change that makes its state true, on a
thread or on the event loop, without polling (#34 item 6)."""

from __future__ import annotations

import asyncio
import threading

from gateway.models.changes import Changes
from tests.support.waiting import DEADLINE_SECONDS


def test_a_thread_waits_for_the_state_the_changes_reach() -> None:
    changes, count, found = Changes(), [0], []
    waiter = threading.Thread(
        target=lambda: found.append(changes.wait_for(lambda: count[0] == 2, DEADLINE_SECONDS))
    )
    waiter.start()
    for _ in range(2):
        count[0] += 1
        changes.notify()
    waiter.join(DEADLINE_SECONDS)
    assert found == [True]


def test_a_state_not_reached_is_false_when_the_wait_ends() -> None:
    changes = Changes()
    changes.notify()  # a change with no waiter is nothing
    assert changes.wait_for(lambda: False, 0) is False


async def test_the_event_loop_runs_the_tasks_that_change_the_counts_while_one_awaits() -> None:
    changes, count = Changes(), [0]

    async def change() -> None:  # runs only if the wait leaves the loop free
        for _ in range(3):
            count[0] += 1
            changes.notify()

    task = asyncio.create_task(change())
    assert await changes.reached(lambda: count[0] == 3, DEADLINE_SECONDS)
    await task
