"""A check-only request body parsed and validated: ``parse_check_input`` raises ``RequestError`` naming the
offending field, so ``/v1/verify`` answers 400 and the ``verify`` CLI reports the line."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gateway.errors import RequestError

SOURCE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$")
"""Source ids: what a marker ``[id]`` may name (no spaces, commas or brackets)."""


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
    if not isinstance(data, dict):
        raise RequestError("The body must be a JSON object.", code="invalid_json")
    answer = data.get("answer")
    if answer is None:
        raise RequestError("'answer' is required.", param="answer", code="missing_required_parameter")
    if not isinstance(answer, str):
        raise RequestError("'answer' must be a string.", param="answer", code="invalid_type")
    if not answer.strip():
        raise RequestError("'answer' must not be empty.", param="answer", code="invalid_value")
    row_id = data.get("id")
    if row_id is not None and (isinstance(row_id, bool) or not isinstance(row_id, str | int)):
        raise RequestError("'id' must be a string or an integer.", param="id", code="invalid_type")
    raw_sources = data.get("sources")
    if raw_sources is None:
        raise RequestError("'sources' is required.", param="sources", code="missing_required_parameter")
    if not isinstance(raw_sources, list):
        raise RequestError("'sources' must be an array.", param="sources", code="invalid_type")
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


def _source(item: Any, param: str) -> SourceInput:
    if not isinstance(item, dict):
        raise RequestError(f"'{param}' must be an object.", param=param, code="invalid_type")
    raw_id = item.get("id")
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        raw_id = str(raw_id)
    if raw_id is None:
        raise RequestError(
            f"'{param}.id' is required.", param=f"{param}.id", code="missing_required_parameter"
        )
    if not isinstance(raw_id, str) or not SOURCE_ID.match(raw_id):
        raise RequestError(
            f"'{param}.id' must be 1-64 letters, digits or . _ : / - (starting with a letter or digit).",
            param=f"{param}.id",
            code="invalid_value",
        )
    fields: dict[str, str | None] = {}
    for name in ("text", "title", "url"):
        value = item.get(name)
        if value is not None and not isinstance(value, str):
            raise RequestError(
                f"'{param}.{name}' must be a string.", param=f"{param}.{name}", code="invalid_type"
            )
        fields[name] = value
    text, url = fields["text"], (fields["url"] or "").strip()
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
    return SourceInput(raw_id, text, fields["title"] or "", url)
