"""What a knowledge-store search may be asked: filters on tier and organisation, and how it ranks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.settings import RetrievalMode


@dataclass(frozen=True)
class SearchFilters:
    """Restrict a search to passages of the listed tiers and/or organisations (empty: no limit)."""

    tiers: tuple[str, ...] = ()
    orgs: tuple[str, ...] = ()

    def where(self) -> dict[str, Any] | None:
        clauses: list[dict[str, Any]] = []
        if self.tiers:
            clauses.append({"tier": {"$in": list(self.tiers)}})
        if self.orgs:
            clauses.append({"org": {"$in": list(self.orgs)}})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}


@dataclass(frozen=True)
class SearchOptions:
    """How ``search`` ranks. Defaults are what the gateway serves with."""

    mode: RetrievalMode = "hybrid"
    """hybrid (dense + BM25, fused), dense only, or lexical only."""
    candidates: int = 30
    """Candidates taken from each retriever before fusion."""
    rerank: bool = False
    """Re-order the fused top ``rerank_depth`` by MiniLM cosine on sentence windows."""
    rerank_depth: int = 20
    """Fused candidates the re-ranker looks at."""
    focus: bool = True
    """Search the planned queries of the message (question focus, spelling, synonyms; query.py)
    when the store has a planner; off: the message as it is."""
    question_matching: bool = True
    """Also match the query against document titles (titles.py), fused with the other lists."""
