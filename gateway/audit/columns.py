"""The summary columns of an audit row (``base`` re-exports them; ``ledger`` reads them too)."""

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
