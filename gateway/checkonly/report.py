"""What checking an answer found: each statement's verdict and evidence, each fetched URL's validity,
and the SourceCheckup / ASTRID metrics computed from them."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.domain import Conflict, Span, StatementKind, VerdictLabel, VerificationStatus
from gateway.vocabulary import VerdictCheck, VerifierFailure, VerifierMethod


@dataclass(frozen=True)
class CheckedEvidence:
    source_id: str
    text: str
    span: Span
    """Offsets in the source's text (the fetched text for URL sources)."""


@dataclass(frozen=True)
class CheckedStatement:
    """One statement of the answer; ``verdict`` etc. are None for conversational statements."""

    text: str
    span: Span
    kind: StatementKind
    source_ids: tuple[str, ...]
    verdict: VerdictLabel | None = None
    score: float | None = None
    method: VerifierMethod | None = None
    check: VerdictCheck | None = None
    reason: str = ""
    evidence: CheckedEvidence | None = None
    failure: VerifierFailure | None = None
    """Set when a judge or entailment model failed on this claim (it then failed closed)."""
    status: VerificationStatus | None = None
    """supported / contradicted / unsupported (decided) / not_verified; None for conversational ones."""
    conflict: Conflict | None = None
    """Contradicted claims: what the claim says and what the source says instead."""


@dataclass(frozen=True)
class SupportRange:
    """Statement-level support as the checker can bound it: ``low`` counts only verified claims,
    ``high`` counts the undecided ones as supported too; ``undecided`` is the share between them.
    A point figure needs a judge (or entailment model) to decide the undecided claims."""

    low: float
    high: float
    undecided: float


@dataclass(frozen=True)
class UrlValidity:
    url: str
    source_ids: tuple[str, ...]
    valid: bool
    status: int | None
    reason: str | None
    final_url: str


@dataclass(frozen=True)
class CheckReport:
    statements: tuple[CheckedStatement, ...]
    """Every statement of the answer in order, conversational ones included."""
    urls: tuple[UrlValidity, ...]
    """Every URL that was fetched (sources given as URL without text), once each."""
    sentence_indices: tuple[int, ...]
    """Per statement, the index of the answer sentence it belongs to."""
    operating_point: str = ""
    """The verifier and thresholds that decided (``verification.verifier.operating_point``)."""

    def status_counts(self) -> dict[VerificationStatus, int]:
        """Claims per status (every status present, zero when none)."""
        counts = dict.fromkeys(VerificationStatus, 0)
        for claim in self.claims:
            if claim.status is not None:
                counts[claim.status] += 1
        return counts

    @property
    def support_range(self) -> SupportRange | None:
        """Statement-level support as a range (None without claims); see ``SupportRange``."""
        claims = self.claims
        if not claims:
            return None
        counts = self.status_counts()
        supported = counts[VerificationStatus.SUPPORTED] / len(claims)
        undecided = counts[VerificationStatus.NOT_VERIFIED] / len(claims)
        return SupportRange(round(supported, 4), round(supported + undecided, 4), round(undecided, 4))

    @property
    def response_support_possible(self) -> bool:
        """The upper end of response-level support: at least one claim, and every claim supported or
        not verified (none contradicted or decided unsupported)."""
        claims = self.claims
        allowed = (VerificationStatus.SUPPORTED, VerificationStatus.NOT_VERIFIED)
        return bool(claims) and all(c.status in allowed for c in claims)

    @property
    def claims(self) -> tuple[CheckedStatement, ...]:
        return tuple(s for s in self.statements if s.kind is StatementKind.CLAIM)

    @property
    def statement_support(self) -> float | None:
        claims = self.claims
        if not claims:
            return None
        return round(sum(c.verdict is VerdictLabel.SUPPORTED for c in claims) / len(claims), 4)

    @property
    def response_supported(self) -> bool:
        claims = self.claims
        return bool(claims) and all(c.verdict is VerdictLabel.SUPPORTED for c in claims)

    @property
    def url_validity_share(self) -> float | None:
        if not self.urls:
            return None
        return round(sum(u.valid for u in self.urls) / len(self.urls), 4)

    @property
    def conversational_faithfulness(self) -> float | None:
        """Share of informative sentences whose every claim is supported (None without any)."""
        grounded: dict[int, bool] = {}
        for index, statement in zip(self.sentence_indices, self.statements, strict=True):
            if statement.kind is StatementKind.CLAIM:
                supported = statement.verdict is VerdictLabel.SUPPORTED
                grounded[index] = grounded.get(index, True) and supported
        if not grounded:
            return None
        return round(sum(grounded.values()) / len(grounded), 4)
