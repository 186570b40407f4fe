"""The cascade: quote anchoring, then local entailment, then the LLM judge for the uncertain few.

How anchoring and local combine, per claim:

- A local contradiction (a clash of numbers, negation, quantifier or entity with close evidence) is
  final: a real quote does not help a claim that changes what the quote says.
- Quote found in a cited passage: supported when the local score reaches ``support_threshold``; the
  evidence shown is the anchored quote.
- No quote, or a quote that does not occur in the passage (fabricated or garbled): the claim may still
  be entailed, so the local verifier decides, but with the stricter ``unanchored_support_threshold``.
  The reason records that the quote was not found.
- Local scores inside ``uncertain_band`` go to the judge (when configured), most uncertain first, at
  most ``judge_budget_per_request`` per ``verify()``; the judge's verdict replaces the local one, and
  claims past the budget keep theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gateway.domain import ClaimToCheck, Verdict, VerdictLabel
from gateway.knowledge.embedding import Embedder
from gateway.policy import VerificationPolicy
from gateway.settings import Settings
from gateway.upstream.base import CallGate
from gateway.verification.anchoring import QuoteAnchoringVerifier
from gateway.verification.base import Verifier
from gateway.verification.judge import JudgeConfig, LLMJudgeVerifier
from gateway.verification.local import LocalEntailmentVerifier

ANCHORED_CHECKS = frozenset({"quote_exact", "quote_fuzzy"})


class CascadeVerifier:
    """Verifier protocol: anchoring -> local -> judge on the uncertain band, under a per-request budget."""

    name = "cascade"

    def __init__(
        self,
        anchoring: QuoteAnchoringVerifier,
        local: Verifier,
        judge: Verifier | None,
        policy: VerificationPolicy,
    ) -> None:
        self._anchoring = anchoring
        self._local = local
        self._judge = judge
        self._policy = policy

    async def verify(self, claims: Sequence[ClaimToCheck]) -> list[Verdict]:
        anchors = await self._anchoring.verify(claims)
        local = await self._local.verify(claims)
        verdicts = [self.combine(a, v) for a, v in zip(anchors, local, strict=True)]
        return await self._escalate(claims, verdicts)

    def combine(self, anchor: Verdict, local: Verdict) -> Verdict:
        """One claim's anchoring and local verdicts -> the cascade's verdict (see module docstring)."""
        anchored = anchor.check in ANCHORED_CHECKS
        if local.label is VerdictLabel.CONTRADICTED:
            return _note(local, anchor)
        threshold = self._policy.support_threshold if anchored else self._policy.unanchored_support_threshold
        if local.score >= threshold:
            evidence = anchor.evidence if anchored and anchor.evidence else local.evidence
            return _note(replace(local, label=VerdictLabel.SUPPORTED, evidence=evidence), anchor)
        return _note(replace(local, label=VerdictLabel.UNSUPPORTED), anchor)

    def uncertain(self, verdict: Verdict) -> bool:
        lo, hi = self._policy.uncertain_band
        return verdict.label is not VerdictLabel.CONTRADICTED and lo <= verdict.score <= hi

    async def _escalate(self, claims: Sequence[ClaimToCheck], verdicts: list[Verdict]) -> list[Verdict]:
        if self._judge is None or self._policy.judge_budget_per_request == 0:
            return verdicts
        centre = sum(self._policy.uncertain_band) / 2
        candidates = [i for i, v in enumerate(verdicts) if self.uncertain(v)]
        chosen = sorted(candidates, key=lambda i: abs(verdicts[i].score - centre))
        chosen = sorted(chosen[: self._policy.judge_budget_per_request])
        if not chosen:
            return verdicts
        judged = await self._judge.verify([claims[i] for i in chosen])
        result = list(verdicts)
        for i, verdict in zip(chosen, judged, strict=True):
            result[i] = verdict
        return result


def _note(verdict: Verdict, anchor: Verdict) -> Verdict:
    """Record the anchoring outcome in the reason, so a fabricated quote stays visible."""
    note = "quote found" if anchor.check in ANCHORED_CHECKS else f"quote: {anchor.check}"
    return replace(verdict, reason=f"{verdict.reason}; {note}" if verdict.reason else note)


def build_verifier(
    settings: Settings, policy: VerificationPolicy, embedder: Embedder, gate: CallGate | None = None
) -> Verifier:
    """The configured cascade: the judge joins when ``settings.judge_base_url`` is set; its calls go
    through ``gate`` (the shared model-call limits) when given."""
    anchoring = QuoteAnchoringVerifier(policy.quote_fuzzy_threshold, policy.quote_min_chars)
    local = LocalEntailmentVerifier(embedder, policy)
    judge: LLMJudgeVerifier | None = None
    if settings.judge_base_url:
        judge = LLMJudgeVerifier(
            JudgeConfig(
                base_url=settings.judge_base_url,
                api_key=settings.judge_api_key.reveal(),
                model=settings.judge_model,
                timeout=settings.judge_timeout,
                quote_threshold=policy.quote_fuzzy_threshold,
            ),
            gate=gate,
        )
    return CascadeVerifier(anchoring, local, judge, policy)
