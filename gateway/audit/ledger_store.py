"""The ledger half of an audit store, written once for both databases: the chain head and snapshot,
the records of a period, retention, holds and the access log, forwarded to ``gateway.audit.ledger``.

A backend (``sqlite.py``, ``postgres.py``) states only what differs: its parameter mark (``?`` or
``%s``), its record table, how a moment is bound, and the runners that give ``ledger`` a
``Run`` for reading, for changing what is kept (under the chain's lock) and for logging an access.
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import gateway.audit.ledger as ledger
from gateway.audit.chain import ChainHead, Checkpoint

T = TypeVar("T")


class LedgerStore(ABC):
    """The ``AuditStore`` methods over ``gateway.audit.ledger`` that SQLite and PostgreSQL share."""

    _mark: ClassVar[str]
    """The database driver's parameter placeholder."""
    _table: ClassVar[str]
    """The table of request records the chain covers."""

    @abstractmethod
    def _reading(self, work: Callable[[ledger.Run], T]) -> T:
        """``work`` on a connection that reads."""

    @abstractmethod
    def _changing(self, work: Callable[[ledger.Run], T]) -> T:
        """``work`` in one write transaction holding the chain lock (prune and holds change what is kept)."""

    @abstractmethod
    def _logging(self, work: Callable[[ledger.Run], T]) -> T:
        """``work`` that appends to the access log."""

    def _moment(self, when: dt.datetime) -> Any:
        """``when`` as the database binds it (a timestamp by default)."""
        return when

    def _snapshot(self, run: ledger.Run) -> ledger.ChainSnapshot:
        """The chain, its rows and its newest checkpoint as ``run`` sees them (inside one snapshot)."""
        return ledger.ChainSnapshot(
            entries=ledger.entries(run, self._mark),
            contents=ledger.contents(run, self._mark, self._table),
            checkpoint=ledger.latest_checkpoint(run),
        )

    def chain_head(self) -> ChainHead:
        return self._reading(ledger.head)

    def records_between(self, since: dt.datetime, until: dt.datetime) -> ledger.RecordTexts:
        return self._reading(
            lambda run: list(
                ledger.records(run, self._mark, self._table, self._moment(since), self._moment(until))
            )
        )

    def prune(
        self, cutoff: dt.datetime, sign: Callable[[Checkpoint], tuple[Checkpoint, str]]
    ) -> ledger.PruneResult:
        return self._changing(
            lambda run: ledger.prune(
                run, self._mark, self._table, self._moment(cutoff), cutoff.isoformat(), sign
            )
        )

    def hold(self, request_id: str, reason: str, held_by: str) -> None:
        self._changing(lambda run: ledger.hold(run, self._mark, request_id, reason, held_by))

    def release(self, request_id: str) -> bool:
        return self._changing(lambda run: ledger.release(run, self._mark, request_id))

    def holds(self) -> ledger.Holds:
        return self._reading(ledger.holds)

    def log_access(self, entry: ledger.AccessEntry) -> None:
        self._logging(lambda run: ledger.log_access(run, self._mark, entry))

    def access_log(self, limit: int, offset: int = 0) -> ledger.AccessEntries:
        return self._reading(lambda run: ledger.access_entries(run, self._mark, limit, offset))
