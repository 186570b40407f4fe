"""Typed edges: pydantic validates what an operator gives (``GATEWAY_*`` variables, policy YAML), and
``configuration_error`` turns its ``ValidationError`` into the one ``ConfigurationError`` naming the
variable or the file and dotted key (``retrieval.min_relevance``, ``units[21]``) with a readable reason.

A value's range is a bound on its field (``Annotated[int, Field(ge=1, le=50)]``, ``UnitInterval``),
checked by pydantic when the file is validated. A dataclass's own checks (``__post_init__``: a
pattern that must compile, one field against another) raise ``InvalidValue``: a ConfigurationError
when the dataclass is built directly, and, being a ValueError too, recorded by pydantic at the
dataclass's location when it is validated from a file, so the key still names where it sits in the file.

This module is the one place that builds a ``ConfigurationError`` (or an ``InvalidValue``): a value
pydantic can check goes through ``configuration_error``; a dataclass's own check raises
``field_error(self, key, reason)``; a condition that is not a value's validity (a file missing, a
model directory unreadable, a key that cannot be decrypted, a command-line choice that leaves nothing
to do) goes through ``refuse``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import types
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    NoReturn,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

import yaml
from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from gateway.errors import ConfigurationError, InvalidValue

T = TypeVar("T")

FILE_CONFIG = ConfigDict(extra="forbid", coerce_numbers_to_str=True)
"""Config of a dataclass read from a file (``@with_config(FILE_CONFIG)``; the dataclasses inside it
inherit it): an unknown key is an error, and a number where text is expected is taken as text."""

UnitInterval = Annotated[float, Field(ge=0.0, le=1.0)]
"""A share, a probability, a score or a threshold on one: 0..1 (a bound pydantic checks and names)."""
SignedUnitInterval = Annotated[float, Field(ge=-1.0, le=1.0)]
"""A cosine similarity, or a margin between two: -1..1."""

_REASONS = {
    "int_type": "expected an integer, got {input!r}",
    "int_parsing": "expected an integer, got {input!r}",
    "int_from_float": "expected an integer, got {input!r}",
    "float_type": "expected a number, got {input!r}",
    "float_parsing": "expected a number, got {input!r}",
    "bool_type": "expected true or false, got {input!r}",
    "bool_parsing": "expected true or false, got {input!r}",
    "string_type": "expected text, got {input!r}",
    "literal_error": "must be one of {expected}, got {input!r}",
    "tuple_type": "expected a list, got {kind}",
    "list_type": "expected a list, got {kind}",
    "dataclass_type": "expected a mapping, got {kind}",
    "dataclass_args_type": "expected a mapping, got {kind}",
    "dict_type": "expected a mapping, got {kind}",
    "greater_than": "must be > {gt}, got {input!r}",
    "greater_than_equal": "must be >= {ge}, got {input!r}",
    "less_than": "must be < {lt}, got {input!r}",
    "less_than_equal": "must be <= {le}, got {input!r}",
    "too_short": "must have at least {min_length} item(s), got {actual_length}",
    "too_long": "must have at most {max_length} item(s), got {actual_length}",
    "string_too_short": "must be at least {min_length} character(s) long",
}
_UNKNOWN = ("unexpected_keyword_argument", "extra_forbidden")
_MISSING = ("missing", "missing_argument")


def configuration_error(
    err: ValidationError, root: type, source: str, prefix: str = "", *, env_prefix: str = ""
) -> ConfigurationError:
    """The ConfigurationError for the first problem pydantic found validating ``root``.

    A policy names ``source`` (the file) and the dotted key below ``prefix``; settings
    (``env_prefix``) name the variable as both source and key, as the operator sets it.
    """
    error = err.errors()[0]
    loc = error["loc"]
    key, reason = _describe(error, root)
    if env_prefix:
        name = str(loc[0]) if loc else key
        variable = env_prefix + name.upper() if name and name != "-" else source
        return ConfigurationError(variable, variable, reason)
    return ConfigurationError(source, _join(prefix, key) or "-", reason)


def refuse(source: str, key: str, reason: str, *, cause: BaseException | None = None) -> NoReturn:
    """Raise the ConfigurationError naming ``source``, ``key`` and ``reason`` (``from cause``: the
    error that explains it, or none, so a caught parsing error does not show as a second failure)."""
    raise ConfigurationError(source, key, reason) from cause


def validate(
    cls: type[T], data: Any, source: str, prefix: str = "", *, context: dict[str, Any] | None = None
) -> T:
    """Validate parsed YAML into ``cls`` (a dataclass with ``extra="forbid"`` config).

    ``context`` reaches the validators (``ValidationInfo.context``): a bound known only at load time.
    """
    try:
        return TypeAdapter(cls).validate_python(data, context=context)
    except ValidationError as err:
        raise configuration_error(err, cls, source, prefix) from None


if TYPE_CHECKING:
    _SafeLoader = yaml.SafeLoader
else:
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class UniqueKeyLoader(_SafeLoader):
    """A safe loader that refuses a mapping key given twice (YAML would keep the last silently).

    Built on libyaml's parser where PyYAML has it: the pure-Python one took most of a start-up (five
    seconds for the policy files of one ``ingest``)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: Path, hint: str = "") -> Any:
    """A YAML file's value ({} when empty); ``hint`` follows "file not found". A key given twice in one
    mapping is refused: YAML alone would keep the last one silently, and an operator who adds a second
    ``patterns:`` list under a red flag would lose the first without a word."""
    if not path.is_file():
        refuse(str(path), "-", f"file not found{hint}")
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=UniqueKeyLoader) or {}  # noqa: S506  # a SafeLoader
    except yaml.YAMLError as err:
        refuse(str(path), "-", f"not valid YAML: {err}")


