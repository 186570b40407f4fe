"""The passage-record cache over Chroma's collections: bounded, and a read larger than it still answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gateway.knowledge.record_cache import RecordCache

DIMENSIONS = 4


class Collection:
    """What the cache reads of a Chroma collection: ``get`` by ids (unknown ids left out)."""

    def __init__(self, rows: dict[str, dict[str, Any]]) -> None:
        self.rows = rows

    def get(self, ids: Sequence[str], include: Sequence[str]) -> dict[str, list[Any]]:
        found = [rid for rid in ids if rid in self.rows]
        return {
            "ids": found,
            "documents": [f"text of {rid}" for rid in found],
            "metadatas": [self.rows[rid] for rid in found],
            "embeddings": [[1.0, 0.0, 0.0, 0.0] for _ in found],
        }


def test_record_cache_is_bounded() -> None:
    ids = ["gout:0.0@a", "gout:0.1@a"]
    passages = Collection({rid: {"document_id": "gout"} for rid in ids})
    cache = RecordCache(passages, Collection({}), DIMENSIONS, size=1)
    assert set(cache.get(ids)) == set(ids)  # a read larger than the cache still answers in full
    assert len(cache) == 1
    assert cache.get(["gout:9.9@missing"]) == {}
    assert cache.get(ids)[ids[0]].text == "text of gout:0.0@a"
