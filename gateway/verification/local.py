"""Local entailment: MiniLM finds the evidence, explicit checks decide whether it says the same thing.

No NLI model ships offline, so entailment is approximated in steps:

0. Verbatim rule. A claim that is exactly (up to case, quotes, spacing and final punctuation) one
   sentence or a run of consecutive sentences of a cited passage is supported, without being encoded.
1. Retrieval inside the cited passages. Candidates are every sentence and every window of up to
   ``policy.local_window_sentences`` consecutive sentences (a window's vector is the normalised sum of
   its sentences' vectors, so precomputed sentence vectors cover windows too). The claim is embedded
   once, all claims of a request in one batch.
2. Decision on the ``policy.local_candidates`` most similar candidates. The base score mixes the
   cosine (rescaled between ``local_similarity_floor`` and ``local_similarity_ceiling``) with the share
   of the claim's content words the candidate contains; then the checks (``checks`` package) apply. A
   clash (different number, flipped negation or polarity, stronger quantifier, swapped entity) caps the
   score at ``clash_score`` and is a contradiction when the evidence is otherwise close to the claim;
   something merely missing multiplies the score by a penalty. The best candidate wins.

Each passage's candidates (windows, their vectors: ``candidates.py``) are built once and kept in a small
LRU cache.
With ``local_combiner: learned`` the hand-weighted mix is replaced by the logistic regression of
``combiner.py`` (a number or negation clash with close evidence still contradicts); it is opt-in
because it generalised worse than the rules on the dev sets (docs/verification.md).

The rule score is a calibrated rule, not a probability; ``support_threshold`` turns it into a verdict and
the cascade sends scores inside ``uncertain_band`` to the judge.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import anyio.to_thread
import numpy as np
from cachetools import LRUCache

from gateway.domain import (
    ClaimToCheck,
    Conflict,
    Evidence,
    Passage,
    Span,
    Vector,
    Verdict,
    VerdictLabel,
)
from gateway.errors import VerifierError
from gateway.text import strip_markers
from gateway.verification.binding import unshared_words
from gateway.verification.candidates import (
    Candidate,
    PassageIndex,
    TextEncoder,
    candidate,
    encode_distinct,
    has_sentences,
    has_vectors,
    index_passage,
    passage_sentences,
    windows,
)
from gateway.verification.checks.analysis import AnalysedText, Analyses
from gateway.verification.checks.data import CheckData
from gateway.verification.checks.entities import check_entities
from gateway.verification.checks.form import FormCheck
from gateway.verification.checks.numbers import check_numbers
from gateway.verification.checks.polarity import check_antonyms, check_negation
from gateway.verification.checks.quantifiers import check_quantifier
from gateway.verification.checks.results import CheckName, CheckOutcome, CheckResult
from gateway.verification.checks.roles import check_roles
from gateway.verification.checks.words import coverage
from gateway.verification.combiner import LogisticCombiner, features
from gateway.verification.policy import VerificationPolicy
from gateway.vocabulary import VerdictCheck, VerifierMethod

HARD_CLASHES = frozenset({CheckName.NUMBER, CheckName.NEGATION})
"""Clashes that stay contradictions whatever the learned combiner says (fail closed)."""
PASSAGE_CACHE_SIZE = 2048
"""Passages whose candidate windows and vectors are kept between requests (keyed by id and text)."""


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
    restates the evidence except for the conflict. That is the operating point at which >= 90% of
    contradicted claims were truly not supported on every dev set (docs/verification.md)."""
    conflict = result.conflict
    if (
        conflict is None
        or conflict.kind.value not in policy.contradiction_kinds
        or similarity < policy.contradiction_similarity
    ):
        return False
    return len(unshared_words(claim, evidence, conflict)) <= policy.contradiction_max_unshared_words


