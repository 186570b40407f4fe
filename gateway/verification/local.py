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
   something merely missing multiplies the score by a penalty. The best candidate wins
   (``evidence_judge.py``: ``EvidenceJudge``).

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

import anyio.to_thread
import numpy as np
from cachetools import LRUCache

from gateway.domain import ClaimToCheck, Passage, Span, Vector, Verdict, VerdictLabel
from gateway.errors import VerifierError
from gateway.text import strip_markers
from gateway.verification.candidates import (
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
from gateway.verification.checks.analysis import Analyses
from gateway.verification.checks.data import CheckData
from gateway.verification.checks.form import FormCheck
from gateway.verification.combiner import LogisticCombiner, features
from gateway.verification.evidence_judge import Assessment, EvidenceJudge
from gateway.verification.policy import VerificationPolicy
from gateway.vocabulary import VerdictCheck, VerifierMethod

PASSAGE_CACHE_SIZE = 2048
"""Passages whose candidate windows and vectors are kept between requests (keyed by id and text)."""


class LocalEntailmentVerifier:
    """Verifier protocol: MiniLM evidence retrieval plus number, negation, quantifier and entity checks."""

    name = VerifierMethod.LOCAL

    def __init__(
        self, embedder: TextEncoder, policy: VerificationPolicy, data: CheckData | None = None
    ) -> None:
        """``data``: the checks' word data (None: read and validated now, at start-up)."""
        self.data = CheckData.load() if data is None else data
        self._embedder = embedder
        self._policy = policy
        combiner = LogisticCombiner.load() if policy.local_combiner == "learned" else None
        self.evidence_judge = EvidenceJudge(policy, FormCheck.of(self.data.words.lexicon), combiner)
        """Scores each candidate and picks the claim's best (``evidence_judge.py``)."""
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
        return self.evidence_judge.best(analysed, found, best_sentence)

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
        results = self.evidence_judge.run_checks(analysed, found)
        return features(analysed, found.evidence, float(similarities.max()), best_sentence, results)
