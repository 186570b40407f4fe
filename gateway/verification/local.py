"""Local entailment: MiniLM finds the evidence, explicit checks decide whether it says the same thing.

No NLI model ships offline, so entailment is approximated in two steps:

1. Retrieval inside the cited passages. Candidates are every sentence and every window of up to
   ``policy.local_window_sentences`` consecutive sentences (a window's vector is the normalised sum of
   its sentences' vectors, so precomputed sentence vectors cover windows too). The claim is embedded
   once, all claims of a request in one batch.
2. Decision on the ``policy.local_candidates`` most similar candidates. The base score mixes the
   cosine (rescaled between ``local_similarity_floor`` and ``local_similarity_ceiling``) with the share
   of the claim's content words the candidate contains; then the checks of ``checks.py`` apply. A clash
   (different number, flipped negation or polarity, stronger quantifier, swapped entity) caps the score
   at ``clash_score`` and is a contradiction when the evidence is otherwise close to the claim;
   something merely missing multiplies the score by a penalty. The best candidate wins.

The score is a calibrated rule, not a probability; ``support_threshold`` turns it into a verdict and
the cascade sends scores inside ``uncertain_band`` to the judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import anyio.to_thread
import numpy as np

from gateway.domain import ClaimToCheck, Evidence, Passage, Span, Vector, Verdict, VerdictLabel
from gateway.errors import VerifierError
from gateway.policy import VerificationPolicy
from gateway.text import sentence_spans, strip_markers
from gateway.verification import checks
from gateway.verification.checks import CheckName, CheckOutcome, CheckResult

SIMILARITY_CHECK = "similarity"
NO_SOURCE_CHECK = "no_source"
NO_EVIDENCE_CHECK = "no_evidence"


class TextEncoder(Protocol):
    """What the verifier needs of ``gateway.knowledge.embedding.Embedder``: unit vectors per text."""

    def encode(self, texts: Sequence[str]) -> Vector: ...


@dataclass(frozen=True)
class Candidate:
    """A sentence or window of consecutive sentences of one cited passage."""

    source_number: int
    passage: Passage
    span: Span
    text: str


@dataclass(frozen=True)
class Assessment:
    score: float
    label: VerdictLabel
    check: str
    reason: str
    candidate: Candidate | None
    similarity: float

    def verdict(self, method: str) -> Verdict:
        evidence = None
        if self.candidate is not None:
            c = self.candidate
            evidence = Evidence(c.source_number, c.passage.id, c.text, c.span)
        return Verdict(self.label, round(self.score, 4), method, self.check, self.reason, evidence)


def passage_sentences(passage: Passage) -> list[tuple[Span, str]]:
    """The passage's sentences: its ingest-time spans, or split now when it has none."""
    if passage.sentence_spans:
        return passage.sentences()
    return [(s, passage.text[s.start : s.end]) for s in sentence_spans(passage.text)]


def _has_vectors(passage: Passage) -> bool:
    vectors = passage.sentence_vectors
    return (
        vectors is not None
        and passage.sentence_spans != ()
        and vectors.shape[0] == len(passage.sentence_spans)
    )


def windows(count: int, longest: int) -> list[tuple[int, int]]:
    """(first, last-exclusive) sentence indices of every window of 1..``longest`` sentences."""
    return [(i, i + n) for n in range(1, longest + 1) for i in range(count - n + 1)]


def window_vectors(sentence_vectors: Vector, spans: Sequence[tuple[int, int]]) -> Vector:
    """Normalised sum of each window's sentence vectors."""
    summed = np.stack([sentence_vectors[a:b].sum(axis=0) for a, b in spans]).astype(np.float32)
    norms = np.linalg.norm(summed, axis=1, keepdims=True)
    return np.asarray(summed / np.maximum(norms, np.float32(1e-12)), dtype=np.float32)


