"""A chat request from a patient's turns, for tests and benches that triage or answer a conversation."""

from __future__ import annotations

from gateway.domain import ChatRequest, Message, Role

EARLIER_ANSWER = "(an earlier answer)"
"""The assistant's turn between two of the patient's: triage reads only the patient's turns."""


def conversation(*turns: str, model: str = "m") -> ChatRequest:
    """The patient's ``turns`` in order, an assistant answer between each two."""
    messages: list[Message] = []
    for turn in turns:
        if messages:
            messages.append(Message(Role.ASSISTANT, EARLIER_ANSWER))
        messages.append(Message(Role.USER, turn))
    return ChatRequest(messages=tuple(messages), model=model)
