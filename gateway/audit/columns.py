"""The summary columns every audit backend stores beside a record (its own module: the backends and
the chain ledger both read it, and the ledger is below the store protocol)."""

from __future__ import annotations

ROW_COLUMNS = (
    "id",
    "created_at",
    "outcome",
    "scope",
    "refused",
    "reason",
    "claims",
    "rewritten",
    "removed",
    "question",
    "answer",
)
"""The summary columns of a row, in order; ``write`` takes exactly these keys plus the record."""
