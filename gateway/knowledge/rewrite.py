"""An optional query rewrite by the upstream model: a patient's message restated as a search query.

Off by default (``GATEWAY_QUERY_REWRITE``; it needs ``GATEWAY_UPSTREAM_BASE_URL``). When on, the
retrieval stage of a chat request first asks the upstream model, in one short call, to restate the
message as one plain question in the words a health information page would use ("can't keep it up in
the bedroom" -> "What causes erectile dysfunction?"). The restatement is *added* to the message, as its
last line, never put in its place: the planner (query.py) searches it as one more question and fuses
its results with the message's own, so a poor rewrite can add candidates but not take the message's
away.

The call goes through the model boundary (``gateway.models``): the upstream endpoint's slots, queue and
deadline (``LimitedModel``), counted as ``gateway_model_calls_total{purpose="query"}``. It is bounded
twice more: its own deadline (``GATEWAY_QUERY_REWRITE_DEADLINE``, a second or two: retrieval waits for
it) and ``max_tokens``. It fails open: any model error, the deadline, an empty or overlong reply leaves
the message as it was, and the request goes on. Prompt and bounds: ``model_rewrite`` in
``policies/query.yaml``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

import anyio
import structlog
from pydantic import Field, with_config

from gateway.errors import UpstreamError
from gateway.models.chat_model import ChatModel
from gateway.validation import FILE_CONFIG, field_error

log = structlog.get_logger(__name__)

_SPACES = re.compile(r"\s+")
_QUOTES = "\"'`“”‘’"

DEFAULT_PROMPT = (
    "You turn a patient's message into one search query for a library of vetted health information "
    "pages. Reply with one short question (at most 20 words) naming the condition, medicine or test "
    "in the words such a page would use, and what the patient wants to know about it (what it is, "
    "symptoms, causes, treatment, tests, outlook, prevention, inheritance, how common). Correct "
    "misspellings; replace everyday words with the medical term. Reply with the question only, "
    "nothing else. If the message asks nothing about health, reply with an empty line."
)


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class RewriteWords:
    """``model_rewrite`` in ``policies/query.yaml``: what the model is asked, and how much it may say."""

    prompt: str = DEFAULT_PROMPT
    max_tokens: Annotated[int, Field(ge=8, le=512)] = 64
    """Longest reply asked for (the call's ``max_tokens``)."""
    max_reply_chars: Annotated[int, Field(ge=20, le=2000)] = 300
    """A longer reply is not a query: it is dropped (the message is searched as it is)."""
    max_message_chars: Annotated[int, Field(ge=200, le=100_000)] = 4000
    """The message sent to the model is cut to this many characters (the opening and the end kept)."""

    def __post_init__(self) -> None:
        if not self.prompt.strip():
            raise field_error(self, "prompt", "must be non-empty text")


@dataclass(frozen=True)
class Rewrite:
    """What the rewrite did for one message: the text to search and why it is what it is."""

    query: str
    """The message, with the model's restatement as its last line when there is one."""
    added: str | None
    """The restatement, or None."""
    outcome: str
    """``rewritten``, ``empty`` (nothing usable came back), ``timeout`` or ``error``."""


class QueryRewriter:
    """Restates a message for search through ``model`` (see the module docstring)."""

    def __init__(self, model: ChatModel, words: RewriteWords, deadline: float) -> None:
        if deadline <= 0:
            raise ValueError("the query rewrite deadline must be positive")
        self._model = model
        self._words = words
        self._deadline = deadline

    async def rewrite(self, message: str) -> Rewrite:
        """The text to search for ``message``: never raises for a model failure (fails open)."""
        words = self._words
        sent = _cut(message, words.max_message_chars)
        reply: str | None = None
        outcome = "timeout"
        with anyio.move_on_after(self._deadline):
            try:
                reply = await self._model.complete(
                    [{"role": "system", "content": words.prompt}, {"role": "user", "content": sent}],
                    temperature=0.0,
                    max_tokens=words.max_tokens,
                )
                outcome = "empty"
            except UpstreamError as err:
                log.info("query_rewrite_failed", kind=err.kind)
                return Rewrite(message, None, "error")
        added = _clean(reply, words.max_reply_chars) if reply is not None else None
        if added is None or added.lower() in message.lower():
            if outcome == "timeout":
                log.info("query_rewrite_failed", kind="timeout", deadline=self._deadline)
            return Rewrite(message, None, outcome)
        return Rewrite(f"{message.rstrip()}\n{added}", added, "rewritten")


def _clean(reply: str, limit: int) -> str | None:
    """The reply's first non-empty line, unquoted and single-spaced; None if empty or too long."""
    for line in reply.splitlines():
        text = _SPACES.sub(" ", line).strip().strip(_QUOTES).strip()
        if text:
            return text if len(text) <= limit else None
    return None


def _cut(message: str, limit: int) -> str:
    """``message`` within ``limit`` characters: its opening and its end (a question is often last)."""
    if len(message) <= limit:
        return message
    half = limit // 2
    return f"{message[:half]} … {message[-half:]}"
