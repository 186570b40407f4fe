"""Judging one candidate piece of evidence against a claim, and picking the best of a claim's candidates.

The local verifier (``local.py``) finds a claim's candidates (the most similar sentences and windows of
its cited passages); an ``EvidenceJudge`` scores each one: the base score mixes the rescaled cosine with
the share of the claim's content words the candidate contains, then the checks (``checks`` package)
apply. A clash caps the score at ``clash_score`` and is a contradiction only where contradictions were
measured to hold (``contradicts``); something merely missing multiplies the score by a penalty. With
``local_combiner: learned`` the logistic regression of ``combiner.py`` gives the score instead (a number
or negation clash with close evidence still contradicts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gateway.domain import Conflict, ConflictKind, Evidence, Verdict, VerdictLabel
from gateway.verification.binding import unshared_words
from gateway.verification.candidates import Candidate
from gateway.verification.checks.analysis import AnalysedText
from gateway.verification.checks.entities import check_entities
from gateway.verification.checks.form import FormCheck
from gateway.verification.checks.numbers import check_numbers, numbers_apart
from gateway.verification.checks.polarity import check_antonyms, check_negation, one_sided
from gateway.verification.checks.quantifiers import check_quantifier
from gateway.verification.checks.results import CheckName, CheckOutcome, CheckResult
from gateway.verification.checks.roles import check_roles
from gateway.verification.checks.words import coverage
from gateway.verification.combiner import LogisticCombiner, features
from gateway.verification.policy import VerificationPolicy
from gateway.vocabulary import VerdictCheck, VerifierMethod

HARD_CLASHES = frozenset({CheckName.NUMBER, CheckName.NEGATION})
"""Clashes that stay contradictions whatever the learned combiner says (fail closed)."""


@dataclass(frozen=True)
class Assessment:
    score: float
    label: VerdictLabel
    check: VerdictCheck
    reason: str
    candidate: Candidate | None
    similarity: float
    conflict: Conflict | None = None
    """Contradictions: what the claim changes."""

    def verdict(self, method: VerifierMethod) -> Verdict:
        evidence = None
        if self.candidate is not None:
            c = self.candidate
            evidence = Evidence(c.source_number, c.passage.id, c.text, c.span)
        return Verdict(
            self.label,
            round(self.score, 4),
            method,
            self.check,
            self.reason,
            evidence,
            conflict=self.conflict,
        )


def contradicts(
    result: CheckResult,
    similarity: float,
    policy: VerificationPolicy,
    claim: AnalysedText,
    evidence: AnalysedText,
) -> bool:
    """Is this clash a contradiction to report? Only for the conflict kinds of
    ``policy.contradiction_kinds``, on evidence at least ``contradiction_similarity`` close, that
    states every other content word of the claim but ``contradiction_max_unshared_words``: the claim
    restates the evidence except for the conflict, and the conflict holds (``conflict_holds``). That
    is the operating point at which >= 90% of contradicted claims were truly not supported on every
    dev set's tune and held halves (docs/verification.md)."""
    conflict = result.conflict
    if (
        conflict is None
        or conflict.kind.value not in policy.contradiction_kinds
        or similarity < policy.contradiction_similarity
        or not conflict_holds(conflict, claim, evidence)
    ):
        return False
    return len(unshared_words(claim, evidence, conflict)) <= policy.contradiction_max_unshared_words


_CONFLICT_CHECKS: dict[VerdictCheck, Callable[[AnalysedText, AnalysedText], CheckResult]] = {
    VerdictCheck.NUMBER_MISMATCH: check_numbers,
    VerdictCheck.NEGATION: check_negation,
    VerdictCheck.ANTONYM: check_antonyms,
    VerdictCheck.QUANTIFIER: check_quantifier,
}
"""The checks whose conflict a candidate other than the best may show, checked again on the passage."""


def conflict_holds(conflict: Conflict, claim: AnalysedText, evidence: AnalysedText) -> bool:
    """A conflict that may be reported: an opposite word the claim states one way only
    (``polarity.one_sided``), a number apart from every evidence number of its dimension, ranges and
    bounds included (``numbers.numbers_apart``); other kinds as the checks found them."""
    if conflict.kind is ConflictKind.NUMBER:
        return numbers_apart(claim, evidence, conflict.claim)
    return one_sided(conflict, claim)


