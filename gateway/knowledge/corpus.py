"""Source documents and the manifest that describes a corpus directory."""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, field_validator, with_config

from gateway.errors import ConfigurationError
from gateway.knowledge.plaintext import plain_text, provenance_problem
from gateway.validation import load_file


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


_REQUIRED = ("id", "file", "title", "org", "url")


def parse_date(value: object, source: str, key: str) -> dt.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        raise ConfigurationError(source, key, f"not an ISO date: {value!r}") from None


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


def load_manifest(directory: Path) -> list[SourceDocument]:
    """Read ``manifest.yaml`` and the Markdown files it lists. Errors name the entry and the field."""
    manifest = manifest_path(directory)
    entries = read_manifest(manifest).documents
    documents: list[SourceDocument] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        key = f"documents[{index}]"
        if not isinstance(entry, dict):
            raise ConfigurationError(str(manifest), key, "expected a mapping")
        for name in _REQUIRED:
            if not entry.get(name):
                raise ConfigurationError(str(manifest), f"{key}.{name}", "missing")
        doc_id = str(entry["id"])
        if doc_id in seen:
            raise ConfigurationError(str(manifest), f"{key}.id", f"duplicate id {doc_id!r}")
        seen.add(doc_id)
        path = manifest.parent / str(entry["file"])
        if not path.is_file():
            raise ConfigurationError(str(manifest), f"{key}.file", f"{path} not found")
        for name in ("title", "org", "url"):
            problem = provenance_problem(name, str(entry[name]))
            if problem is not None:
                raise ConfigurationError(str(manifest), f"{key}.{name}", f"document {doc_id}: {problem}")
        documents.append(
            SourceDocument(
                id=doc_id,
                title=str(entry["title"]),
                text=plain_text(path.read_text(encoding="utf-8")),
                org=str(entry["org"]),
                url=str(entry["url"]),
                tier=str(entry.get("tier") or ""),
                reviewed_on=parse_date(entry.get("reviewed_on"), str(manifest), f"{key}.reviewed_on"),
                doc_type=str(entry.get("doc_type") or "article"),
            )
        )
    return documents
