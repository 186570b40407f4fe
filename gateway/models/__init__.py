"""The model boundary: every chat-model call of the gateway goes through one interface, ``ChatModel``.

The draft (``upstream.ModelUpstream``), the upstream rewriter (``cleanup.UpstreamRewriter``), the LLM
judge (``verification.judge``) and the evaluation's raw model and question generation
(``evaluation``) all call ``ChatModel.complete``. What every call needs is a wrapper around a model,
not code in its callers (pydantic-ai's ``WrapperModel``):

- ``openai_compatible``: ``OpenAIChatModel``, the one client of an endpoint (the openai SDK's generic
  ``post``, the body read with msgspec); SDK errors translated;
- ``limits``: ``LimitedModel``, slots, queue and deadline (per call and per request);
- ``metered``: ``MeteredModel``, calls and failures counted by purpose;
- ``closing``: ``ClosingModel``, closed once however many hold it;
- ``pool``: ``ModelPool``, which builds one wrapped model per endpoint and closes them all.

Test doubles (a scripted model) are in ``gateway.testing``.
"""

from gateway.models.chat_model import ChatModel, Messages, WrapperModel
from gateway.models.closing import ClosingModel
from gateway.models.limits import CallLimits, LimitedModel, request_deadline
from gateway.models.metered import MeteredModel
from gateway.models.openai_compatible import Endpoint, OpenAIChatModel
from gateway.models.pool import ModelPool

__all__ = [
    "CallLimits",
    "ChatModel",
    "ClosingModel",
    "Endpoint",
    "LimitedModel",
    "Messages",
    "MeteredModel",
    "ModelPool",
    "OpenAIChatModel",
    "WrapperModel",
    "request_deadline",
]