class EvidenceJudge:
    """Scores a claim's candidates with the rules (or the learned combiner) and the explicit checks."""

    def __init__(
        self, policy: VerificationPolicy, form: FormCheck, combiner: LogisticCombiner | None
    ) -> None:
        """``form``: the claim's form check; ``combiner``: the learned combiner (None: the rules)."""
        self._policy = policy
        self._form = form
        self._combiner = combiner

    def best(
        self, claim: AnalysedText, found: list[tuple[Candidate, float]], best_sentence: float
    ) -> Assessment:
        """The first candidate (most similar first) of the highest (score, similarity).

        With the rules, a candidate's score never exceeds its base (``base``: a clash caps it, a
        penalty is at most 1), so a candidate whose base is below a score already judged cannot win and
        is not checked: the candidates are judged by base, highest first, and the winner is the one
        judging every candidate would pick (ties go to the most similar, as before)."""
        entities: dict[AnalysedText, CheckResult] = {}  # candidates of one passage share its result
        if self._combiner is not None:
            assessed = [self.judge(claim, c, s, best_sentence, entities) for c, s in found]
            return max(assessed, key=lambda a: (a.score, a.similarity))
        bases = [self.base(claim, c, s) for c, s in found]
        best: tuple[float, float, int, Assessment] | None = None
        judged: dict[int, Assessment] = {}
        for position in sorted(range(len(found)), key=lambda k: -bases[k][0]):
            if best is not None and bases[position][0] < best[0]:
                continue
            c, similarity = found[position]
            a = self.judge(claim, c, similarity, best_sentence, entities, bases[position])
            judged[position] = a
            key = (a.score, a.similarity, -position, a)
            best = key if best is None or key[:3] > best[:3] else best
        assert best is not None
        if best[3].label is VerdictLabel.UNSUPPORTED:
            return self._contradiction(claim, found, judged, entities, bases) or best[3]
        return best[3]

    def _contradiction(
        self,
        claim: AnalysedText,
        found: list[tuple[Candidate, float]],
        judged: dict[int, Assessment],
        entities: dict[AnalysedText, CheckResult],
        bases: list[tuple[float, float]],
    ) -> Assessment | None:
        """A claim no candidate supports contradicts a candidate it restates but for a trusted conflict
        (``contradicts``), the most similar first, even when another candidate scores higher: a wider
        window that lacks the conflicting sentence outscores a clash's capped score, yet says nothing
        against it. Only when the conflict holds against the whole passage too (its check still clashes
        there: the passage nowhere states the claim's number or polarity)."""
        for position in range(len(found)):
            c, similarity = found[position]
            a = judged.get(position) or self.judge(claim, c, similarity, None, entities, bases[position])
            if a.label is not VerdictLabel.CONTRADICTED or a.conflict is None:
                continue
            check = _CONFLICT_CHECKS.get(a.check)
            if check is not None and check(claim, c.context).clash:
                return a
        return None

    def base(self, claim: AnalysedText, candidate: Candidate, similarity: float) -> tuple[float, float]:
        """The rule score before the checks (the rescaled cosine mixed with coverage), and coverage."""
        p = self._policy
        scaled = (similarity - p.local_similarity_floor) / (
            p.local_similarity_ceiling - p.local_similarity_floor
        )
        covered = coverage(claim, candidate.evidence)
        score = (
            p.local_similarity_weight * min(max(scaled, 0.0), 1.0) + (1 - p.local_similarity_weight) * covered
        )
        return score, covered

    def judge(
        self,
        claim: AnalysedText,
        candidate: Candidate,
        similarity: float,
        best_sentence: float | None = None,
        entities: dict[AnalysedText, CheckResult] | None = None,
        base: tuple[float, float] | None = None,
    ) -> Assessment:
        """Score one piece of evidence: similarity and coverage, then the explicit checks.
        ``entities``: the claim's entity check by passage (``run_checks``), kept across its candidates;
        ``base``: ``base`` of this candidate when already computed."""
        if self._combiner is not None:
            return self._judge_learned(claim, candidate, similarity, best_sentence or similarity)
        p = self._policy
        score, covered = self.base(claim, candidate, similarity) if base is None else base
        results = self.run_checks(claim, candidate, entities)
        clash = next((r for r in results if r.clash), None)
        if clash is not None:
            return self._clash(clash, min(score, p.clash_score), claim, candidate, similarity)
        missing = [r for r in results if r.outcome is CheckOutcome.MISSING]
        for result in missing:
            score *= self._penalty(result.name)
        label = VerdictLabel.SUPPORTED if score >= p.support_threshold else VerdictLabel.UNSUPPORTED
        unsupported = bool(missing) and label is VerdictLabel.UNSUPPORTED
        check = missing[0].verdict_check if unsupported else VerdictCheck.SIMILARITY
        reason = missing[0].detail if missing else f"similarity {similarity:.2f}, coverage {covered:.2f}"
        return Assessment(score, label, check, reason, candidate, similarity)

    def _judge_learned(
        self, claim: AnalysedText, candidate: Candidate, similarity: float, best_sentence: float
    ) -> Assessment:
        """The learned combiner's probability is the score; hard clashes with close evidence stay final."""
        assert self._combiner is not None
        p = self._policy
        results = self.run_checks(claim, candidate)
        score = self._combiner.probability(
            features(claim, candidate.evidence, similarity, best_sentence, results)
        )
        hard = next((r for r in results if r.clash and r.name in HARD_CLASHES), None)
        if hard is not None and contradicts(hard, similarity, p, claim, candidate.evidence):
            return self._clash(hard, min(score, p.clash_score), claim, candidate, similarity)
        label = VerdictLabel.SUPPORTED if score >= p.support_threshold else VerdictLabel.UNSUPPORTED
        failed = next((r for r in results if r.clash), None) or next(
            (r for r in results if r.outcome is CheckOutcome.MISSING), None
        )
        if label is VerdictLabel.UNSUPPORTED and failed is not None:
            return Assessment(score, label, failed.verdict_check, failed.detail, candidate, similarity)
        covered = coverage(claim, candidate.evidence)
        reason = f"similarity {similarity:.2f}, coverage {covered:.2f}, combiner {score:.2f}"
        return Assessment(score, label, VerdictCheck.SIMILARITY, reason, candidate, similarity)

    def _clash(
        self,
        result: CheckResult,
        score: float,
        claim: AnalysedText,
        candidate: Candidate,
        similarity: float,
    ) -> Assessment:
        """A clash is a contradiction only where contradictions were measured to hold
        (``contradicts``); any other clash leaves the claim undecided, its reason naming the clash."""
        if contradicts(result, similarity, self._policy, claim, candidate.evidence):
            return Assessment(
                score,
                VerdictLabel.CONTRADICTED,
                result.verdict_check,
                result.detail,
                candidate,
                similarity,
                result.conflict,
            )
        reason = f"{result.detail} (a possible conflict, not decided locally)"
        return Assessment(
            score, VerdictLabel.UNSUPPORTED, result.verdict_check, reason, candidate, similarity
        )

    def run_checks(
        self,
        claim: AnalysedText,
        candidate: Candidate,
        entities: dict[AnalysedText, CheckResult] | None = None,
    ) -> list[CheckResult]:
        """The claim's form (``checks/form.py``: an incomplete statement is never supported here);
        numbers, polarity and quantifiers against the candidate; entities against the whole passage
        (the same for every candidate of the passage: ``entities`` keeps it by passage, for one claim)."""
        evidence = candidate.evidence
        context = candidate.context
        known = None if entities is None else entities.get(context)
        entity = check_entities(claim, context) if known is None else known
        if entities is not None:
            entities[context] = entity
        return [
            self._form.run(claim),
            check_numbers(claim, evidence),
            check_negation(claim, evidence),
            check_antonyms(claim, evidence),
            check_quantifier(claim, evidence),
            entity,
            check_roles(claim, evidence),
        ]

    def _penalty(self, name: CheckName) -> float:
        p = self._policy
        return {
            CheckName.NUMBER: p.missing_number_penalty,
            CheckName.ENTITY: p.missing_entity_penalty,
            CheckName.QUANTIFIER: p.missing_quantifier_penalty,
            CheckName.FORM: 0.0,
        }.get(name, 1.0)