class LocalEntailmentVerifier:
    """Verifier protocol: MiniLM evidence retrieval plus number, negation, quantifier and entity checks."""

    name = "local"

    def __init__(self, embedder: TextEncoder, policy: VerificationPolicy) -> None:
        self._embedder = embedder
        self._policy = policy

    async def verify(self, claims: Sequence[ClaimToCheck]) -> list[Verdict]:
        """Raises VerifierError when the encoder fails: no claim can then be judged at all."""
        try:
            assessments = await anyio.to_thread.run_sync(self.assess_all, list(claims))
        except (RuntimeError, ValueError, OSError) as err:
            raise VerifierError.from_exception(self.name, err) from err
        return [a.verdict(self.name) for a in assessments]

    def assess_all(self, claims: Sequence[ClaimToCheck]) -> list[Assessment]:
        """Assess every claim; one encoder call for all claim texts and all passages lacking vectors."""
        if not claims:
            return []
        texts = [strip_markers(c.text) for c in claims]
        sentence_vectors = self._encode(texts, claims)
        claim_vectors = sentence_vectors.pop("")
        return [
            self.assess(text, claim_vectors[i], claim.sources, sentence_vectors)
            for i, (text, claim) in enumerate(zip(texts, claims, strict=True))
        ]

    def _encode(self, texts: list[str], claims: Sequence[ClaimToCheck]) -> dict[str, Vector]:
        """Claim vectors under key ``""``, and sentence vectors of each passage (by id) lacking them."""
        pending: dict[str, list[str]] = {}
        vectors: dict[str, Vector] = {}
        for claim in claims:
            for _, passage in claim.sources:
                if passage.id in pending or passage.id in vectors:
                    continue
                if _has_vectors(passage):
                    assert passage.sentence_vectors is not None
                    vectors[passage.id] = passage.sentence_vectors
                else:
                    pending[passage.id] = [t for _, t in passage_sentences(passage)]
        batch = list(texts) + [s for sentences in pending.values() for s in sentences]
        encoded = self._embedder.encode(batch)
        vectors[""] = encoded[: len(texts)]
        offset = len(texts)
        for pid, sentences in pending.items():
            vectors[pid] = encoded[offset : offset + len(sentences)]
            offset += len(sentences)
        return vectors

    def assess(
        self,
        claim: str,
        claim_vector: Vector,
        sources: Sequence[tuple[int, Passage]],
        sentence_vectors: dict[str, Vector],
    ) -> Assessment:
        if not sources:
            return Assessment(
                0.0, VerdictLabel.UNSUPPORTED, NO_SOURCE_CHECK, "the claim cites no source", None, 0.0
            )
        candidates, vectors = self._candidates(sources, sentence_vectors)
        if not candidates:
            return Assessment(
                0.0, VerdictLabel.UNSUPPORTED, NO_EVIDENCE_CHECK, "the cited source has no text", None, 0.0
            )
        similarities = vectors @ claim_vector
        top = np.argsort(-similarities)[: self._policy.local_candidates]
        assessed = [self.judge_candidate(claim, candidates[i], float(similarities[i])) for i in top]
        return max(assessed, key=lambda a: (a.score, a.similarity))

    def _candidates(
        self, sources: Sequence[tuple[int, Passage]], sentence_vectors: dict[str, Vector]
    ) -> tuple[list[Candidate], Vector]:
        candidates: list[Candidate] = []
        blocks: list[Vector] = []
        for number, passage in sources:
            sentences = passage_sentences(passage)
            if not sentences:
                continue
            spans = windows(len(sentences), self._policy.local_window_sentences)
            for a, b in spans:
                span = Span(sentences[a][0].start, sentences[b - 1][0].end)
                candidates.append(Candidate(number, passage, span, passage.text[span.start : span.end]))
            blocks.append(window_vectors(sentence_vectors[passage.id], spans))
        if not blocks:
            return [], np.zeros((0, 0), dtype=np.float32)
        return candidates, np.concatenate(blocks)

    def judge_candidate(self, claim: str, candidate: Candidate, similarity: float) -> Assessment:
        """Score one piece of evidence: similarity and coverage, then the explicit checks."""
        p = self._policy
        scaled = (similarity - p.local_similarity_floor) / (
            p.local_similarity_ceiling - p.local_similarity_floor
        )
        covered = checks.coverage(claim, candidate.text)
        score = (
            p.local_similarity_weight * min(max(scaled, 0.0), 1.0) + (1 - p.local_similarity_weight) * covered
        )
        results = self._run_checks(claim, candidate)
        clash = next((r for r in results if r.clash), None)
        if clash is not None:
            contradicted = similarity >= p.contradiction_similarity
            label = VerdictLabel.CONTRADICTED if contradicted else VerdictLabel.UNSUPPORTED
            return Assessment(
                min(score, p.clash_score), label, clash.name.value, clash.detail, candidate, similarity
            )
        missing = [r for r in results if r.outcome is CheckOutcome.MISSING]
        for result in missing:
            score *= self._penalty(result.name)
        label = VerdictLabel.SUPPORTED if score >= p.support_threshold else VerdictLabel.UNSUPPORTED
        check = missing[0].name.value if missing and label is VerdictLabel.UNSUPPORTED else SIMILARITY_CHECK
        reason = missing[0].detail if missing else f"similarity {similarity:.2f}, coverage {covered:.2f}"
        return Assessment(score, label, check, reason, candidate, similarity)

    def _run_checks(self, claim: str, candidate: Candidate) -> list[CheckResult]:
        """Numbers, polarity and quantifiers against the candidate; entities against the whole passage."""
        text = candidate.text
        return [
            checks.check_numbers(claim, text),
            checks.check_negation(claim, text),
            checks.check_antonyms(claim, text),
            checks.check_quantifier(claim, text),
            checks.check_entities(claim, candidate.passage.text),
        ]

    def _penalty(self, name: CheckName) -> float:
        p = self._policy
        return {
            CheckName.NUMBER: p.missing_number_penalty,
            CheckName.ENTITY: p.missing_entity_penalty,
            CheckName.QUANTIFIER: p.missing_quantifier_penalty,
        }.get(name, 1.0)
