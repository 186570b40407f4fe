"""The fetcher's page cache: a bounded LRU of FetchResults with a TTL, owned by one fetcher."""

from __future__ import annotations

from collections.abc import Callable

from cachetools import TTLCache

from gateway.fetching.fetched import FetchResult
from gateway.vocabulary import FetchReason


class FetchCache:
    """A bounded LRU of FetchResults with a TTL (cachetools' ``TTLCache`` on the fetcher's clock);
    owned by one fetcher. Nothing is kept when the size or the TTL is 0."""

    def __init__(self, max_entries: int, ttl: float, clock: Callable[[], float]) -> None:
        self._enabled = max_entries > 0 and ttl > 0
        self._entries: TTLCache[str, FetchResult] = TTLCache(
            maxsize=max(1, max_entries), ttl=max(ttl, 0.0), timer=clock
        )

    def get(self, key: str) -> FetchResult | None:
        return self._entries.get(key)

    def put(self, key: str, result: FetchResult) -> None:
        if self._enabled:
            self._entries[key] = result

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()


CACHEABLE_FAILURES = frozenset(
    {FetchReason.HTTP_STATUS, FetchReason.EMPTY_TEXT, FetchReason.UNSUPPORTED_TYPE, FetchReason.TOO_LARGE}
)
"""Failures that are the page's answer (worth reusing); timeouts and refusals are not cached."""
