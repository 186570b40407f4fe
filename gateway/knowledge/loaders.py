"""Turn ingestion sources into ``SourceDocument`` values: Markdown, HTML, PDF, plain text, JSONL rows, URLs.

Every document's text is made plain (``plaintext.py``: links become their text, scripts, styles and
event handlers are dropped), and its url must be http(s) and its title and org free of markup, or it is
refused naming the field. Sources are described by a manifest (``manifest.yaml``, see
docs/knowledge.md) or given as a JSONL file. Ingestion never stops at a bad document: each source
yields either a ``SourceDocument`` or a ``LoadFailure`` naming the document and the reason, and the
ingestion reports the failures. Start-up reads a manifest's entries the same way, through the one
reading of an entry (``_manifest_entries``), but all or nothing: ``load_manifest`` refuses the first
failure with a ConfigurationError naming the manifest, the entry and its field.

URLs are fetched through an injected ``Fetch`` callable, in production the SSRF-safe
``gateway.fetching.fetcher.SafeFetcher`` (allow-listed domains, public addresses only, time and size
limits); this module never opens a connection itself.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.errors import GatewayError
from gateway.knowledge.corpus import SourceDocument, as_date, manifest_path, read_manifest
from gateway.knowledge.plaintext import plain_text, provenance_problem
from gateway.validation import refuse

TEXT_FORMATS = ("markdown", "html", "pdf", "text")
_SUFFIXES = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".txt": "text",
    ".jsonl": "jsonl",
}


@dataclass(frozen=True)
class FetchedPage:
    """What a fetch gave: the final URL after redirects, its media type and its extracted text."""

    final_url: str
    content_type: str
    text: str
    title: str = ""


Fetch = Callable[[str], FetchedPage]
"""Fetch one URL under the SSRF rules or raise (``FetchError``); injected by the caller."""


@dataclass(frozen=True)
class LoadFailure:
    """A source that could not become a document: its name (id, file or row) and why."""

    name: str
    reason: str
    document_id: str | None = None


Loaded = SourceDocument | LoadFailure
_Placed = tuple[str, Loaded]
"""An item with where its source says it is: a manifest key (``documents[3]``), a JSONL line."""


class _Bad(Exception):  # private control flow, never leaves this module: outside the error tree
    """A reason to skip one source; becomes a LoadFailure. ``field``: the source's field that is wrong."""

    def __init__(self, reason: str, field: str = "") -> None:
        super().__init__(reason)
        self.field = field


def extract_html(html: str) -> tuple[str, str]:
    """(text as Markdown with headings, page title) of an HTML page, via trafilatura."""
    import trafilatura

    text = trafilatura.extract(
        html, output_format="markdown", include_comments=False, include_tables=True, with_metadata=False
    )
    if not text or not text.strip():
        raise _Bad("no text could be extracted from the HTML")
    metadata = trafilatura.extract_metadata(html)
    title = str(getattr(metadata, "title", "") or "") if metadata is not None else ""
    return text, title


