"""Source documents and the manifest that describes a corpus directory."""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, field_validator, with_config

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

    ``documents`` are kept as written: each entry is read by one interpreter (``loaders``), which
    ``trust-gateway ingest`` (``iter_manifest``) asks to report a bad entry and go on with the others,
    and start-up (``load_manifest``) to refuse it.
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
