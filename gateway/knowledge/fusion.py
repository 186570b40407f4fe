"""Fusing ranked lists and re-ranking by sentence windows: pure functions, no I/O.

Ranking and the relevance score are kept apart on purpose:

* the *order* of hybrid results is reciprocal rank fusion (RRF) of the dense and the lexical lists,
  optionally re-ordered by MiniLM cosine on the passage's sentence windows;
* the *score* a passage carries (``Passage.score``, what the relevance gate compares with
  ``retrieval.min_relevance``) is always the cosine similarity between the question and the
  passage embedding, floored at 0. That is exactly the dense-only scale the gate was calibrated on,
  so adding the lexical retriever can change which passages are shown, never what a score means.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gateway.domain import Vector, unit_rows

RRF_K = 60
"""Reciprocal rank fusion constant (Cormack et al. 2009): flattens the advantage of the very top ranks."""


@dataclass(frozen=True)
class Fused:
    record_id: str
    rrf: float
    dense_rank: int | None
    lexical_rank: int | None


def reciprocal_rank_fusion(
    dense: Sequence[str], lexical: Sequence[str], k: int = RRF_K, lexical_weight: float = 1.0
) -> list[Fused]:
    """Records of both lists ordered by sum of ``1 / (k + rank)`` (rank from 1); ties by dense rank."""
    dense_rank = {rid: rank for rank, rid in enumerate(dense, start=1)}
    lexical_rank = {rid: rank for rank, rid in enumerate(lexical, start=1)}
    fused = []
    for rid in dict.fromkeys([*dense, *lexical]):
        d, lx = dense_rank.get(rid), lexical_rank.get(rid)
        score = (1.0 / (k + d) if d else 0.0) + (lexical_weight / (k + lx) if lx else 0.0)
        fused.append(Fused(rid, score, d, lx))
    fused.sort(key=lambda f: (-f.rrf, f.dense_rank or 10**9, f.lexical_rank or 10**9))
    return fused


def fuse_lists(lists: Sequence[Sequence[str]], k: int = RRF_K) -> list[str]:
    """Record ids of all ``lists`` by summed ``1 / (k + rank)``; ties by rank in the first list, then
    the next (with two lists: the order ``reciprocal_rank_fusion`` gives)."""
    return [rid for rid, _ in fused_scores(lists, k)]


def fused_scores(lists: Sequence[Sequence[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    """``fuse_lists`` with each record's summed score."""
    ranks: dict[str, list[int]] = {}
    scores: dict[str, float] = {}
    missing = 10**9
    for position, ranked in enumerate(lists):
        for rank, rid in enumerate(dict.fromkeys(ranked), start=1):
            ranks.setdefault(rid, [missing] * len(lists))[position] = rank
            scores[rid] = scores.get(rid, 0.0) + 1.0 / (k + rank)
    return [(rid, scores[rid]) for rid in sorted(scores, key=lambda rid: (-scores[rid], *ranks[rid]))]


def relevance(cosine: float) -> float:
    """The gate's relevance scale: cosine similarity clipped to [0, 1]."""
    return float(min(1.0, max(0.0, cosine)))


def best_window_cosine(query: Vector, sentence_vectors: Vector | None, width: int = 2) -> float | None:
    """Highest cosine between the query and any window of up to ``width`` consecutive sentences.

    A window's vector is the normalised mean of its sentence vectors: a cheap stand-in for encoding
    the window, which lets one precise sentence of a long passage count for the whole passage.
    """
    if sentence_vectors is None or len(sentence_vectors) == 0:
        return None
    windows = [sentence_vectors]
    for size in range(2, min(width, len(sentence_vectors)) + 1):
        stacked = np.stack([sentence_vectors[i : len(sentence_vectors) - size + 1 + i] for i in range(size)])
        windows.append(unit_rows(stacked.mean(axis=0)))
    matrix = np.concatenate(windows).astype(np.float32)
    return float((matrix @ query).max())
