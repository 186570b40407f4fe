"""Pay a serving process's one-off first-request costs before it reports ready.

The first search reads the planner's vocabulary and the exact-search vectors from the index, and the
first encode and triage warm ONNX Runtime and the triage head: on the bundled corpus the first
request's retrieve stage took 36 ms and its triage 10 ms, against 2.5 and 4.3 ms after a warm-up.
A serving process does both once at start-up, on a fixed question that goes to no model and into no
audit record, so the first patient does not wait for them.
"""

from __future__ import annotations

import time

import structlog

from gateway.domain import ChatRequest, Message, Role
from gateway.services import AnswerParts

log = structlog.get_logger("gateway.startup")

WARM_UP_QUESTION = "How much paracetamol can an adult take in one day?"


async def warm_up(parts: AnswerParts, model: str) -> None:
    """Triage and retrieve ``WARM_UP_QUESTION`` once, as a request for ``model`` would. A failure is
    logged, not raised: the request path and ``/readyz`` report a broken dependency as they always do."""
    started = time.perf_counter()
    question = Message(Role.USER, WARM_UP_QUESTION)
    request = ChatRequest(messages=(question,), model=model)
    try:
        await parts.triager.run(request)
        await parts.retriever.search(WARM_UP_QUESTION)
    except Exception as err:
        log.warning("warm_up_failed", error_type=type(err).__name__, error=str(err)[:200])
        return
    log.info("warmed_up", ms=round((time.perf_counter() - started) * 1000, 1))
