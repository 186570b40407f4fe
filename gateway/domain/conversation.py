"""The chat request as the gateway receives it: messages, tools, and the embedding vector type."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from gateway.tool_calls import ToolCall, ToolSpec

Vector = npt.NDArray[np.float32]


def unit_rows(vectors: Vector) -> Vector:
    """``vectors`` scaled to unit length along the last axis (a zero vector stays zero), as float32."""
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return np.asarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)


class Role(StrEnum):
    SYSTEM = "system"
    DEVELOPER = "developer"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True)
class Message:
    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    """An assistant message: the tool calls it made (the client sends them back with their results)."""
    tool_call_id: str | None = None
    """A ``tool`` message: the call whose result ``content`` is (conversation context, never a vetted
    source unless the policy names the tool as trusted: ``policies/tools.yaml``)."""


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[Message, ...]
    model: str
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool = False
    user: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    tools: tuple[ToolSpec, ...] = ()
    """The client's tools, forwarded to the model alongside the citation contract."""
    tool_choice: str | Mapping[str, object] | None = None
    """``none``, ``auto``, ``required`` or ``{"type": "function", "function": {"name": ...}}`` (checked)."""
    parallel_tool_calls: bool | None = None

    @property
    def offers_tools(self) -> bool:
        """The model may call one of the client's tools (tools offered, ``tool_choice`` not ``none``)."""
        return bool(self.tools) and self.tool_choice != "none"

    @property
    def question(self) -> str:
        """The latest user message: what the gateway answers."""
        for message in reversed(self.messages):
            if message.role is Role.USER:
                return message.content
        return ""
