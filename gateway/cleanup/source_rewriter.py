"""Rewrite to the source: a failing claim becomes the source's own sentence(s) that hold its quote.

The chat contract gives every claim a verbatim quote. When the claim fails verification but its quote
is anchored in a cited passage, the claim is replaced by the whole sentence(s) of that passage the
quote touches: the source's own words, so re-verification finds them verbatim and supported. The
outcome is ``rewritten`` and the rewrite's verdict method is ``source_rewrite``; the original verdict
(a contradiction too) stays in the clinician view. When an LLM rewriter is configured it is tried
first and this is the fallback. A claim without an anchored quote is removed: there is no source
sentence it can honestly be bound to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gateway.cleanup.common import cited_sources, removed, verified_rewrite
from gateway.cleanup.policy import CleanupPolicy
from gateway.cleanup.rewriter import Rewriter
from gateway.domain import ChatRequest, ClaimOutcome, ClaimResult, Passage
from gateway.knowledge.instructions import is_planted
from gateway.verification.anchoring import find_quote
from gateway.verification.binding import quote_context
from gateway.verification.verifier import Verifier
from gateway.vocabulary import VerifierMethod


class SourceRewriter:
    """Rewriter protocol: the LLM rewriter first (when given), else the quote's source sentence(s)."""

    name = "source"

    def __init__(
        self,
        verifier: Verifier,
        policy: CleanupPolicy,
        quote_threshold: float,
        quote_min_chars: int,
        first: Rewriter | None = None,
    ) -> None:
        self._verifier = verifier
        self._policy = policy
        self._threshold = quote_threshold
        self._min_chars = quote_min_chars
        self._first = first
        self.uses_model = first is not None and first.uses_model

    async def rewrite(
        self,
        failed: ClaimResult,
        passages: Sequence[Passage],
        request: ChatRequest,
        *,
        use_model: bool = True,
    ) -> ClaimResult:
        earlier = ""
        if self._first is not None and use_model:
            tried = await self._first.rewrite(failed, passages, request)
            if tried.outcome is ClaimOutcome.REWRITTEN:
                return tried
            earlier = f"{tried.reason.split('; original', 1)[0].split('; ', 1)[0]}; "
        located = self.locate(failed, passages)
        if located is None:
            return removed(failed, f"{earlier}no anchored quote to rewrite from; {failed.reason}")
        number, passage, text = located
        if is_planted(text, self._policy.planted_instruction):
            return removed(failed, f"{earlier}the quoted source sentence is a planted instruction")
        result = await verified_rewrite(
            failed, text, text, ((number, passage),), self._verifier, "source", VerifierMethod.SOURCE_REWRITE
        )
        return replace(result, reason=f"{earlier}{result.reason}") if earlier else result

    def locate(self, failed: ClaimResult, passages: Sequence[Passage]) -> tuple[int, Passage, str] | None:
        """(source number, passage, sentence text) of the claim's anchored quote, or None."""
        quote = (failed.statement.quote or "").strip()
        if len(quote) < self._min_chars:
            return None
        best = None
        for number, passage in cited_sources(failed.statement, passages):
            anchor = find_quote(quote, passage.text, self._threshold)
            if anchor is not None and (best is None or anchor.score > best[0].score):
                best = (anchor, number, passage)
        if best is None:
            return None
        anchor, number, passage = best
        _, text = quote_context(passage, anchor.span)
        text = text.strip().lstrip("#*-• ").strip()
        return (number, passage, text) if text else None
