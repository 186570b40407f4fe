"""The extractive rewriter: a failing claim becomes the source sentence that best supports it.

No model is needed. Among the sentences of the passages the claim cites (all passages when it cites
none), the one closest to the claim in MiniLM space is taken verbatim, if it is close enough
(``cleanup.rewrite_min_similarity``) and is not a planted instruction; it is then verified again
with the gateway's verifier, quoting itself. "Adults can take 8 g a day" becomes the source's own
dose sentence; a claim with no close sentence is removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import anyio.to_thread
import numpy as np

from gateway.cleanup.common import Sources, cited_sources, is_planted, removed, verified_rewrite
from gateway.domain import ChatRequest, ClaimResult, Passage, Vector
from gateway.policy import CleanupPolicy
from gateway.text import sentence_spans
from gateway.verification.base import Verifier


class TextEncoder(Protocol):
    """What the rewriter needs of ``gateway.knowledge.embedding.Embedder``: unit vectors per text."""

    def encode(self, texts: Sequence[str]) -> Vector: ...


@dataclass(frozen=True)
class SourceSentence:
    number: int
    passage: Passage
    text: str
    similarity: float = 0.0


def source_sentences(sources: Sources, planted: tuple[str, ...]) -> list[SourceSentence]:
    """Every sentence of the sources, except planted instructions."""
    found = []
    for number, passage in sources:
        spans = passage.sentence_spans or tuple(sentence_spans(passage.text))
        for span in spans:
            text = passage.text[span.start : span.end].strip().lstrip("#*-• ").strip()
            if text and not is_planted(text, planted):
                found.append(SourceSentence(number, passage, text))
    return found


class ExtractiveRewriter:
    name = "extractive"

    def __init__(self, encoder: TextEncoder, verifier: Verifier, policy: CleanupPolicy) -> None:
        self._encoder = encoder
        self._verifier = verifier
        self._policy = policy

    async def rewrite(
        self, failed: ClaimResult, passages: Sequence[Passage], request: ChatRequest
    ) -> ClaimResult:
        candidates = source_sentences(
            cited_sources(failed.statement, passages), self._policy.planted_instruction
        )
        best = await anyio.to_thread.run_sync(self.closest, failed.statement.text, candidates)
        if best is None or best.similarity < self._policy.rewrite_min_similarity:
            return removed(failed, f"no source sentence is close enough to rewrite from; {failed.reason}")
        sources = ((best.number, best.passage),)
        return await verified_rewrite(failed, best.text, best.text, sources, self._verifier, self.name)

    def closest(self, claim: str, candidates: Sequence[SourceSentence]) -> SourceSentence | None:
        """The candidate most similar to the claim (cosine of unit MiniLM vectors)."""
        if not candidates:
            return None
        vectors = self._encoder.encode([claim, *(c.text for c in candidates)])
        similarities = vectors[1:] @ vectors[0]
        index = int(np.argmax(similarities))
        best = candidates[index]
        return SourceSentence(best.number, best.passage, best.text, float(similarities[index]))
