"""Test doubles shipped with the gateway, written once (as pydantic-ai ships ``TestModel``).

- ``models``: ``ScriptedChatModel`` (a ChatModel answering from a script, recording its calls; a
  ``ToolTurn`` in the script calls tools, streamed as OpenAI streams tool-call fragments),
  ``ScriptedDrafts`` (an Upstream over one) and ``ScriptedConnections`` (a ``ModelPool``'s connect
  handing out scripted models per endpoint), for unit tests: no network;
- ``verifiers``: ``ScriptedVerifier`` (preset verdicts or error) and ``SubstringVerifier``;
- ``openai_server``: ``ScriptedUpstream``, a scripted OpenAI-compatible chat server on loopback (real
  HTTP, for integration tests through the real openai SDK; it streams at a tokens-per-second rate),
  with ``Reply`` (``Reply.tool_calls``: the model calls tools), ``passages_sent`` (the passages the
  gateway sent), ``contract_reply`` (the reply a model following the citation contract writes for some
  claims) and ``contract_answer``;
- ``servers``: ``serve_in_thread`` (any ASGI app on a free loopback port, held from the start),
  ``free_port`` and ``refused_port`` (a port that refuses connections).

Nothing here is used by the running gateway.
"""

from gateway.testing.models import ScriptedChatModel, ScriptedConnections, ScriptedDrafts
from gateway.testing.openai_server import (
    Reply,
    ScriptedUpstream,
    contract_answer,
    contract_reply,
    passage_number,
    passages_sent,
    running_upstream,
    tokens,
)
from gateway.testing.servers import free_port, refused_port, serve_in_thread
from gateway.testing.verifiers import ScriptedVerifier, SubstringVerifier

__all__ = [
    "Reply",
    "ScriptedChatModel",
    "ScriptedConnections",
    "ScriptedDrafts",
    "ScriptedUpstream",
    "ScriptedVerifier",
    "SubstringVerifier",
    "contract_answer",
    "contract_reply",
    "free_port",
    "passage_number",
    "passages_sent",
    "refused_port",
    "running_upstream",
    "serve_in_thread",
    "tokens",
]
