"""Tool calls, as the chat API and the model exchange them (OpenAI's function tools; issue #36).

The client offers tools (``ToolSpec``); the model calls them (``ToolCall``, streamed as
``ToolCallDelta`` fragments); the gateway forwards the offer and hands the calls back unchanged
(docs/integrator.md, "Tools"). Nothing here knows about HTTP or the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A function (tool) name, as OpenAI accepts it: letters, digits, ``_`` and ``-``, 1 to 64 characters."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool the client offers the model (OpenAI's ``{"type": "function", "function": {...}}``),
    forwarded to the upstream as given (``drafting.contract``)."""

    name: str
    description: str | None = None
    parameters: Mapping[str, object] | None = None
    """A JSON Schema object, as the client sent it (not interpreted by the gateway)."""
    strict: bool | None = None


@dataclass(frozen=True)
class ToolCall:
    """A call of a tool, whole: in an assistant message the client sends back, or made by the model.
    ``arguments`` is the JSON text the model wrote, unchanged (never verified: not a medical claim)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ToolCallDelta:
    """One streamed fragment of a tool call, as OpenAI streams ``delta.tool_calls[i]``: ``index`` names
    the call; the first fragment of a call carries its ``id`` and ``name``, each carries a piece of the
    ``arguments`` text. Handed to the client unchanged and in order."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
