"""The verifier's values: a claim to check, the evidence found and the verdict."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gateway.domain.drafts import Passage, Span
from gateway.vocabulary import VerdictCheck, VerifierFailure, VerifierMethod


class VerdictLabel(StrEnum):
    SUPPORTED = "supported"
    UNSUPPORTED = "unsupported"
    CONTRADICTED = "contradicted"


class VerificationStatus(StrEnum):
    """What verification established about a claim (``Verdict.status``): the three outcomes of the
    local checker, plus ``unsupported`` when something that can decide said no."""

    SUPPORTED = "supported"
    """The claim restates its source (or a configured entailment model or judge said so)."""
    CONTRADICTED = "contradicted"
    """The source states something incompatible, named by ``Verdict.conflict``."""
    UNSUPPORTED = "unsupported"
    """Decided not supported: an entailment model or the judge said so, or there is nothing to check
    against (no cited source with text). Never given by the local checker to a claim it has a source for."""
    NOT_VERIFIED = "not_verified"
    """The local checker cannot decide (a paraphrase, missing words), or a model stage failed on it."""


class ConflictKind(StrEnum):
    """What a contradiction changes (``Conflict.kind``)."""

    NUMBER = "number"
    """A different number, dose, unit or frequency of the same dimension."""
    NEGATION = "negation"
    """One side negates what the other states."""
    OPPOSITE = "opposite"
    """An opposite word (increases / reduces) or a difference where the other reports none."""
    QUANTIFIER = "quantifier"
    """The claim generalises ("always", "all") where the source hedges ("may", "some")."""
    ENTITY = "entity"
    """Another medicine or condition."""
    POPULATION = "population"
    """Another group of people (children / adults, pregnant women...)."""
    ROLE = "role"
    """Who does what to whom is swapped ("A causes B" where the source says "B causes A"); measured
    about 87% precise on the dev sets (below the 90% bar), so not in the default
    ``contradiction_kinds`` (not_verified)."""
    STATEMENT = "statement"
    """A judge found the source incompatible without naming one of the kinds above (its reason says how)."""


@dataclass(frozen=True)
class Conflict:
    """What a contradicted claim says and what its source says instead."""

    kind: ConflictKind
    detail: str
    """One sentence naming both sides (e.g. "claim says '500 mg', evidence says '50 mg'")."""
    claim: str = ""
    """The claim's part in conflict ("500 mg"), when one span names it."""
    source: str = ""
    """The source's part in conflict ("50 mg"), when one span names it."""


@dataclass(frozen=True)
class Evidence:
    """Where in which source the support (or the contradiction) was found."""

    source_number: int
    passage_id: str
    text: str
    span: Span


@dataclass(frozen=True)
class ClaimToCheck:
    """A claim with the sources it must be checked against (the cited ones, or all when none cited)."""

    text: str
    quote: str | None
    sources: tuple[tuple[int, Passage], ...]
    quote_bound: bool = True
    """Chat path: supported locally only when the claim restates its anchored quote. False for
    check-only answers (``/v1/verify``), which carry no quotes and are judged by the calibrated score."""


@dataclass(frozen=True)
class Verdict:
    label: VerdictLabel
    score: float
    method: VerifierMethod
    check: VerdictCheck
    reason: str = ""
    evidence: Evidence | None = None
    failure: VerifierFailure | None = None
    """Set when a model stage failed on this claim (``timeout``, ``error``, ``invalid_output``): the
    verdict is then a closed failure, never an ordinary ``unsupported`` (counted in metrics)."""
    conflict: Conflict | None = None
    """Contradicted claims: what the claim changes (a ``contradicted`` label always carries one)."""
    decided: bool = False
    """An ``unsupported`` label that something able to decide gave (an entailment model, the judge, or
    no source to check against); False: the local checker could not decide (``not_verified``)."""

    @property
    def supported(self) -> bool:
        return self.label is VerdictLabel.SUPPORTED

    @property
    def status(self) -> VerificationStatus:
        """supported / contradicted / unsupported (decided) / not_verified (see ``VerificationStatus``)."""
        if self.label is VerdictLabel.SUPPORTED:
            return VerificationStatus.SUPPORTED
        if self.label is VerdictLabel.CONTRADICTED:
            return VerificationStatus.CONTRADICTED
        if self.decided and self.failure is None:
            return VerificationStatus.UNSUPPORTED
        return VerificationStatus.NOT_VERIFIED
