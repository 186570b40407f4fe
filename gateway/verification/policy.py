"""Verification thresholds: quote anchoring, local entailment, the judge and cited-URL fetching
(``thresholds.yaml: verification``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from gateway.domain import ConflictKind
from gateway.validation import SignedUnitInterval, UnitInterval, field_error


@dataclass(frozen=True)
class VerificationPolicy:
    quote_fuzzy_threshold: UnitInterval = 0.85
    """Fuzzy quote anchoring: minimum rapidfuzz partial ratio (0..1) for a quote to count as found."""
    quote_min_chars: int = 12
    """Quotes shorter than this are ignored (too short to anchor anything)."""
    support_threshold: UnitInterval = 0.5
    """Local verifier: score at or above which a claim is supported."""
    uncertain_band: tuple[float, float] = (0.35, 0.65)
    """Order of escalation: ``not_verified`` claims whose score is nearest this band's centre go to the
    LLM judge first (every ``not_verified`` claim may go, within the budget)."""
    judge_budget_per_request: Annotated[int, Field(ge=0, le=1000)] = 6
    """Most claims one request may send to the judge; claims past the budget stay ``not_verified``."""
    judge_batch_size: Annotated[int, Field(ge=1, le=32)] = 4
    """Claims judged in one judge call (one prompt, one JSON answer with a verdict per claim)."""
    local_similarity_floor: SignedUnitInterval = 0.25
    """Local verifier: MiniLM cosine mapped to 0 in the score (unrelated sentences score about this)."""
    local_similarity_ceiling: SignedUnitInterval = 0.75
    """Local verifier: MiniLM cosine mapped to 1 in the score (near paraphrases)."""
    local_similarity_weight: UnitInterval = 0.5
    """Local verifier: weight of similarity in the base score; the rest is content-word coverage."""
    local_candidates: Annotated[int, Field(ge=1, le=50)] = 3
    """Local verifier: best-by-cosine evidence spans (sentences, windows) on which the checks run."""
    local_window_sentences: Annotated[int, Field(ge=1, le=10)] = 3
    """Local verifier: longest window of consecutive sentences tried as evidence."""
    missing_number_penalty: UnitInterval = 0.5
    """Local verifier: score multiplier when a claim number is absent from the evidence."""
    missing_entity_penalty: UnitInterval = 0.8
    """Local verifier: score multiplier when a named entity of the claim is absent from the evidence."""
    missing_quantifier_penalty: UnitInterval = 0.7
    """Local verifier: score multiplier when a universal claim ("always") meets unqualified evidence."""
    clash_score: UnitInterval = 0.1
    """Local verifier: score given when a check finds a clash (below any uncertain band: not escalated)."""
    contradiction_similarity: UnitInterval = 0.8
    """Local verifier: a clash is a contradiction when the evidence is at least this similar (cosine)
    and its kind is in ``contradiction_kinds``; any other clash leaves the claim ``not_verified``."""
    contradiction_kinds: tuple[str, ...] = ("number", "negation", "quantifier", "opposite")
    """Conflict kinds (``domain.ConflictKind``) the local checker may call a contradiction: those whose
    contradictions were >= 90% truly not supported on every dev set (bench/bench_verifier.py)."""
    contradiction_max_unshared_words: Annotated[int, Field(ge=0, le=100)] = 0
    """Local verifier: a clash is a contradiction only when the evidence states every other content word
    of the claim but this many (the claim restates the evidence except for the conflict)."""
    unanchored_support_threshold: UnitInterval = 0.6
    """Unused since quote binding (a chat claim without an anchored quote is never supported locally);
    kept so existing policy files still load."""
    local_combiner: Literal["rules", "learned"] = "rules"
    """Local verifier: "rules" (similarity/coverage mix with penalties) or "learned" (logistic regression)."""
    restatement: bool = True
    """Chat path: keep a claim as written when it restates its quote in other listed words, inflection
    or word order, or with a hedge its source does not weaken (``policies/restatements.yaml``,
    ``verification/restatement.py``); a claim dropping its source's hedge is then never supported.
    False: quote binding alone."""
    restatement_hedge_scope_words: Annotated[int, Field(ge=1, le=50)] = 4
    """Restatement: content words a source's hedge governs (after it in its clause, else before it)."""
    restatement_hedge_scope_overlap: UnitInterval = 0.5
    """Restatement: a source's hedge weakens the claim's statement (the claim must keep it) when at
    least this share of the words it governs are the claim's."""
    check_support_probability: UnitInterval = 0.84
    """Check-only (``/v1/verify``): calibrated probability of support at or above which a claim without
    a quote is supported (leak-calibrated on the dev sets: docs/verification.md)."""
    nli_entailment_threshold: UnitInterval = 0.9
    """Entailment model (``GATEWAY_NLI_MODEL``): probability of entailment at which a claim is supported."""
    url_fetch_timeout: float = 5.0
    """Seconds allowed to fetch a cited URL."""
    url_max_bytes: int = 2_000_000
    """Largest page body read from a cited URL."""
    url_max_redirects: int = 3
    """Redirects followed when fetching a cited URL."""
    url_cache_ttl_seconds: int = 3600
    """How long a fetched page is reused."""
    url_allowed_domains: tuple[str, ...] = ()
    """Domains (and their subdomains) whose pages may be fetched; empty allows none."""

    def __post_init__(self) -> None:
        if self.local_similarity_ceiling <= self.local_similarity_floor:
            raise field_error(self, "local_similarity_ceiling", "must be above local_similarity_floor")
        known = {kind.value for kind in ConflictKind}
        unknown = [k for k in self.contradiction_kinds if k not in known]
        if unknown:
            raise field_error(
                self,
                "contradiction_kinds",
                f"unknown kind {unknown[0]!r} (known: {', '.join(sorted(known))})",
            )
        lo, hi = self.uncertain_band
        if not 0.0 <= lo <= hi <= 1.0:
            raise field_error(self, "uncertain_band", "must be [low, high] with 0 <= low <= high <= 1")
