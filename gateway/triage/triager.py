"""Triage as a component: built once at start-up with exactly what it uses, run once per request.

``LayeredTriager`` holds the deployment's operating context, the semantic layers (the exemplar banks
encoded once, the classifier heads, the speller: ``SemanticTriage``), the encoder it encodes a
request's texts with, and the rule layers' evidence reader (built once, here). Its ``run`` takes the
request and returns the ``Triage`` decision (``gateway.triage.decision``: the rule, vital-sign, signs,
exemplar, classifier and context layers).
The pipeline calls the one held by ``Services.triager``; a test swaps it by constructing another (or a
fake with the same ``run``), never by patching a module.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

import numpy as np

from gateway.domain import ChatRequest, Triage, Vector
from gateway.triage.contexts import OperatingContext
from gateway.triage.decision import decide, decide_by_evidence
from gateway.triage.emergency import RuleReadings, evidence_reader
from gateway.triage.planning import TriagePlan, plan
from gateway.triage.semantic import Encoder, SemanticTriage


class Triager(Protocol):
    """The triage stage as the pipeline uses it."""

    async def run(self, request: ChatRequest) -> Triage:
        """Decide the request's scope (an emergency, out of scope, non-clinical, or in scope)."""
        ...


class LayeredTriager:
    """The gateway's triage: the context's rules and the policy's semantic layers over one encoding."""

    def __init__(self, context: OperatingContext, model: SemanticTriage, encoder: Encoder) -> None:
        """``encoder`` encodes each request's texts (the process's embedder, the one ``model``'s
        exemplar banks were encoded with)."""
        self.context = context
        self.model = model
        self.encoder = encoder
        self.reader = evidence_reader(model.policy)
        """The rule layers' evidence reader of the triage policy, built here once."""
        self._correct = spelling_corrector(model)

    async def run(self, request: ChatRequest) -> Triage:
        """The rule layers first (``decide_by_evidence``); only when they have not decided, the plan's
        texts (the questions, the whole message, the recent turns) encoded off the event loop
        (``_encode``), then the layered decision. An emergency the rules decide costs no encode: the
        semantic layers can only raise urgency. (Starting the encode alongside the rule reading was
        measured slower at p95 and costlier in CPU on one serving worker: docs/benchmarks.md.)"""
        triage_plan = plan(request, self.context, self.model.policy, self.reader, self._correct)
        readings, early = self._early(triage_plan)
        if early is not None:
            return early
        vectors = await asyncio.to_thread(self._encode, self.model.encoded(triage_plan.texts))
        return self._decide(triage_plan, readings, vectors)

    def run_sync(self, request: ChatRequest) -> Triage:
        """``run`` encoding in the calling thread: the CLI and tests."""
        triage_plan = plan(request, self.context, self.model.policy, self.reader, self._correct)
        readings, early = self._early(triage_plan)
        if early is not None:
            return early
        return self._decide(triage_plan, readings, self._encode(self.model.encoded(triage_plan.texts)))

    def _encode(self, texts: list[str]) -> Vector:
        """The plan's texts, each in its own model call. One call pads every text to the longest (the
        whole message beside its questions, a long earlier turn beside a short question), and a call of
        more than ``ONNX_MAX_TEXTS`` texts goes to torch; alone, each is one padding-free ONNX Runtime
        call (unless other requests' texts join it: ``Embedder`` coalesces), the vectors
        ``bench_triage.py --onnx-cache`` scores (docs/benchmarks.md)."""
        if len(texts) <= 1:
            return self.encoder.encode(texts)
        return np.concatenate([self.encoder.encode([text]) for text in texts])

    def _early(self, triage_plan: TriagePlan) -> tuple[RuleReadings, Triage | None]:
        """The plan's rule evidence (read once, reused by ``_decide``) and the early decision."""
        readings = RuleReadings.of(triage_plan, self.context, self.model.policy, self.reader)
        early = decide_by_evidence(triage_plan, self.context, self.model.policy, readings)
        return readings, early

    def _decide(self, triage_plan: TriagePlan, readings: RuleReadings, vectors: Vector) -> Triage:
        scores = self.model.score(vectors)
        return decide(triage_plan, scores, self.context, self.model.policy, readings)


def triage_texts(request: ChatRequest, context: OperatingContext, model: SemanticTriage) -> Triage:
    """Synchronous triage with the model's own encoder (the CLI, benchmarks and tests)."""
    return LayeredTriager(context, model, model).run_sync(request)


def spelling_corrector(model: SemanticTriage) -> Callable[[str], str] | None:
    return model.speller.correct if model.speller is not None else None
