"""Retrieval thresholds: how many passages, and the relevance gates (``thresholds.yaml: retrieval``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from gateway.validation import UnitInterval


@dataclass(frozen=True)
class RetrievalPolicy:
    top_k: Annotated[int, Field(ge=1, le=50)] = 5
    """Passages handed to the model."""
    candidates: Annotated[int, Field(ge=1, le=500)] = 30
    """Candidates fetched from each retriever before fusion."""
    min_relevance: UnitInterval = 0.35
    """Relevance gate: refuse when the best passage's relevance is below this (0..1)."""
    min_passage_relevance: UnitInterval = 0.2
    """Passages below this relevance are dropped from the context even when others pass."""
