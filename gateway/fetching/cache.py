"""The fetcher's page cache: a bounded LRU of FetchResults with a TTL, owned by one fetcher."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from gateway.fetching.result import FetchReason, FetchResult


class FetchCache:
    """A bounded LRU of FetchResults with a TTL; owned by one fetcher."""

    def __init__(self, max_entries: int, ttl: float, clock: Callable[[], float]) -> None:
        self._entries: OrderedDict[str, tuple[float, FetchResult]] = OrderedDict()
        self._max = max_entries
        self._ttl = ttl
        self._clock = clock

    def get(self, key: str) -> FetchResult | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        stored_at, result = entry
        if self._clock() - stored_at >= self._ttl:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return result

    def put(self, key: str, result: FetchResult) -> None:
        if self._max <= 0 or self._ttl <= 0:
            return
        self._entries[key] = (self._clock(), result)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()


CACHEABLE_FAILURES = frozenset(
    {FetchReason.HTTP_STATUS, FetchReason.EMPTY_TEXT, FetchReason.UNSUPPORTED_TYPE, FetchReason.TOO_LARGE}
)
"""Failures that are the page's answer (worth reusing); timeouts and refusals are not cached."""