def extract_pdf(data: bytes) -> str:
    """The text of a PDF's pages (pypdf), pages separated by blank lines."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise _Bad("the PDF is encrypted")
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except PdfReadError as err:
        raise _Bad(f"not a readable PDF: {err}") from err
    except (ValueError, KeyError, TypeError) as err:
        raise _Bad(f"not a readable PDF: {type(err).__name__}: {err}") from err
    text = "\n\n".join(p for p in pages if p)
    if not text:
        raise _Bad("the PDF has no extractable text (scanned images need OCR first)")
    return text


def read_text(path: Path, fmt: str) -> tuple[str, str]:
    """(text, extracted title) of a local file in one of TEXT_FORMATS."""
    if not path.is_file():
        raise _Bad(f"file not found: {path}", "file")
    if fmt == "pdf":
        return extract_pdf(path.read_bytes()), ""
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise _Bad(f"not UTF-8 text: {err}", "file") from err
    if fmt == "html":
        return extract_html(raw)
    return raw, ""


def _format(entry: Mapping[str, Any], defaults: Mapping[str, Any], path: Path | None) -> str:
    """An entry's format: its own ``format:``, else the manifest's ``defaults``, else its file's suffix. A
    URL entry has none (its response says what it is): its own ``format:`` is refused by name, and a
    default one does not apply to it."""
    if path is None:
        if entry.get("format"):
            raise _Bad("format: applies to a file; a fetched URL is read by what its response is", "format")
        return "url"
    declared = str(entry.get("format") or defaults.get("format") or "").lower()
    if declared:
        if declared not in (*TEXT_FORMATS, "jsonl"):
            raise _Bad(
                f"unknown format {declared!r} (expected one of {', '.join((*TEXT_FORMATS, 'jsonl'))})",
                "format",
            )
        return declared
    fmt = _SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise _Bad(
            f"cannot tell the format of {path.name}; set format: to one of {', '.join(TEXT_FORMATS)}", "file"
        )
    return fmt


def _document(
    fields: Mapping[str, Any], text: str, extracted_title: str, tiers_by_org: Mapping[str, str]
) -> SourceDocument:
    doc_id = str(fields.get("id") or "").strip()
    if not doc_id:
        raise _Bad("missing id", "id")
    if "@" in doc_id:
        raise _Bad("the id may not contain '@'", "id")
    title = str(fields.get("title") or extracted_title or "").strip()
    org = str(fields.get("org") or fields.get("source_org") or "").strip()
    url = str(fields.get("url") or "").strip()
    for name, value in (("title", title), ("org", org), ("url", url)):
        if not value:
            raise _Bad(f"missing {name}", name)
        problem = provenance_problem(name, value)
        if problem is not None:
            raise _Bad(problem, name)
    text = plain_text(text)
    if not text.strip():
        raise _Bad("empty text")
    try:
        reviewed = as_date(fields.get("reviewed_on"))
    except ValueError as err:
        raise _Bad(str(err), "reviewed_on") from err
    tier = str(fields.get("tier") or tiers_by_org.get(org) or "")
    return SourceDocument(
        id=doc_id,
        title=title,
        text=text,
        org=org,
        url=url,
        tier=tier,
        reviewed_on=reviewed,
        doc_type=str(fields.get("doc_type") or "article"),
    )


def iter_jsonl(
    path: Path, defaults: Mapping[str, Any] | None = None, tiers_by_org: Mapping[str, str] | None = None
) -> Iterator[Loaded]:
    """One document per row ``{id, title, url, text, org|source_org, tier?, reviewed_on?, doc_type?}``."""
    for _, item in _jsonl_rows(path, defaults or {}, tiers_by_org or {}):
        yield item


def _jsonl_rows(
    path: Path, defaults: Mapping[str, Any], tiers_by_org: Mapping[str, str]
) -> Iterator[_Placed]:
    """``iter_jsonl``'s items, each with its place: ``line 3``, ``line 3.org`` (a failure's field), or
    ``-`` (the file cannot be opened)."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as err:
        yield "-", LoadFailure(str(path), f"cannot open: {err}")
        return
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            name = f"{path.name}:{number}"
            place = f"line {number}"
            try:
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise _Bad("the row is not a JSON object")
                fields = {**defaults, **row}
                name = f"{path.name}:{number} ({row.get('id', '?')})"
                yield place, _document(fields, str(row.get("text") or ""), "", tiers_by_org)
            except json.JSONDecodeError as err:
                yield place, LoadFailure(name, f"invalid JSON: {err.msg}")
            except _Bad as err:
                document_id = str(row.get("id")) if isinstance(row, dict) else None
                yield _key(place, err.field), LoadFailure(name, str(err), document_id)


def iter_manifest(path: Path, fetch: Fetch | None = None) -> Iterator[Loaded]:
    """Every document a manifest describes (``path`` is the manifest or its directory).

    A broken manifest (unreadable, no ``documents`` list) raises ConfigurationError; a broken entry
    is yielded as a LoadFailure and the others still load.
    """
    for _, item in _manifest_entries(manifest_path(path), fetch):
        yield item


