"""The tamper-evident chain of the audit trail: one hash chain of *writes* per store.

What is chained, and why. A request's row is written at least twice by design: provisionally
(``incomplete``) before any work, then completed (an upsert of the same row). A chain over rows
would have to be rewritten when a row is completed, which is exactly what it must make impossible.
So the store keeps an append-only log of writes, ``chain``: every ``write`` of a row appends, in the
same transaction, one entry ``(seq, request_id, written_at, content_hash, prev_hash, entry_hash)`` where

- ``content_hash`` is SHA-256 of the row's canonical content as stored (``canonical_content``: every
  summary column and the record text, after the backend's own conversions, ciphertext included, so
  the chain verifies without the encryption key);
- ``prev_hash`` is the ``entry_hash`` of entry ``seq - 1`` (``GENESIS`` for the first entry, or the
  head of the last retention checkpoint);
- ``entry_hash`` is SHA-256 over the other five fields.

``seq`` is assigned in the write's transaction under the store's write lock (SQLite ``BEGIN IMMEDIATE``;
PostgreSQL ``pg_advisory_xact_lock``), as the previous entry's ``seq + 1``: replicas writing at once
form one order, without gaps (a rolled-back write leaves no entry). The row's latest entry proves its
current content; its earlier entries prove what it said before (the provisional row).

A streamed answer's row is written more often: also before each piece of its text leaves
(write-ahead, ``gateway.pipeline.delivery``), once with the whole record before its final chunk, and
with its final outcome after ``[DONE]``. Each write is one more entry; the row keeps only its newest
content and the chain the hash of every earlier one. A stream's ``sent`` only grows, so its final row
holds every text an earlier entry recorded. ``integrity.verify_store`` also lists the rows whose
request never finished (``incomplete``, ``delivering``): not a chain problem (the chain proves what
they say), but what a records officer asks about.

``verify_chain`` walks the entries in ``seq`` order and then the rows, and names each entry or row
that was edited, deleted, inserted or reordered, first problem first. What a chain cannot show by
itself is the loss of its newest entries (the tail): the head (``seq`` and ``entry_hash``) is
exported as a metric and logged periodically, so it can be anchored elsewhere and passed back to
``verify`` (``--expect-head``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

GENESIS = "0" * 64
"""``prev_hash`` of the first entry of a chain that never was pruned."""

ProblemKind = Literal["edited", "deleted", "inserted", "reordered", "checkpoint"]


def utc_text(value: str | dt.datetime) -> str:
    """A timestamp as the chain hashes it: ISO 8601 in UTC (what both backends store, read back)."""
    moment = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).isoformat()


def canonical_content(values: Sequence[Any]) -> str:
    """SHA-256 (hex) of a row's ``ROW_COLUMNS`` values followed by its record text, as stored.

    ``created_at`` (index 1) is normalised to UTC text and ``refused`` (index 4) to a boolean, so
    SQLite's text and integers and PostgreSQL's ``timestamptz`` and ``boolean`` hash alike.
    """
    normal = list(values)
    normal[1] = utc_text(normal[1])
    normal[4] = bool(normal[4])
    text = json.dumps(normal, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry_hash(seq: int, request_id: str, written_at: str, content_hash: str, prev_hash: str) -> str:
    """SHA-256 (hex) of one chain entry's fields."""
    text = json.dumps([seq, request_id, written_at, content_hash, prev_hash], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ChainEntry:
    seq: int
    request_id: str
    written_at: str
    content_hash: str
    prev_hash: str
    entry_hash: str

    @classmethod
    def after(cls, previous: ChainHead, request_id: str, written_at: str, content_hash: str) -> ChainEntry:
        """The entry that follows ``previous`` for a write of ``request_id``."""
        seq = previous.seq + 1
        digest = entry_hash(seq, request_id, written_at, content_hash, previous.entry_hash)
        return cls(seq, request_id, written_at, content_hash, previous.entry_hash, digest)

    def values(self) -> tuple[int, str, str, str, str, str]:
        return (
            self.seq,
            self.request_id,
            self.written_at,
            self.content_hash,
            self.prev_hash,
            self.entry_hash,
        )


@dataclass(frozen=True)
class ChainHead:
    """The newest entry's ``seq`` and ``entry_hash`` (``0`` and ``GENESIS`` for an empty chain)."""

    seq: int
    entry_hash: str

    def text(self) -> str:
        return f"{self.seq}:{self.entry_hash}"

    @classmethod
    def parse(cls, text: str) -> ChainHead:
        """``SEQ:HASH`` as printed by ``audit verify`` and logged as ``audit_chain_head``."""
        seq, _, digest = text.partition(":")
        if not seq.isdigit() or len(digest) != len(GENESIS):
            raise ValueError(f"a chain head is SEQ:SHA256HEX, not {text!r}")
        return cls(int(seq), digest.lower())


EMPTY_HEAD = ChainHead(0, GENESIS)


@dataclass(frozen=True)
class Checkpoint:
    """What a retention prune leaves: the chain up to ``through_seq`` (head ``head_hash``) was verified
    and its entries deleted; ``kept`` is the latest ``[seq, content_hash]`` of each row that stayed
    (legal hold, or written around the cut) and whose entries were deleted with it."""

    through_seq: int
    head_hash: str
    kept: Mapping[str, tuple[int, str]]
    pruned: int
    cutoff: str
    created_at: str
    key_id: str | None
    """The audit key that signed it (HMAC-SHA256); None: a plain SHA-256 hash checkpoint."""

    def body(self) -> str:
        """The canonical text that is signed."""
        return json.dumps(
            {
                "through_seq": self.through_seq,
                "head_hash": self.head_hash,
                "kept": {k: list(v) for k, v in sorted(self.kept.items())},
                "pruned": self.pruned,
                "cutoff": self.cutoff,
                "created_at": self.created_at,
                "key_id": self.key_id,
            },
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_body(cls, body: str) -> Checkpoint:
        data = json.loads(body)
        return cls(
            through_seq=int(data["through_seq"]),
            head_hash=str(data["head_hash"]),
            kept={str(k): (int(v[0]), str(v[1])) for k, v in data["kept"].items()},
            pruned=int(data["pruned"]),
            cutoff=str(data["cutoff"]),
            created_at=str(data["created_at"]),
            key_id=data.get("key_id"),
        )


@dataclass(frozen=True)
class Problem:
    kind: ProblemKind
    detail: str
    seq: int | None = None
    request_id: str | None = None

    def sort_key(self) -> tuple[int, str]:
        return (self.seq if self.seq is not None else 2**62, self.request_id or "")


@dataclass(frozen=True)
class ChainReport:
    entries: int
    rows: int
    head: ChainHead
    problems: tuple[Problem, ...]
    checkpoint: Checkpoint | None = None
    warnings: tuple[str, ...] = field(default=())
    unfinished: tuple[tuple[str, str], ...] = field(default=())
    """``(request_id, outcome)`` of the rows whose request never finished (``incomplete``: nothing was
    sent; ``delivering``: a stream's delivery was not confirmed). Not a chain problem: the chain
    proves what they say; they were in flight while ``verify`` read, or the process stopped."""

    @property
    def intact(self) -> bool:
        return not self.problems


def verify_chain(
    entries: Iterable[ChainEntry],
    rows: Iterable[tuple[str, str]],
    checkpoint: Checkpoint | None = None,
    checkpoint_problem: str | None = None,
    expect_head: ChainHead | None = None,
) -> ChainReport:
    """Check the entries (in ``seq`` order) and the rows' ``(request_id, content_hash)`` against them.

    ``checkpoint`` is the newest retention checkpoint, already authenticated by the caller (which
    passes ``checkpoint_problem`` when its signature does not verify).
    """
    problems: list[Problem] = []
    if checkpoint_problem:
        problems.append(Problem("checkpoint", checkpoint_problem, seq=0))
    expected = ChainHead(checkpoint.through_seq, checkpoint.head_hash) if checkpoint else EMPTY_HEAD
    latest: dict[str, tuple[int, str]] = {}
    count = 0
    for entry in entries:
        count += 1
        recomputed = entry_hash(
            entry.seq, entry.request_id, entry.written_at, entry.content_hash, entry.prev_hash
        )
        if entry.seq <= expected.seq:
            problems.append(
                Problem("inserted", f"chain entry {entry.seq} comes after entry {expected.seq}", entry.seq)
            )
        elif entry.seq > expected.seq + 1:
            missing = (
                f"{expected.seq + 1}"
                if entry.seq == expected.seq + 2
                else f"{expected.seq + 1}-{entry.seq - 1}"
            )
            problems.append(Problem("deleted", f"chain entries {missing} are missing", expected.seq + 1))
        if recomputed != entry.entry_hash:
            problems.append(
                Problem(
                    "edited",
                    f"chain entry {entry.seq} (request {entry.request_id}) does not match its hash",
                    entry.seq,
                    entry.request_id,
                )
            )
        elif entry.prev_hash != expected.entry_hash and entry.seq == expected.seq + 1:
            problems.append(
                Problem(
                    "reordered",
                    f"chain entry {entry.seq} (request {entry.request_id}) does not follow entry "
                    f"{expected.seq}: entries were reordered, inserted or rewritten",
                    entry.seq,
                    entry.request_id,
                )
            )
        if (
            expect_head is not None
            and entry.seq == expect_head.seq
            and entry.entry_hash != expect_head.entry_hash
        ):
            problems.append(
                Problem("edited", f"chain entry {entry.seq} differs from its anchored hash", entry.seq)
            )
        expected = ChainHead(entry.seq, entry.entry_hash)
        latest[entry.request_id] = (entry.seq, entry.content_hash)
    kept = dict(checkpoint.kept) if checkpoint else {}
    seen: set[str] = set()
    row_count = 0
    for request_id, content in rows:
        row_count += 1
        seen.add(request_id)
        known = latest.get(request_id) or kept.get(request_id)
        if known is None:
            problems.append(Problem("inserted", f"request {request_id} has no chain entry", None, request_id))
        elif known[1] != content:
            problems.append(
                Problem(
                    "edited",
                    f"request {request_id} differs from what chain entry {known[0]} recorded",
                    known[0],
                    request_id,
                )
            )
    for request_id, (seq, _) in {**kept, **latest}.items():
        if request_id not in seen:
            problems.append(
                Problem("deleted", f"request {request_id} (chain entry {seq}) was deleted", seq, request_id)
            )
    warnings: list[str] = []
    if expect_head is not None and expected.seq < expect_head.seq:
        problems.append(
            Problem(
                "deleted",
                f"the chain ends at entry {expected.seq} but entry {expect_head.seq} was anchored: "
                "the newest entries were deleted",
                expected.seq + 1,
            )
        )
    elif checkpoint is not None and expect_head is not None and expect_head.seq <= checkpoint.through_seq:
        warnings.append(f"the anchored entry {expect_head.seq} was pruned; it was not compared")
    problems.sort(key=Problem.sort_key)
    if checkpoint is not None and checkpoint.key_id is None:
        warnings.append("the retention checkpoint is a plain hash (no audit key signed it)")
    return ChainReport(count, row_count, expected, tuple(problems), checkpoint, tuple(warnings))


def row_content(values: Sequence[Any]) -> tuple[str, str]:
    """``(request_id, content_hash)`` of one stored row (``ROW_COLUMNS`` values, then the record)."""
    return str(values[0]), canonical_content(values)


def now_text() -> str:
    return dt.datetime.now(dt.UTC).isoformat()
