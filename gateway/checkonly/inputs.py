"""A check-only request body parsed and validated: ``parse_check_input`` raises ``RequestError`` naming the
offending field, so ``/v1/verify`` answers 400 and the ``verify`` CLI reports the line.

The body's shape is stated once, as msgspec Structs (``CheckBody``, ``SourceBody``). Each field is
converted to its type with msgspec when it is checked, so the first error reported is the first in this
order, whatever the order of the body's keys: ``answer``, ``id``, ``sources`` (its count, then each
source in turn: its type, ``id``, ``text``, ``title``, ``url``, text or URL, the URL's scheme, a repeated
id). What a type cannot say (the number of sources allowed, the id's pattern for a number given as id,
a blank text read as absent) is checked on the typed values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec

from gateway.body_errors import convert
from gateway.errors import RequestError

SOURCE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$")
"""Source ids: what a marker ``[id]`` may name (no spaces, commas or brackets)."""


class SourceBody(msgspec.Struct):
    """A cited source as the caller sends it. ``None`` stands for absent or null alike.

    The rules ``parse_check_input`` checks on the typed values are published with the type for the
    OpenAPI schema (``extra_json_schema``, which msgspec does not enforce)."""

    id: Annotated[str, msgspec.Meta(extra_json_schema={"pattern": SOURCE_ID.pattern})] | int | None = None
    """Required, matching ``SOURCE_ID``; a number is read as its digits."""
    text: str | None = None
    """Blank is read as absent."""
    title: str | None = None
    url: Annotated[str, msgspec.Meta(description="http(s) only; fetched under the SSRF rules.")] | None = None
    """An http(s) URL, fetched when there is no text; a source needs one of the two."""


class CheckBody(msgspec.Struct):
    """A ``/v1/verify`` body, or one line of the ``verify`` CLI's input."""

    answer: (
        Annotated[
            str,
            msgspec.Meta(description="Text with [n] citation markers.", extra_json_schema={"minLength": 1}),
        ]
        | None
    ) = None
    """Required, not blank."""
    id: str | int | None = None
    """The caller's row id (CLI), echoed in the output as a string."""
    sources: (
        Annotated[
            list[Annotated[SourceBody, msgspec.Meta(extra_json_schema={"required": ["id"]})]],
            msgspec.Meta(extra_json_schema={"minItems": 1}),
        ]
        | None
    ) = None
    """Required: 1 to ``max_sources`` sources with distinct ids."""


PublishedCheckBody = Annotated[CheckBody, msgspec.Meta(extra_json_schema={"required": ["answer", "sources"]})]
"""``CheckBody`` as ``/v1/verify`` publishes it in the OpenAPI schema: what the checks require."""


_BODY: dict[str, Any] = {field.name: field.type for field in msgspec.structs.fields(CheckBody)}
_BODY["sources"] = list[Any] | None  # each source is converted on its own, in order
_SOURCE = {field.name: field.type for field in msgspec.structs.fields(SourceBody)}
_ID_RULE = "must be 1-64 letters, digits or . _ : / - (starting with a letter or digit)."


@dataclass(frozen=True)
class SourceInput:
    """A source as the caller gives it: text, or a URL to fetch, or both (then the text is used)."""

    id: str
    text: str | None = None
    title: str = ""
    url: str = ""


@dataclass(frozen=True)
class CheckInput:
    answer: str
    sources: tuple[SourceInput, ...]
    id: str | None = None
    """The caller's row id (CLI), echoed in the output."""


def parse_check_input(data: Any, *, max_sources: int) -> CheckInput:
    """Validate ``{"answer": str, "sources": [{"id", "text"?, "title"?, "url"?}], "id"?}``.

    Raises RequestError naming the offending field (``sources[2].url``).
    """
    if not isinstance(data, dict):  # a line of the CLI's input may be any JSON value
        raise RequestError("The body must be a JSON object.", code="invalid_json")
    answer = _typed(data.get("answer"), _BODY["answer"], "answer", "must be a string.")
    if answer is None:
        raise RequestError("'answer' is required.", param="answer", code="missing_required_parameter")
    if not answer.strip():
        raise RequestError("'answer' must not be empty.", param="answer", code="invalid_value")
    row_id = _typed(data.get("id"), _BODY["id"], "id", "must be a string or an integer.")
    raw_sources = _typed(data.get("sources"), _BODY["sources"], "sources", "must be an array.")
    if raw_sources is None:
        raise RequestError("'sources' is required.", param="sources", code="missing_required_parameter")
    if not raw_sources:
        raise RequestError("'sources' must contain at least one source.", param="sources", code="empty_array")
    if len(raw_sources) > max_sources:
        raise RequestError(
            f"'sources' may contain at most {max_sources} sources.", param="sources", code="too_many_sources"
        )
    sources: list[SourceInput] = []
    seen: set[str] = set()
    for index, item in enumerate(raw_sources):
        source = _source(item, f"sources[{index}]")
        if source.id in seen:
            raise RequestError(
                f"'sources[{index}].id' repeats the id {source.id!r}.",
                param=f"sources[{index}].id",
                code="duplicate_id",
            )
        seen.add(source.id)
        sources.append(source)
    return CheckInput(answer, tuple(sources), None if row_id is None else str(row_id))


def _typed(value: Any, type_: Any, param: str, rule: str, code: str = "invalid_type") -> Any:
    """``value`` as ``type_``, or the RequestError "'param' rule"."""
    return convert(value, type_, param, lambda _: RequestError(f"'{param}' {rule}", param=param, code=code))


def _source(item: Any, param: str) -> SourceInput:
    fields = _typed(item, dict[str, Any], param, "must be an object.")
    source_id = _typed(fields.get("id"), _SOURCE["id"], f"{param}.id", _ID_RULE, "invalid_value")
    if source_id is None:
        raise RequestError(
            f"'{param}.id' is required.", param=f"{param}.id", code="missing_required_parameter"
        )
    source_id = str(source_id)
    if not SOURCE_ID.match(source_id):
        raise RequestError(f"'{param}.id' {_ID_RULE}", param=f"{param}.id", code="invalid_value")
    text, title, url = (
        _typed(fields.get(name), _SOURCE[name], f"{param}.{name}", "must be a string.")
        for name in ("text", "title", "url")
    )
    url = (url or "").strip()
    if text is not None and not text.strip():
        text = None
    if text is None and not url:
        raise RequestError(
            f"'{param}' needs 'text' or 'url'.", param=f"{param}.text", code="missing_required_parameter"
        )
    if url and not url.lower().startswith(("http://", "https://")):
        raise RequestError(
            f"'{param}.url' must be an http(s) URL.", param=f"{param}.url", code="invalid_value"
        )
    return SourceInput(source_id, text, title or "", url)