def load_manifest(path: Path) -> list[SourceDocument]:
    """Every document a manifest describes, for start-up: all of them, or a ConfigurationError.

    Each entry is read as ``trust-gateway ingest`` reads it (``iter_manifest``), without a fetcher;
    the first that fails, or an id given twice, stops start-up naming the manifest, the entry's key
    (``documents[0].org``, a JSONL entry's row: ``documents[6] line 2.org``) and the reason.
    """
    manifest = manifest_path(path)
    documents: dict[str, SourceDocument] = {}
    for place, item in _manifest_entries(manifest, None):
        if isinstance(item, LoadFailure):
            refuse(str(manifest), place, item.reason)
        if item.id in documents:
            refuse(str(manifest), _key(place, "id"), f"duplicate id {item.id!r}")
        documents[item.id] = item
    return list(documents.values())


def _manifest_entries(manifest: Path, fetch: Fetch | None) -> Iterator[_Placed]:
    """``iter_manifest``'s items, each with its key in the manifest: the entry (``documents[3]``), a
    failure's field (``documents[3].org``), a JSONL entry's row (``documents[6] line 2``).

    The one reading of a manifest entry, for ``trust-gateway ingest`` and for start-up
    (``load_manifest``) alike: the entry inherits the manifest's ``defaults``, and, naming no tier,
    its org's ``tiers_by_org`` tier; its file is read by its format.
    """
    parsed = read_manifest(manifest)
    defaults, tiers_by_org = parsed.defaults, parsed.tiers_by_org
    base = manifest.parent
    for index, entry in enumerate(parsed.documents):
        place = f"documents[{index}]"
        if not isinstance(entry, dict):
            yield place, LoadFailure(place, "expected a mapping")
            continue
        name = str(entry.get("id") or entry.get("file") or entry.get("url") or place)
        fields = {**defaults, **entry}
        try:
            file = entry.get("file")
            file_path = base / str(file) if file else None
            fmt = _format(entry, defaults, file_path)
            if fmt == "jsonl":
                assert file_path is not None
                loaded = _jsonl_rows(
                    file_path,
                    {k: v for k, v in fields.items() if k not in ("file", "format")},
                    {**tiers_by_org, **(entry.get("tiers_by_org") or {})},
                )
                for row, item in loaded:
                    yield (_key(place, "file") if row == "-" else f"{place} {row}"), item
                continue
            if fmt == "url":
                yield place, _fetched(fields, fetch, tiers_by_org)
                continue
            assert file_path is not None
            text, title = read_text(file_path, fmt)
            yield place, _document(fields, text, title, tiers_by_org)
        except _Bad as err:
            failure = LoadFailure(name, str(err), str(entry.get("id")) if entry.get("id") else None)
            yield _key(place, err.field), failure


def _key(place: str, field: str) -> str:
    return f"{place}.{field}" if field else place


def _fetched(
    fields: Mapping[str, Any], fetch: Fetch | None, tiers_by_org: Mapping[str, str]
) -> SourceDocument:
    url = str(fields.get("url") or "")
    if not url:
        raise _Bad("no file and no url")
    if fetch is None:
        raise _Bad("URL sources need a fetcher (run through `trust-gateway ingest`)", "url")
    try:
        page = fetch(url)
    except GatewayError as err:
        raise _Bad(f"fetch failed: {err}", "url") from err
    return _document({**fields, "url": page.final_url or url}, page.text, page.title, tiers_by_org)


def iter_sources(
    paths: list[Path], fetch: Fetch | None = None, tiers_by_org: Mapping[str, str] | None = None
) -> Iterator[Loaded]:
    """Documents from each path: a directory or YAML manifest, or a JSONL file of rows."""
    for path in paths:
        if path.suffix.lower() == ".jsonl":
            yield from iter_jsonl(path, tiers_by_org=tiers_by_org)
        elif path.is_dir() or path.suffix.lower() in (".yaml", ".yml"):
            yield from iter_manifest(path, fetch)
        else:
            yield LoadFailure(str(path), "expected a corpus directory, a manifest .yaml or a .jsonl file")
