"""The audit record's JSON view of pipeline values."""

from __future__ import annotations

import datetime as dt
import enum
import json
from dataclasses import dataclass

import numpy as np

from gateway.errors import UpstreamTimeout
from gateway.serialize import to_jsonable


class Colour(enum.Enum):
    RED = "red"


@dataclass(frozen=True)
class Inner:
    colour: Colour
    day: dt.date
    vectors: np.ndarray | None
    score: np.float32


@dataclass(frozen=True)
class Outer:
    items: tuple[Inner, ...]
    counts: dict[int, str]
    error: Exception | None


def test_dataclasses_become_plain_json_with_values_dates_and_no_vectors() -> None:
    inner = Inner(Colour.RED, dt.date(2024, 5, 1), np.ones((2, 3), dtype=np.float32), np.float32(0.5))
    value = to_jsonable(Outer((inner,), {3: "x"}, UpstreamTimeout("too slow")))
    assert json.loads(json.dumps(value)) == {
        "items": [{"colour": "red", "day": "2024-05-01", "vectors": None, "score": 0.5}],
        "counts": {"3": "x"},
        "error": {"type": "UpstreamTimeout", "message": "too slow"},
    }
    assert to_jsonable(ValueError("bad")) == {"type": "ValueError", "message": "bad"}
    assert to_jsonable(None) is None