def read_json(path: Path, hint: str = "") -> Any:
    """A JSON file's value; ``hint`` follows "file not found" (how to make the file)."""
    if not path.is_file():
        refuse(str(path), "-", f"file not found{hint}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        refuse(str(path), "-", f"not valid JSON: {err}")


def load_file(path: Path, cls: type[T], *, context: dict[str, Any] | None = None, hint: str = "") -> T:
    """Read a YAML file (a JSON one by its ``.json`` suffix) into ``cls``; every error names the file
    and the dotted key."""
    data = read_json(path, hint) if path.suffix.lower() == ".json" else read_yaml(path, hint)
    return validate(cls, data, str(path), context=context)


def field_error(owner: object, name: str, reason: str) -> InvalidValue:
    """The ``InvalidValue`` for field ``name`` of ``owner``, a dataclass whose check failed (its class
    names the source), or the name to show for it (a private file model standing for a public one:
    ``"Synonyms"``). The one way a policy check outside this module makes its error."""
    source = owner if isinstance(owner, str) else type(owner).__name__
    return InvalidValue(source, name, reason)


def compile_all(obj: object, patterns: tuple[str, ...], key: str) -> None:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as err:
            raise field_error(obj, key, f"bad regular expression {pattern!r}: {err}") from None


def _describe(error: ErrorDetails, root: type) -> tuple[str, str]:
    loc = error["loc"]
    kind = error["type"]
    if kind == "value_error":
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, ConfigurationError):
            return _join(_path(loc), cause.key), cause.reason
        return _path(loc), str(cause)
    if kind in _UNKNOWN:
        known = _field_names(root, loc[:-1])
        expected = f"; expected one of {', '.join(known)}" if known else ""
        return _path(loc), f"unknown key{expected}"
    if kind in _MISSING:
        last = loc[-1] if loc else "-"
        if isinstance(last, int):
            return _path(loc[:-1]), "too few items in the list"
        return _path(loc), "missing required key"
    if kind == "too_short" and (error.get("ctx") or {}).get("min_length") == 1:
        return _path(loc), "expected a non-empty list"
    template = _REASONS.get(kind)
    if template is None:
        return _path(loc), error["msg"]
    value = error.get("input")
    context = {"expected": "", **(error.get("ctx") or {})}
    return _path(loc), template.format(input=value, kind=type(value).__name__, **context)


def _field_names(root: type, loc: tuple[int | str, ...]) -> list[str]:
    """Field names of the dataclass at ``loc`` below ``root`` (for an "unknown key" reason)."""
    hint: Any = root
    try:
        for part in loc:
            hint = _unwrap(hint, part)
        hint = _unwrap(hint, None)
        return [f.name for f in dataclasses.fields(hint)] if dataclasses.is_dataclass(hint) else []
    except (KeyError, IndexError, TypeError, NameError):
        return []


def _unwrap(hint: Any, part: int | str | None) -> Any:
    if get_origin(hint) in (Union, types.UnionType):
        hint = next(a for a in get_args(hint) if a is not type(None))
    if part is None:
        return hint
    if isinstance(part, int):
        args = get_args(hint)
        return args[0] if len(args) == 2 and args[1] is Ellipsis else args[part]
    return get_type_hints(hint)[part]


def _path(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        if part == "[key]":  # a mapping's key failed: the key names the place already
            continue
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text = f"{text}.{part}" if text else part
    return text


def _join(path: str, key: str) -> str:
    if not key or key == "-":
        return path
    if not path:
        return key
    return f"{path}{key}" if key.startswith("[") else f"{path}.{key}"
