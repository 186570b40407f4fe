"""Source documents and the manifest that describes a corpus directory."""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
    with_config,
)

from gateway.errors import InvalidValue
from gateway.knowledge.plaintext import plain_text, provenance_problem
from gateway.validation import load_file, validate


@dataclass(frozen=True)
class SourceDocument:
    """A vetted document before chunking, with the provenance every passage inherits."""

    id: str
    title: str
    text: str
    org: str
    url: str
    tier: str
    reviewed_on: dt.date | None
    doc_type: str = "article"

    @property
    def content_hash(self) -> str:
        payload = "\x1f".join(
            [self.title, self.text, self.org, self.url, self.tier, str(self.reviewed_on), self.doc_type]
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def as_date(value: object) -> dt.date | None:
    """A manifest's date: a YAML date, a datetime, or text starting with an ISO date; empty: None."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        raise ValueError(f"not an ISO date: {value!r}") from None


MANIFEST = "manifest.yaml"


@with_config(ConfigDict(coerce_numbers_to_str=True))
@dataclass(frozen=True)
class Manifest:
    """A corpus manifest (``manifest.yaml``), read once by ``read_manifest`` for every loader.

    ``documents`` are kept as written: the start-up loader (``load_manifest``) refuses a bad entry,
    the ingestion loader (``loaders.iter_manifest``) reports it and goes on with the others.
    """

    documents: tuple[Any, ...]
    defaults: dict[str, Any] = field(default_factory=dict)
    """Fields every entry inherits unless it sets them."""
    tiers_by_org: dict[str, str] = field(default_factory=dict)
    """Tier of an entry that names none, by its org."""

    @field_validator("defaults", "tiers_by_org", mode="before")
    @classmethod
    def _empty(cls, value: Any) -> Any:
        return {} if value is None else value


def manifest_path(path: Path) -> Path:
    """The manifest file of ``path`` (a corpus directory or the manifest itself)."""
    if path.is_dir() or path.suffix.lower() not in (".yaml", ".yml"):
        return path / MANIFEST
    return path


def read_manifest(path: Path) -> Manifest:
    """Parse and validate a manifest (``path``: the file or its directory); errors name the file and key."""
    return load_file(manifest_path(path), Manifest)


_Required = Annotated[str, Field(min_length=1)]


@with_config(ConfigDict(coerce_numbers_to_str=True))
@dataclass(frozen=True)
class ManifestEntry:
    """One document of a manifest as the start-up loader requires it: a Markdown file next to the
    manifest, with its provenance (other keys, for ``trust-gateway ingest``, are ignored here)."""

    id: _Required
    file: _Required
    title: _Required
    org: _Required
    url: _Required
    tier: str | None = None
    reviewed_on: Annotated[dt.date | None, BeforeValidator(as_date)] = None
    doc_type: str | None = None

    @field_validator("title", "org", "url", mode="after")
    @classmethod
    def _provenance(cls, value: str, info: ValidationInfo) -> str:
        problem = provenance_problem(str(info.field_name), value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("file", mode="after")
    @classmethod
    def _exists(cls, value: str, info: ValidationInfo) -> str:
        path = (info.context or {}).get("base", Path()) / value
        if not path.is_file():
            raise ValueError(f"{path} not found")
        return value


@dataclass(frozen=True)
class _Entries:
    documents: tuple[ManifestEntry, ...]

    @model_validator(mode="after")
    def _unique(self) -> _Entries:
        seen: set[str] = set()
        for index, entry in enumerate(self.documents):
            if entry.id in seen:
                raise InvalidValue("Manifest", f"documents[{index}].id", f"duplicate id {entry.id!r}")
            seen.add(entry.id)
        return self


def load_manifest(directory: Path) -> list[SourceDocument]:
    """Read ``manifest.yaml`` and the Markdown files it lists. Errors name the entry and the field.

    Each entry inherits the manifest's ``defaults`` and, naming no tier, its org's ``tiers_by_org``
    tier, as ``trust-gateway ingest`` reads the same file (``loaders.iter_manifest``)."""
    manifest = manifest_path(directory)
    parsed = read_manifest(manifest)
    documents = [{**parsed.defaults, **e} if isinstance(e, dict) else e for e in parsed.documents]
    entries = validate(
        _Entries,
        {"documents": documents},
        str(manifest),
        context={"base": manifest.parent},
    ).documents
    return [
        SourceDocument(
            id=entry.id,
            title=entry.title,
            text=plain_text((manifest.parent / entry.file).read_text(encoding="utf-8")),
            org=entry.org,
            url=entry.url,
            tier=entry.tier or parsed.tiers_by_org.get(entry.org, ""),
            reviewed_on=entry.reviewed_on,
            doc_type=entry.doc_type or "article",
        )
        for entry in entries
    ]
