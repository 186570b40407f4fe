"""YAML to typed, checked dataclasses: every unknown key, wrong type or out-of-range value is a
ConfigurationError naming the file, the dotted key and the reason."""

from __future__ import annotations

import dataclasses
import re
import types
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

import yaml

from gateway.errors import ConfigurationError

T = TypeVar("T")


def load_file(path: Path, cls: type[T]) -> T:
    if not path.is_file():
        raise ConfigurationError(str(path), "-", "file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ConfigurationError(str(path), "-", f"not valid YAML: {err}") from None
    return build(cls, data or {}, str(path), "")


def build(cls: type[T], data: Any, source: str, path: str) -> T:
    """Build dataclass ``cls`` from parsed YAML, checking every key and type."""
    if not isinstance(data, dict):
        raise ConfigurationError(source, path or "-", f"expected a mapping, got {type(data).__name__}")
    hints = get_type_hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = set(data) - set(known)
    if unknown:
        key = _join(path, sorted(unknown)[0])
        raise ConfigurationError(source, key, f"unknown key; expected one of {', '.join(known)}")
    values = {name: _coerce(hints[name], data[name], source, _join(path, name)) for name in data}
    try:
        return cls(**values)
    except ConfigurationError as err:
        raise ConfigurationError(source, _join(path, err.key), err.reason) from None
    except TypeError as err:
        raise ConfigurationError(source, path or "-", str(err)) from None


def _coerce(hint: Any, value: Any, source: str, path: str) -> Any:
    origin = get_origin(hint)
    args = get_args(hint)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        return _coerce(next(a for a in args if a is not type(None)), value, source, path)
    if dataclasses.is_dataclass(hint):
        return build(hint, value, source, path)  # type: ignore[arg-type]
    if origin is tuple:
        if not isinstance(value, list):
            raise ConfigurationError(source, path, f"expected a list, got {type(value).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(args[0], v, source, f"{path}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise ConfigurationError(source, path, f"expected a list of {len(args)} items")
        return tuple(
            _coerce(a, v, source, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, value, strict=True))
        )
    if origin is Literal:
        if value not in args:
            raise ConfigurationError(source, path, f"must be one of {', '.join(map(str, args))}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigurationError(source, path, f"expected a number, got {value!r}")
        return float(value)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigurationError(source, path, f"expected an integer, got {value!r}")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigurationError(source, path, f"expected true or false, got {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise ConfigurationError(source, path, f"expected text, got {value!r}")
        return str(value)
    if hint is Path:
        return Path(str(value))
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def check_range(obj: object, name: str, lo: float, hi: float) -> None:
    value = getattr(obj, name)
    if not lo <= value <= hi:
        raise field_error(obj, name, f"must be between {lo} and {hi}, got {value}")


def field_error(obj: object, name: str, reason: str) -> ConfigurationError:
    return ConfigurationError(type(obj).__name__, name, reason)


def compile_all(patterns: tuple[str, ...], key: str) -> None:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as err:
            raise ConfigurationError("policy", key, f"bad regular expression {pattern!r}: {err}") from None
