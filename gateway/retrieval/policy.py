"""Retrieval thresholds: how many passages, and the relevance gates (``thresholds.yaml: retrieval``)."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.validation import check_range


@dataclass(frozen=True)
class RetrievalPolicy:
    top_k: int = 5
    """Passages handed to the model."""
    candidates: int = 30
    """Candidates fetched from each retriever before fusion."""
    min_relevance: float = 0.35
    """Relevance gate: refuse when the best passage's relevance is below this (0..1)."""
    min_passage_relevance: float = 0.2
    """Passages below this relevance are dropped from the context even when others pass."""

    def __post_init__(self) -> None:
        check_range(self, "top_k", 1, 50)
        check_range(self, "candidates", 1, 500)
        check_range(self, "min_relevance", 0.0, 1.0)
        check_range(self, "min_passage_relevance", 0.0, 1.0)
