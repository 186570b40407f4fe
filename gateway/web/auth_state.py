"""Authentication state shared by the access middleware and the login/logout handlers of one app.

* ``SessionRevocations``: session tokens revoked by logout, remembered until they would have expired
  anyway, so a copied cookie stops working the moment its owner logs out.
* ``FailedAuthThrottle``: failed authentications per client address, through a token bucket (the same
  ``TokenBucketLimiter`` as the per-key rate limit, a second instance). An address whose bucket is
  empty gets 429 for every credential it presents, right or wrong, until the bucket refills: guessing
  keys gets no faster by ignoring the 429s.

Both are per process (like the per-key buckets): with several replicas, put them behind a shared
store or pin clients to a replica. Memory is bounded: expired entries are pruned, and at most
``max_entries`` are kept.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

MAX_ENTRIES = 100_000
"""Most revoked sessions or blocked addresses remembered at once."""


class Limiter(Protocol):
    """``TokenBucketLimiter``'s shape: take a token for ``key``; 0.0 or the seconds to wait."""

    def acquire(self, key: str) -> float: ...


class SessionRevocations:
    def __init__(self, clock: Callable[[], float] = time.time, max_entries: int = MAX_ENTRIES) -> None:
        self._clock = clock
        self._max = max_entries
        self._revoked: dict[str, float] = {}
        self._lock = threading.Lock()

    def revoke(self, token_id: str, expires_at: float) -> None:
        """Remember ``token_id`` as revoked until ``expires_at`` (Unix seconds)."""
        with self._lock:
            self._prune()
            if len(self._revoked) >= self._max:  # keep the newest: drop the soonest to expire
                del self._revoked[min(self._revoked, key=self._revoked.__getitem__)]
            self._revoked[token_id] = expires_at

    def is_revoked(self, token_id: str) -> bool:
        with self._lock:
            return token_id in self._revoked

    def _prune(self) -> None:
        now = self._clock()
        for token_id in [t for t, expires in self._revoked.items() if expires < now]:
            del self._revoked[token_id]


class FailedAuthThrottle:
    def __init__(
        self, limiter: Limiter, clock: Callable[[], float] = time.monotonic, max_entries: int = MAX_ENTRIES
    ) -> None:
        self._limiter = limiter
        self._clock = clock
        self._max = max_entries
        self._blocked: dict[str, float] = {}
        self._lock = threading.Lock()

    def blocked_for(self, address: str) -> float:
        """Seconds ``address`` must still wait before it may try a credential again (0.0: it may)."""
        with self._lock:
            until = self._blocked.get(address)
            if until is None:
                return 0.0
            left = until - self._clock()
            if left <= 0:
                del self._blocked[address]
                return 0.0
            return left

    def failed(self, address: str) -> float:
        """Count one failed authentication; returns the seconds the address is now blocked (0.0: none)."""
        wait = self._limiter.acquire(address)
        if wait <= 0:
            return 0.0
        with self._lock:
            now = self._clock()
            if len(self._blocked) >= self._max:
                for key in [k for k, until in self._blocked.items() if until <= now]:
                    del self._blocked[key]
            if len(self._blocked) < self._max:
                self._blocked[address] = now + wait
        return wait
