"""The cascade: quote anchoring and binding, local entailment, then an entailment model and the judge.

Chat path (``ClaimToCheck.quote_bound``), per claim:

- A local contradiction (a clash of numbers, negation, quantifier or entity with close evidence) is
  final: a real quote does not help a claim that changes what the quote says.
- A claim that is verbatim a sentence (or run of sentences) of a cited passage is supported.
- Quote found in a cited passage: the claim is supported locally only when it *restates* the quote
  with the rest of its sentence (``binding.restates``), or restates the quote in other listed words or
  with an added hedge (``restatement.Restatement.bind``: check ``restatement``; a claim that drops
  its source's hedge is never supported: ``hedge_dropped``); otherwise the verdict names what the source
  does not contain, and is ``contradicted`` when the claim changes a number, polarity, quantifier or
  entity of its own quote. The evidence shown is the quote's sentence(s).
- No quote, or one not found in the passage: not supported locally, whatever the similarity.

Check-only path (``quote_bound`` False: ``/v1/verify`` answers carry no quotes): the same binding is
tested against the local verifier's best evidence window, and with the local rule score gives a raw
score (``restatement_score``) that is mapped to a calibrated probability of support
(``calibration.py``); that probability is the verdict's score, and the claim is supported at
``check_support_probability`` or above (the leak-calibrated default).

A local clash is ``contradicted`` only for the conflict kinds the dev sets showed to hold
(``contradiction_kinds``, on close evidence); any other clash leaves the claim ``not_verified``, its
reason naming the possible conflict. Claims with nothing to check against (``FINAL_CHECKS``) are
decided ``unsupported`` (``Verdict.decided``).

Then only the ``not_verified`` claims (``Verdict.status``; not failed): the entailment model
(``GATEWAY_NLI_MODEL``) when configured, then the LLM judge on those still undecided, closest to the
centre of ``uncertain_band`` first, at most ``judge_budget_per_request`` per ``verify()``; the judge
takes them ``judge_batch_size`` claims per call (``judge.py``). Supported, contradicted and decided
claims never reach a model. A model failure is a closed failure verdict (``nli_error`` /
``judge_error``, ``Verdict.failure`` set: ``not_verified``), never an ordinary ``unsupported``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from gateway.domain import ClaimToCheck, Evidence, Passage, Verdict, VerdictLabel, VerificationStatus
from gateway.models.embedding import Embedder
from gateway.models.openai_compatible import Endpoint
from gateway.models.pool import ModelPool
from gateway.settings import Settings
from gateway.text import strip_markers
from gateway.verification.anchoring import QuoteAnchoringVerifier
from gateway.verification.binding import Binding, quote_context, restates, unshared_words
from gateway.verification.calibration import ScoreCalibration
from gateway.verification.checks.analysis import Analyses, Readings
from gateway.verification.checks.data import CheckData
from gateway.verification.entailment import NLIRequest, NLIStage, load_entailment_model
from gateway.verification.evidence_judge import conflict_holds
from gateway.verification.judge import JudgeConfig, LLMJudgeVerifier
from gateway.verification.local import LocalEntailmentVerifier
from gateway.verification.policy import VerificationPolicy
from gateway.verification.restatement import Restatement, build_restatement
from gateway.verification.verifier import LocalVerifier, Verifier
from gateway.vocabulary import ModelCallPurpose, VerdictCheck, VerifierMethod

ANCHORED_CHECKS = frozenset({VerdictCheck.QUOTE_EXACT, VerdictCheck.QUOTE_FUZZY})
RESTATED_FLOOR = 0.5
"""Check-only raw score: restated claims score from here up, all others below (``restatement_score``)."""
FINAL_CHECKS = frozenset({VerdictCheck.NO_SOURCE, VerdictCheck.NO_EVIDENCE})
"""Unsupported verdicts that no later stage can change (nothing to check against)."""


class CascadeVerifier:
    """Verifier protocol: anchoring + binding -> local -> entailment model -> judge (see module doc)."""

    name = VerifierMethod.CASCADE

    def __init__(
        self,
        anchoring: QuoteAnchoringVerifier,
        local: LocalVerifier,
        judge: Verifier | None,
        policy: VerificationPolicy,
        nli: NLIStage | None = None,
        calibration: ScoreCalibration | None = None,
        restatement: Restatement | None = None,
        data: CheckData | None = None,
    ) -> None:
        """``restatement``: chat claims restating their quote in other words are kept (None: binding
        alone, as before the restatement check). ``data``: the checks' word data, the local verifier's
        (None: loaded now)."""
        self._data = CheckData.load() if data is None else data
        self._anchoring = anchoring
        self._restatement = restatement
        self._local = local
        self._judge = judge
        self._policy = policy
        self._nli = nli
        self._calibration = calibration or ScoreCalibration.load()
        self._readings = Readings(self._data)
        """Analysed texts kept between requests (a cited passage is read once)."""

    @property
    def operating_point(self) -> str:
        """Stages and thresholds, as every report names them (``base.operating_point``)."""
        p = self._policy
        stages = "+".join(
            name for name, on in (("local", True), ("nli", self._nli), ("judge", self._judge)) if on
        )
        return (
            f"cascade[{stages}] support: check_support_probability {p.check_support_probability:g} "
            f"(check-only), quote binding (chat); contradiction: {','.join(p.contradiction_kinds)} "
            f"at similarity >= {p.contradiction_similarity:g}"
        )

    async def verify(self, claims: Sequence[ClaimToCheck]) -> list[Verdict]:
        anchors = await self._anchoring.verify(claims)
        analyses = Analyses(self._data, kept=self._readings)
        local = await self._local.verify(claims, analyses)
        verdicts = [self.combine(c, a, v, analyses) for c, a, v in zip(claims, anchors, local, strict=True)]
        verdicts = await self._entail(claims, verdicts)
        return await self._escalate(claims, verdicts)

    def combine(
        self, claim: ClaimToCheck, anchor: Verdict, local: Verdict, analyses: Analyses | None = None
    ) -> Verdict:
        """One claim's anchoring and local verdicts -> the cascade's verdict (see module docstring)."""
        analyses = Analyses(self._data) if analyses is None else analyses
        if not claim.quote_bound:
            return self._check_only(claim, local, analyses)
        if local.label is VerdictLabel.CONTRADICTED:
            return _note(local, anchor)
        if local.check in FINAL_CHECKS:
            return _note(replace(local, decided=True), anchor)
        if local.supported and local.check == VerdictCheck.VERBATIM:
            anchored = anchor.check in ANCHORED_CHECKS and anchor.evidence is not None
            return _note(replace(local, evidence=anchor.evidence) if anchored else local, anchor)
        if anchor.check not in ANCHORED_CHECKS or anchor.evidence is None:
            reason = f"no quote of the claim is found in its cited source ({anchor.check})"
            return replace(
                local, label=VerdictLabel.UNSUPPORTED, check=VerdictCheck.NO_ANCHORED_QUOTE, reason=reason
            )
        evidence = _quote_evidence(claim, anchor.evidence)
        binding = restates(claim.text, evidence.text, analyses)
        if self._restatement is not None:
            binding = self._restatement.bind(
                claim.text, anchor.evidence.text, evidence.text, binding, analyses
            )
        if binding.restates:
            score = max(local.score, self._policy.support_threshold)
            return replace(
                local,
                label=VerdictLabel.SUPPORTED,
                score=score,
                check=binding.check,
                reason=f"{binding.detail}; quote found",
                evidence=evidence,
            )
        if self._contradiction(binding, claim.text, evidence.text, analyses):
            return replace(
                local,
                label=VerdictLabel.CONTRADICTED,
                check=binding.check,
                reason=binding.detail,
                evidence=evidence,
                conflict=binding.conflict,
            )
        return replace(
            local,
            label=VerdictLabel.UNSUPPORTED,
            check=binding.check,
            reason=binding.detail,
            evidence=evidence,
            conflict=None,
        )

    def _contradiction(self, binding: Binding, claim: str, context: str, analyses: Analyses) -> bool:
        """A claim that changes its own anchored quote contradicts it, for the trusted conflict kinds
        (``contradiction_kinds``) when it restates the rest of the quote's sentence
        (``contradiction_max_unshared_words``); the model quoted that sentence: no similarity bound."""
        conflict = binding.conflict
        kinds = self._policy.contradiction_kinds
        if not binding.clash or conflict is None or conflict.kind.value not in kinds:
            return False
        analysed, evidence = analyses(strip_markers(claim)), analyses(context)
        if not conflict_holds(conflict, analysed, evidence):
            return False
        unshared = unshared_words(analysed, evidence, conflict)
        return len(unshared) <= self._policy.contradiction_max_unshared_words

    def _check_only(self, claim: ClaimToCheck, local: Verdict, analyses: Analyses) -> Verdict:
        """No quote contract: the calibrated probability of support is the score and the decision."""
        raw, binding = restatement_score(claim.text, local, analyses)
        probability = round(self._calibration.probability(raw), 4)
        if local.label is VerdictLabel.CONTRADICTED:
            return replace(local, score=min(probability, local.score))
        if local.check in FINAL_CHECKS:
            return replace(local, score=min(probability, local.score), decided=True)
        supported = probability >= self._policy.check_support_probability
        label = VerdictLabel.SUPPORTED if supported else VerdictLabel.UNSUPPORTED
        reason = f"{local.reason}; calibrated probability of support {probability:.2f}"
        check = local.check
        if not supported and binding is not None and not binding.restates:
            check, reason = binding.check, f"{binding.detail.replace('quoted source', 'evidence')}; {reason}"
        elif not supported and local.supported:
            reason += f" (below the check-only threshold {self._policy.check_support_probability:g})"
        return replace(local, label=label, score=probability, check=check, reason=reason)

    def undecided(self, verdict: Verdict) -> bool:
        """``not_verified`` and not failed: not supported, not contradicted, not decided unsupported
        (something to check against)."""
        return (
            verdict.status is VerificationStatus.NOT_VERIFIED
            and verdict.failure is None
            and verdict.check not in FINAL_CHECKS
        )

    async def _entail(self, claims: Sequence[ClaimToCheck], verdicts: list[Verdict]) -> list[Verdict]:
        if self._nli is None:
            return verdicts
        chosen = [i for i, v in enumerate(verdicts) if self.undecided(v)]
        if not chosen:
            return verdicts
        requests = [_nli_request(claims[i], verdicts[i]) for i in chosen]
        decided = await self._nli.decide(requests)
        result = list(verdicts)
        for i, verdict in zip(chosen, decided, strict=True):
            if verdict is not None:
                result[i] = verdict
        return result

    async def _escalate(self, claims: Sequence[ClaimToCheck], verdicts: list[Verdict]) -> list[Verdict]:
        if self._judge is None or self._policy.judge_budget_per_request == 0:
            return verdicts
        centre = sum(self._policy.uncertain_band) / 2
        candidates = [i for i, v in enumerate(verdicts) if self.undecided(v)]
        chosen = sorted(candidates, key=lambda i: abs(verdicts[i].score - centre))
        chosen = sorted(chosen[: self._policy.judge_budget_per_request])
        if not chosen:
            return verdicts
        judged = await self._judge.verify([claims[i] for i in chosen])
        result = list(verdicts)
        for i, verdict in zip(chosen, judged, strict=True):
            result[i] = verdict
        return result


def restatement_score(claim: str, local: Verdict, analyses: Analyses) -> tuple[float, Binding | None]:
    """The check-only raw score in [0, 1] that ``calibration.py`` maps to a probability of support.

    A claim its evidence window restates (``binding.restates``: every number, polarity, quantifier,
    entity and content word there) scores in [0.5, 1] by its local score; any other claim in [0, 0.5).
    Restatement is the structural guarantee; the local score orders claims within each half.
    """
    if local.evidence is None:
        return RESTATED_FLOOR * local.score, None
    binding = restates(claim, local.evidence.text, analyses)
    if binding.restates:
        return RESTATED_FLOOR + (1 - RESTATED_FLOOR) * local.score, binding
    return RESTATED_FLOOR * min(local.score, 0.999), binding


def _passage(claim: ClaimToCheck, number: int) -> Passage | None:
    return next((p for n, p in claim.sources if n == number), None)


def _quote_evidence(claim: ClaimToCheck, anchored: Evidence) -> Evidence:
    """The anchored quote widened to its whole sentence(s) in the passage."""
    passage = _passage(claim, anchored.source_number)
    if passage is None:
        return anchored
    span, text = quote_context(passage, anchored.span)
    return Evidence(anchored.source_number, anchored.passage_id, text, span)


def _nli_request(claim: ClaimToCheck, verdict: Verdict) -> NLIRequest:
    """Premise: the verdict's evidence (quote sentence or best window), else the cited passages."""
    if verdict.evidence is not None:
        return NLIRequest(claim.text, verdict.evidence.text, verdict.evidence)
    premise = " ".join(p.text for _, p in claim.sources)
    return NLIRequest(claim.text, premise, None)


