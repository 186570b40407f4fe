"""Small torch calls are split into runs of similar length, so one long text does not pad the others."""

from __future__ import annotations

from gateway.models.embedding import length_groups


def test_one_long_text_is_encoded_apart_from_short_ones() -> None:
    lengths = [30, 28, 250, 31, 29, 30, 27, 32]
    groups = length_groups(lengths, call_tokens=40)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    assert [2] in groups
    assert len(groups) == 2


def test_similar_lengths_stay_one_call() -> None:
    groups = length_groups([20, 24, 22, 25, 21, 23, 26, 20], call_tokens=40)
    assert len(groups) == 1
    assert sorted(groups[0]) == list(range(8))


def test_no_call_cost_encodes_each_length_apart() -> None:
    assert len(length_groups([10, 20, 30], call_tokens=0)) == 3
    assert length_groups([], call_tokens=40) == []
