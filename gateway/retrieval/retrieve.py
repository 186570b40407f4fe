"""Stage 2: retrieve passages and judge whether any of them is relevant enough to answer from."""

from __future__ import annotations

from gateway.domain import Retrieval
from gateway.errors import StoreError
from gateway.knowledge.rewrite import QueryRewriter
from gateway.knowledge.store import KnowledgeStore
from gateway.retrieval.policy import RetrievalPolicy


async def retrieve(
    question: str, store: KnowledgeStore, policy: RetrievalPolicy, rewriter: QueryRewriter | None = None
) -> Retrieval:
    """Top-k passages above the per-passage floor; ``relevant`` is the context-relevance gate. With a
    ``rewriter``, the model's restatement of the question is searched along with it (fails open)."""
    if rewriter is not None:
        question = (await rewriter.rewrite(question)).query
    found = await store.search(question, policy.top_k)
    if not found and await store.count() == 0:  # an empty store is a store fault, not "no context"
        raise StoreError("the knowledge store holds no passages")
    best = max((p.score for p in found), default=0.0)
    kept = tuple(p for p in found if p.score >= policy.min_passage_relevance)
    return Retrieval(passages=kept, best_relevance=best, relevant=bool(kept) and best >= policy.min_relevance)


class Retriever:
    """The retrieve stage, built once at start-up: the store it searches, the retrieval policy, and the
    upstream model's query rewrite when configured (``bootstrap``); tests swap it through here."""

    def __init__(
        self, store: KnowledgeStore, policy: RetrievalPolicy, rewriter: QueryRewriter | None = None
    ) -> None:
        self.store = store
        self.policy = policy
        self.rewriter = rewriter

    async def run(self, question: str) -> Retrieval:
        return await retrieve(question, self.store, self.policy, self.rewriter)

    async def search(self, question: str) -> Retrieval:
        """The stage without the query rewrite: asks no model (the serving process's warm-up)."""
        return await retrieve(question, self.store, self.policy)
