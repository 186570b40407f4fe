"""Source documents and the manifest that describes a corpus directory."""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from pathlib import Path

import yaml

from gateway.errors import ConfigurationError
from gateway.knowledge.plaintext import plain_text, provenance_problem


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


def load_manifest(directory: Path) -> list[SourceDocument]:
    """Read ``manifest.yaml`` and the Markdown files it lists. Errors name the entry and the field."""
    manifest = directory / "manifest.yaml"
    if not manifest.is_file():
        raise ConfigurationError(str(manifest), "-", "manifest not found")
    data = yaml.safe_load(manifest.read_text(encoding="utf-8")) or {}
    entries = data.get("documents")
    if not isinstance(entries, list):
        raise ConfigurationError(str(manifest), "documents", "expected a list of documents")
    documents: list[SourceDocument] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        key = f"documents[{index}]"
        if not isinstance(entry, dict):
            raise ConfigurationError(str(manifest), key, "expected a mapping")
        for field in _REQUIRED:
            if not entry.get(field):
                raise ConfigurationError(str(manifest), f"{key}.{field}", "missing")
        doc_id = str(entry["id"])
        if doc_id in seen:
            raise ConfigurationError(str(manifest), f"{key}.id", f"duplicate id {doc_id!r}")
        seen.add(doc_id)
        path = directory / str(entry["file"])
        if not path.is_file():
            raise ConfigurationError(str(manifest), f"{key}.file", f"{path} not found")
        for field in ("title", "org", "url"):
            problem = provenance_problem(field, str(entry[field]))
            if problem is not None:
                raise ConfigurationError(str(manifest), f"{key}.{field}", f"document {doc_id}: {problem}")
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