def _note(verdict: Verdict, anchor: Verdict) -> Verdict:
    """Record the anchoring outcome in the reason, so a fabricated quote stays visible."""
    note = "quote found" if anchor.check in ANCHORED_CHECKS else f"quote: {anchor.check}"
    return replace(verdict, reason=f"{verdict.reason}; {note}" if verdict.reason else note)


def build_nli(settings: Settings, policy: VerificationPolicy) -> NLIStage | None:
    """The entailment stage when ``settings.nli_model`` names a model directory (loaded now, once)."""
    if settings.nli_model is None:
        return None
    model = load_entailment_model(Path(settings.nli_model))
    return NLIStage(model, policy.nli_entailment_threshold, settings.nli_timeout)


def build_verifier(
    settings: Settings, policy: VerificationPolicy, embedder: Embedder, models: ModelPool | None = None
) -> Verifier:
    """The configured cascade: the entailment model and the judge join when configured. The judge's
    model comes from ``models`` (the process's ModelPool: its limits, metrics and closing), which is
    then required. The restatement terms (``policies/restatements.yaml``) are read and validated first:
    a bad entry stops start-up."""
    data = CheckData.load()  # the checks' word data: read and validated now, once
    restatement = build_restatement(settings, policy, data) if policy.restatement else None
    anchoring = QuoteAnchoringVerifier(policy.quote_fuzzy_threshold, policy.quote_min_chars)
    local = LocalEntailmentVerifier(embedder, policy, data)
    judge: LLMJudgeVerifier | None = None
    if settings.judge_base_url:
        if models is None:
            raise ValueError("the LLM judge is configured: pass the ModelPool its model comes from")
        judge = LLMJudgeVerifier(
            models.model(Endpoint.judge(settings), ModelCallPurpose.JUDGE),
            JudgeConfig(
                timeout=settings.judge_timeout,
                quote_threshold=policy.quote_fuzzy_threshold,
                batch_size=policy.judge_batch_size,
            ),
        )
    return CascadeVerifier(
        anchoring, local, judge, policy, build_nli(settings, policy), restatement=restatement, data=data
    )
