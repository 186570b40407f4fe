"""The draft stage's step: the next part of the upstream's stream (``draft_check.draft_and_check``
wires it with the split, verify and cleanup components, one sentence at a time)."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from gateway.domain import ChatRequest
from gateway.drafting.contract import DraftPart


async def next_part(parts: AsyncGenerator[DraftPart, None], request: ChatRequest) -> DraftPart | None:
    """The next part of the draft (None at its end). ``request`` is the model call's request: it names
    the call on the stage's span (``gateway.telemetry``), one span per part."""
    return await anext(parts, None)
