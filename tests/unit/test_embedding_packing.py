"""Small torch calls run padding-free: texts packed end to end into rows (gateway/models/packing.py)."""

from __future__ import annotations

import pytest

from gateway.models.packing import PackedForward, pack_rows


def test_every_text_is_placed_once_and_rows_hold_their_capacity() -> None:
    lengths = [30, 28, 50, 31, 29, 30, 27, 32]
    rows = pack_rows(lengths, 64)
    assert sorted(i for row in rows for i in row) == list(range(len(lengths)))
    assert all(sum(lengths[i] for i in row) <= 64 for row in rows)
    assert len(rows) < len(lengths)  # short texts share rows


def test_a_text_longer_than_the_capacity_gets_a_row_of_its_own() -> None:
    rows = pack_rows([10, 300, 12], 64)
    assert [1] in rows
    assert sorted(i for row in rows for i in row) == [0, 1, 2]
    assert pack_rows([], 64) == []


def test_a_pipeline_other_than_mean_pooling_is_refused() -> None:
    class Transformer:
        """Stands for sentence-transformers' module of that name: only the class name is read."""

    class Pooling:
        pooling_mode = "cls"

    class Normalize:
        """Stands for sentence-transformers' module of that name: only the class name is read."""

    with pytest.raises(ValueError, match="mean-pooled"):
        PackedForward([Transformer(), Pooling(), Normalize()])
    assert PackedForward.open([Transformer(), Pooling(), Normalize()]) is None