class LocalEntailmentVerifier:
    """Verifier protocol: MiniLM evidence retrieval plus number, negation, quantifier and entity checks."""

    name = VerifierMethod.LOCAL

    def __init__(
        self, embedder: TextEncoder, policy: VerificationPolicy, data: CheckData | None = None
    ) -> None:
        """``data``: the checks' word data (None: read and validated now, at start-up)."""
        self.data = CheckData.load() if data is None else data
        self._form = FormCheck.of(self.data.words.lexicon)
        self._embedder = embedder
        self._policy = policy
        self._combiner = LogisticCombiner.load() if policy.local_combiner == "learned" else None
        self._indexes: LRUCache[tuple[str, int, int], PassageIndex] = LRUCache(maxsize=PASSAGE_CACHE_SIZE)
        self._lock = threading.Lock()

    async def verify(self, claims: Sequence[ClaimToCheck], analyses: Analyses | None = None) -> list[Verdict]:
        """Raises VerifierError when the encoder fails: no claim can then be judged at all.

        ``analyses``: the request's text analyses, to share with a later stage (the cascade's binding).
        """
        try:
            assessments = await anyio.to_thread.run_sync(self.assess_all, list(claims), analyses)
        except (RuntimeError, ValueError, OSError) as err:
            raise VerifierError(f"the {self.name} verifier failed: {type(err).__name__}: {err}") from err
        return [a.verdict(self.name) for a in assessments]

    def assess_all(
        self, claims: Sequence[ClaimToCheck], analyses: Analyses | None = None
    ) -> list[Assessment]:
        """Assess every claim; one encoder call for all claim texts and all passages lacking vectors.

        A claim stated verbatim by a cited passage (a sentence or consecutive sentences) is supported
        without being encoded at all, and a claim with nothing to compare it with (no cited passage
        with a sentence: ``no_source`` / ``no_evidence``) is not encoded either. Every text (claim,
        candidate, passage) is analysed once.
        """
        if not claims:
            return []
        analyses = Analyses(self.data) if analyses is None else analyses
        texts = [strip_markers(c.text) for c in claims]
        verbatim = [
            self._verbatim(text, claim.sources, analyses) for text, claim in zip(texts, claims, strict=True)
        ]
        encoded = [v is None and has_sentences(c) for c, v in zip(claims, verbatim, strict=True)]
        pending = [c for c, e in zip(claims, encoded, strict=True) if e]
        sentence_vectors = self._encode([t for t, e in zip(texts, encoded, strict=True) if e], pending)
        claim_vectors = iter(sentence_vectors.pop(""))
        unused = np.zeros(0, dtype=np.float32)  # decided without a similarity: never read
        return [
            v
            if v is not None
            else self.assess(
                text,
                next(claim_vectors) if e else unused,
                claim.sources,
                sentence_vectors,
                analyses,
                verbatim_checked=True,
            )
            for text, claim, v, e in zip(texts, claims, verbatim, encoded, strict=True)
        ]

    def _verbatim(
        self, claim: str, sources: Sequence[tuple[int, Passage]], analyses: Analyses
    ) -> Assessment | None:
        key = analyses(claim).verbatim_key
        if not key:
            return None
        for number, passage in sources:
            if key not in analyses(passage.text).verbatim_key:
                continue
            sentences = passage_sentences(passage)
            for a, b in windows(len(sentences), self._policy.local_window_sentences):
                span = Span(sentences[a][0].start, sentences[b - 1][0].end)
                text = passage.text[span.start : span.end]
                if analyses(text).verbatim_key == key:
                    return Assessment(
                        1.0,
                        VerdictLabel.SUPPORTED,
                        VerdictCheck.VERBATIM,
                        "the source states the claim verbatim",
                        candidate(number, passage, span, text, analyses),
                        1.0,
                    )
        return None

    def _encode(self, texts: list[str], claims: Sequence[ClaimToCheck]) -> dict[str, Vector]:
        """Claim vectors under key ``""``, and sentence vectors of each passage (by id) lacking them.

        Each distinct text goes to the encoder once (``encode_distinct``): a claim repeated in the
        request, a sentence repeated within or across cited passages, a claim that is also a sentence.
        """
        pending: dict[str, list[str]] = {}
        vectors: dict[str, Vector] = {}
        for claim in claims:
            for _, passage in claim.sources:
                if passage.id in pending or passage.id in vectors:
                    continue
                if has_vectors(passage):
                    assert passage.sentence_vectors is not None
                    vectors[passage.id] = passage.sentence_vectors
                elif self._cached_index(passage) is not None:
                    vectors[passage.id] = np.zeros((0, 0), dtype=np.float32)
                else:
                    pending[passage.id] = [t for _, t in passage_sentences(passage)]
        batch = list(texts) + [s for sentences in pending.values() for s in sentences]
        encoded = encode_distinct(self._embedder, batch)
        vectors[""] = encoded[: len(texts)]
        offset = len(texts)
        for pid, sentences in pending.items():
            vectors[pid] = encoded[offset : offset + len(sentences)]
            offset += len(sentences)
        return vectors

    def _key(self, passage: Passage) -> tuple[str, int, int]:
        return (passage.id, hash(passage.text), self._policy.local_window_sentences)

    def _cached_index(self, passage: Passage) -> PassageIndex | None:
        with self._lock:
            return self._indexes.get(self._key(passage))

    def _index(self, passage: Passage, sentence_vectors: dict[str, Vector]) -> PassageIndex:
        """The passage's candidates, built once per passage text and reused across claims and requests."""
        index = self._cached_index(passage)
        if index is not None:
            return index
        vectors = sentence_vectors.get(passage.id)
        if vectors is None or len(vectors) != len(passage_sentences(passage)):
            vectors = self._embedder.encode([t for _, t in passage_sentences(passage)])  # evicted meanwhile
        index = index_passage(passage, vectors, self._policy.local_window_sentences)
        with self._lock:
            self._indexes[self._key(passage)] = index
        return index

    def assess(
        self,
        claim: str,
        claim_vector: Vector,
        sources: Sequence[tuple[int, Passage]],
        sentence_vectors: dict[str, Vector],
        analyses: Analyses | None = None,
        *,
        verbatim_checked: bool = False,
    ) -> Assessment:
        """The best-scoring candidate's assessment; ``analyses`` shares text analyses across claims.
        ``verbatim_checked``: the caller found the claim stated verbatim by no cited passage."""
        analyses = Analyses(self.data) if analyses is None else analyses
        if not sources:
            return Assessment(
                0.0, VerdictLabel.UNSUPPORTED, VerdictCheck.NO_SOURCE, "the claim cites no source", None, 0.0
            )
        verbatim = None if verbatim_checked else self._verbatim(claim, sources, analyses)
        if verbatim is not None:
            return verbatim
        scored = self._similarities(claim_vector, sources, sentence_vectors)
        if scored is None:
            return Assessment(
                0.0,
                VerdictLabel.UNSUPPORTED,
                VerdictCheck.NO_EVIDENCE,
                "the cited source has no text",
                None,
                0.0,
            )
        located, similarities, best_sentence = scored
        top = np.argsort(-similarities)[: self._policy.local_candidates]
        analysed = analyses(claim)
        found = []
        for i in top:
            number, passage, index, j = located[i]
            found.append(
                (candidate(number, passage, index.spans[j], index.texts[j], analyses), float(similarities[i]))
            )
        return self._best(analysed, found, best_sentence)

    def _best(
        self, claim: AnalysedText, found: list[tuple[Candidate, float]], best_sentence: float
    ) -> Assessment:
        """The first candidate (most similar first) of the highest (score, similarity).

        With the rules, a candidate's score never exceeds its base (``_base``: a clash caps it, a
        penalty is at most 1), so a candidate whose base is below a score already judged cannot win and
        is not checked: the candidates are judged by base, highest first, and the winner is the one
        judging every candidate would pick (ties go to the most similar, as before)."""
        entities: dict[AnalysedText, CheckResult] = {}  # candidates of one passage share its result
        if self._combiner is not None:
            assessed = [self.judge_candidate(claim, c, s, best_sentence, entities) for c, s in found]
            return max(assessed, key=lambda a: (a.score, a.similarity))
        bases = [self._base(claim, c, s) for c, s in found]
        best: tuple[float, float, int, Assessment] | None = None
        for position in sorted(range(len(found)), key=lambda k: -bases[k][0]):
            if best is not None and bases[position][0] < best[0]:
                continue
            c, similarity = found[position]
            a = self.judge_candidate(claim, c, similarity, best_sentence, entities, bases[position])
            key = (a.score, a.similarity, -position, a)
            best = key if best is None or key[:3] > best[:3] else best
        assert best is not None
        return best[3]

    def _base(self, claim: AnalysedText, candidate: Candidate, similarity: float) -> tuple[float, float]:
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

    def _similarities(
        self,
        claim_vector: Vector,
        sources: Sequence[tuple[int, Passage]],
        sentence_vectors: dict[str, Vector],
    ) -> tuple[list[tuple[int, Passage, PassageIndex, int]], Vector, float] | None:
        """Every candidate of every cited passage, its cosine to the claim, and the best sentence's."""
        located: list[tuple[int, Passage, PassageIndex, int]] = []
        blocks: list[Vector] = []
        singles: list[np.ndarray] = []
        for number, passage in sources:
            if not passage_sentences(passage):
                continue
            index = self._index(passage, sentence_vectors)
            located += [(number, passage, index, i) for i in range(len(index.texts))]
            blocks.append(index.vectors)
            singles.append(index.singles)
        if not blocks:
            return None
        similarities = np.concatenate(blocks) @ claim_vector
        single = np.concatenate(singles)
        best_sentence = float(similarities[single].max()) if single.any() else float(similarities.max())
        return located, similarities, best_sentence

    def candidate_features(self, claim: ClaimToCheck, claim_vector: Vector) -> list[float]:
        """Combiner features of the claim against its most similar candidate (for training)."""
        text = strip_markers(claim.text)
        vectors = {p.id: p.sentence_vectors for _, p in claim.sources if p.sentence_vectors is not None}
        scored = self._similarities(claim_vector, claim.sources, vectors)
        if scored is None:
            raise ValueError("the claim's sources have no sentences")
        located, similarities, best_sentence = scored
        number, passage, index, j = located[int(np.argmax(similarities))]
        analyses = Analyses(self.data)
        analysed = analyses(text)
        found = candidate(number, passage, index.spans[j], index.texts[j], analyses)
        results = self._run_checks(analysed, found)
        return features(analysed, found.evidence, float(similarities.max()), best_sentence, results)

    def judge_candidate(
        self,
        claim: AnalysedText,
        candidate: Candidate,
        similarity: float,
        best_sentence: float | None = None,
        entities: dict[AnalysedText, CheckResult] | None = None,
        base: tuple[float, float] | None = None,
    ) -> Assessment:
        """Score one piece of evidence: similarity and coverage, then the explicit checks.
        ``entities``: the claim's entity check by passage (``_run_checks``), kept across its candidates;
        ``base``: ``_base`` of this candidate when already computed."""
        if self._combiner is not None:
            return self._judge_learned(claim, candidate, similarity, best_sentence or similarity)
        p = self._policy
        score, covered = self._base(claim, candidate, similarity) if base is None else base
        results = self._run_checks(claim, candidate, entities)
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
        results = self._run_checks(claim, candidate)
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

    def _run_checks(
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
