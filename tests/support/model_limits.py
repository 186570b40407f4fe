"""What the model-limit unit tests share (``test_limited_upstream``, ``test_shared_limits``)."""

from __future__ import annotations

from gateway.domain import ChatRequest, Message, Role

REQUEST = ChatRequest(messages=(Message(Role.USER, "q"),), model="m")
"""A chat request whose content does not matter: the tests count and bound the calls it makes."""
