"""One value built from another of the same fields: a record from a domain value, and back.

The audit schema restates some domain values (a passage without its vectors, the timings it keeps)
and a run's result restates its state; ``carried`` copies the fields the two share by name, so each
field list is written once, in the class that declares it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def field_names(target: type) -> tuple[str, ...]:
    """The constructor's fields of a dataclass or a msgspec ``Struct``, in declaration order."""
    struct_fields: tuple[str, ...] | None = getattr(target, "__struct_fields__", None)
    if struct_fields is not None:
        return struct_fields
    return tuple(f.name for f in dataclasses.fields(target) if f.init)


def carried(target: type[T], source: object, **given: Any) -> T:
    """A ``target`` whose fields are ``source``'s attributes of the same names, except those ``given``.

    Every field not given must be an attribute of ``source`` (AttributeError otherwise): a field added
    to ``target`` is either carried or stated, never silently left at its default.
    """
    carried_over = {name: getattr(source, name) for name in field_names(target) if name not in given}
    return target(**carried_over, **given)
