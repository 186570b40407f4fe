"""Plain-JSON views of the pipeline's dataclasses, for the audit record and debugging."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from typing import Any

import numpy as np


def to_jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_jsonable(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.name != "sentence_vectors"
        }
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return None
    if isinstance(value, BaseException):
        return {"type": type(value).__name__, "message": str(value)}
    return value
