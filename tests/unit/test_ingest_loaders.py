"""Loading ingestion sources: every format, provenance fields, and bad documents reported by name."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gateway.errors import ConfigurationError, FetchError
from gateway.knowledge.chunking import chunk_document
from gateway.knowledge.corpus import SourceDocument, read_manifest
from gateway.knowledge.loaders import (
    FetchedPage,
    LoadFailure,
    iter_jsonl,
    iter_manifest,
    iter_sources,
    load_manifest,
)


def tiny_pdf(text: str) -> bytes:
    """A minimal one-page PDF whose content stream draws ``text`` (valid xref offsets)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


HTML = """<html><head><title>Gout - Health A-Z</title></head><body>
<nav>Home | Menu | Cookies</nav>
<article><h1>Gout</h1>
<p>Gout is a type of arthritis that causes sudden severe joint pain. It usually affects the big toe.</p>
<h2>Treatment</h2>
<p>Anti-inflammatory painkillers can ease a gout attack. Drinking water may help prevent attacks.</p>
</article><footer>Copyright notice and privacy policy.</footer></body></html>"""


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "colds.md").write_text(
        "# Colds\n\nA cold is a mild viral infection of the nose and throat.\n\n"
        "## Self care\n\nRest and drink plenty of fluids.\n",
        encoding="utf-8",
    )
    (tmp_path / "docs" / "gout.html").write_text(HTML, encoding="utf-8")
    (tmp_path / "docs" / "leaflet.pdf").write_bytes(tiny_pdf("Take one tablet twice a day with food."))
    (tmp_path / "docs" / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    (tmp_path / "rows.jsonl").write_text(
        json.dumps(
            {
                "id": "row-1",
                "title": "What is asthma?",
                "url": "https://www.nhlbi.nih.gov/a",
                "text": "Asthma is a chronic lung disease.",
                "source_org": "NHLBI",
            }
        )
        + "\n"
        + "{not json\n"
        + json.dumps({"id": "row-3", "title": "No text", "url": "https://x.gov", "source_org": "CDC"})
        + "\n",
        encoding="utf-8",
    )
    manifest = {
        "defaults": {"reviewed_on": "2024-01-01"},
        "tiers_by_org": {"NHLBI": "clinical_reference"},
        "documents": [
            {
                "id": "colds",
                "file": "docs/colds.md",
                "title": "Colds",
                "org": "NHS",
                "url": "https://www.nhs.uk/conditions/common-cold/",
                "tier": "clinical_reference",
            },
            {
                "id": "gout",
                "file": "docs/gout.html",
                "org": "NHS",
                "url": "https://www.nhs.uk/conditions/gout/",
            },
            {
                "id": "leaflet",
                "file": "docs/leaflet.pdf",
                "title": "Tablet leaflet",
                "org": "MHRA",
                "url": "https://www.gov.uk/leaflet.pdf",
                "tier": "regulatory",
                "reviewed_on": "2023-02-03",
            },
            {
                "id": "broken",
                "file": "docs/broken.pdf",
                "title": "Broken",
                "org": "X",
                "url": "https://x.org",
            },
            {"id": "missing-org", "file": "docs/colds.md", "title": "No org", "url": "https://x.org"},
            {
                "id": "web",
                "url": "https://medlineplus.gov/gout.html",
                "org": "MedlinePlus",
                "tier": "clinical_reference",
            },
            {"file": "rows.jsonl"},
        ],
    }
    (tmp_path / "manifest.yaml").write_text(json.dumps(manifest), encoding="utf-8")
    return tmp_path


def fake_fetch(url: str) -> FetchedPage:
    if "medlineplus" not in url:
        raise FetchError(f"could not fetch {url!r}: domain_not_allowed", reason="domain_not_allowed")
    return FetchedPage(
        url + "?redirected", "text/html", "Gout is joint pain caused by urate crystals.", "Gout"
    )


def test_manifest_loads_every_format_and_reports_bad_documents(corpus: Path) -> None:
    loaded = list(iter_manifest(corpus, fake_fetch))
    documents = {d.id: d for d in loaded if isinstance(d, SourceDocument)}
    failures = {f.name: f.reason for f in loaded if isinstance(f, LoadFailure)}

    assert set(documents) == {"colds", "gout", "leaflet", "web", "row-1"}
    assert documents["colds"].tier == "clinical_reference"
    assert str(documents["colds"].reviewed_on) == "2024-01-01"  # from defaults
    # HTML: trafilatura keeps the article (with its headings) and drops navigation and footer.
    gout = documents["gout"]
    assert "big toe" in gout.text
    assert "Cookies" not in gout.text
    assert "privacy policy" not in gout.text
    assert gout.title.startswith("Gout")
    assert any(c.section == "Treatment" for c in chunk_document(gout))
    assert "one tablet twice a day" in documents["leaflet"].text
    assert str(documents["leaflet"].reviewed_on) == "2023-02-03"
    assert documents["web"].url == "https://medlineplus.gov/gout.html?redirected"
    assert documents["web"].title == "Gout"
    assert documents["row-1"].org == "NHLBI"
    assert documents["row-1"].tier == "clinical_reference"

    assert "readable PDF" in failures["broken"]
    assert failures["missing-org"] == "missing org"
    assert any(
        "invalid JSON" in reason for name, reason in failures.items() if name.startswith("rows.jsonl:2")
    )
    assert any(r == "empty text" for n, r in failures.items() if "row-3" in n)


def test_url_source_without_fetcher_or_refused_is_a_failure(corpus: Path) -> None:
    no_fetch = {f.name: f.reason for f in iter_manifest(corpus) if isinstance(f, LoadFailure)}
    assert "need a fetcher" in no_fetch["web"]

    def refusing(url: str) -> FetchedPage:
        raise FetchError("blocked", reason="blocked_address")

    refused = {f.name: f.reason for f in iter_manifest(corpus, refusing) if isinstance(f, LoadFailure)}
    assert refused["web"].startswith("fetch failed")


def test_jsonl_rows_keep_their_id_and_provenance(tmp_path: Path) -> None:
    path = tmp_path / "kb.jsonl"
    path.write_text(
        json.dumps(
            {
                "id": "A_1",
                "title": "T",
                "url": "https://www.cdc.gov/t",
                "text": "Some text.",
                "source_org": "CDC",
                "reviewed_on": "2020-05-06",
            }
        )
        + "\n\n",
        encoding="utf-8",
    )
    (document,) = list(iter_jsonl(path, tiers_by_org={"CDC": "guideline"}))
    assert isinstance(document, SourceDocument)
    assert (document.id, document.org, document.tier, str(document.reviewed_on)) == (
        "A_1",
        "CDC",
        "guideline",
        "2020-05-06",
    )


def test_broken_manifest_is_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "manifest.yaml").write_text("documents: nope\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="documents"):
        list(iter_manifest(tmp_path))
    unknown = list(iter_sources([tmp_path / "notes.docx"]))
    assert isinstance(unknown[0], LoadFailure)


@pytest.mark.parametrize(
    ("text", "key", "reason"),
    [
        ("documents: nope\n", "documents", "expected a list"),
        ("defaults: {}\n", "documents", "missing required key"),
        ("documents: []\ntiers_by_org: [NHS]\n", "tiers_by_org", "expected a mapping"),
        ("documents: [\n", "-", "not valid YAML"),
    ],
)
def test_both_manifest_loaders_read_it_through_one_typed_model(
    tmp_path: Path, text: str, key: str, reason: str
) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(text, encoding="utf-8")
    loaders = (
        lambda: read_manifest(tmp_path),
        lambda: load_manifest(tmp_path),
        lambda: list(iter_manifest(manifest)),
    )
    for load in loaders:
        with pytest.raises(ConfigurationError) as info:
            load()
        assert (info.value.source, info.value.key) == (str(manifest), key)
        assert reason in info.value.reason


def test_the_typed_manifest_keeps_defaults_and_tiers_by_org(corpus: Path) -> None:
    manifest = read_manifest(corpus)
    assert read_manifest(corpus / "manifest.yaml") == manifest
    assert manifest.defaults == {"reviewed_on": "2024-01-01"}
    assert manifest.tiers_by_org == {"NHLBI": "clinical_reference"}
    assert len(manifest.documents) == len(json.loads((corpus / "manifest.yaml").read_text())["documents"])


@pytest.mark.parametrize(
    ("change", "key", "reason"),
    [
        (lambda e: e[0].pop("org"), "documents[0].org", "missing org"),
        (lambda e: e[0].update(url=""), "documents[0].url", "missing url"),
        (lambda e: e[0].update(title="<b>Colds</b>"), "documents[0].title", "contains markup"),
        (lambda e: e[0].update(url="ftp://x.org/a"), "documents[0].url", "not an http(s) URL"),
        (lambda e: e[0].update(file="gone.md"), "documents[0].file", "not found"),
        (lambda e: e[0].update(reviewed_on="last spring"), "documents[0].reviewed_on", "not an ISO date"),
        (lambda e: e.append(dict(e[0])), "documents[1].id", "duplicate id 'colds'"),
        # read as `trust-gateway ingest` reads an entry (the one interpreter, loaders._manifest_entries):
        (lambda e: e[0].pop("id"), "documents[0].id", "missing id"),
        (lambda e: e[0].update(id="colds@2"), "documents[0].id", "may not contain '@'"),
        (lambda e: e[0].update(file="empty.md"), "documents[0]", "empty text"),
        (lambda e: e[0].update(file="colds.rst"), "documents[0].file", "cannot tell the format"),
        (lambda e: e[0].update(format="docx"), "documents[0].format", "unknown format 'docx'"),
        (lambda e: e[0].pop("file"), "documents[0].url", "need a fetcher"),
        (lambda e: e.append("colds.md"), "documents[1]", "expected a mapping"),
    ],
)
def test_the_start_up_manifest_loader_refuses_a_bad_entry_naming_it(
    tmp_path: Path, change: Callable[[list[object]], object], key: str, reason: str
) -> None:
    (tmp_path / "colds.md").write_text("# Colds\n\nRest and fluids help.\n", encoding="utf-8")
    (tmp_path / "colds.rst").write_text("Colds\n=====\n\nRest and fluids help.\n", encoding="utf-8")
    (tmp_path / "empty.md").write_text("\n", encoding="utf-8")
    entries: list[object] = [
        {"id": "colds", "file": "colds.md", "title": "Colds", "org": "NHS", "url": "https://www.nhs.uk/c/"}
    ]
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(json.dumps({"documents": entries}), encoding="utf-8")
    (document,) = load_manifest(tmp_path)
    assert (document.id, document.tier, document.doc_type, document.reviewed_on) == (
        "colds",
        "",
        "article",
        None,
    )
    change(entries)
    manifest.write_text(json.dumps({"documents": entries}), encoding="utf-8")
    with pytest.raises(ConfigurationError) as info:
        load_manifest(tmp_path)
    assert (info.value.source, info.value.key) == (str(manifest), key)
    assert reason in info.value.reason


def test_start_up_and_ingest_read_a_manifest_s_defaults_and_tiers_alike(tmp_path: Path) -> None:
    (tmp_path / "colds.md").write_text("# Colds\n\nRest and fluids help.\n", encoding="utf-8")
    (tmp_path / "flu.md").write_text("# Flu\n\nMost people get better in a week.\n", encoding="utf-8")
    manifest = {
        "defaults": {"org": "NHS", "reviewed_on": "2024-01-01"},
        "tiers_by_org": {"NHS": "clinical_reference"},
        "documents": [
            {"id": "colds", "file": "colds.md", "title": "Colds", "url": "https://www.nhs.uk/c/"},
            {
                "id": "flu",
                "file": "flu.md",
                "title": "Flu",
                "url": "https://www.gov.uk/flu",
                "org": "UKHSA",
                "tier": "guideline",
                "reviewed_on": "2025-03-04",
            },
        ],
    }
    (tmp_path / "manifest.yaml").write_text(json.dumps(manifest), encoding="utf-8")

    def provenance(documents: list[SourceDocument]) -> dict[str, tuple[str, str, str]]:
        return {d.id: (d.org, d.tier, str(d.reviewed_on)) for d in documents}

    started = provenance(load_manifest(tmp_path))
    ingested = provenance([d for d in iter_manifest(tmp_path) if isinstance(d, SourceDocument)])
    assert (
        started
        == ingested
        == {
            "colds": ("NHS", "clinical_reference", "2024-01-01"),  # org and date from defaults, tier by org
            "flu": ("UKHSA", "guideline", "2025-03-04"),  # an entry's own fields win
        }
    )


def test_start_up_reads_every_local_format_as_ingest_does(corpus: Path) -> None:
    manifest = corpus / "manifest.yaml"
    written = json.loads(manifest.read_text(encoding="utf-8"))
    written["documents"] = [e for e in written["documents"] if e.get("id") in ("colds", "gout", "leaflet")]
    manifest.write_text(json.dumps(written), encoding="utf-8")

    started = load_manifest(corpus)
    assert started == list(iter_manifest(corpus))
    documents = {d.id: d for d in started}
    assert list(documents) == ["colds", "gout", "leaflet"]
    # HTML through trafilatura, its page title where the entry names none; a PDF through pypdf
    assert documents["gout"].title.startswith("Gout")
    assert "Cookies" not in documents["gout"].text
    assert "one tablet twice a day" in documents["leaflet"].text


def test_start_up_loads_a_jsonl_entry_s_rows_as_ingest_does(tmp_path: Path) -> None:
    def row(doc_id: str, **fields: str) -> str:
        written = {
            "id": doc_id,
            "title": doc_id.title(),
            "url": f"https://www.cdc.gov/{doc_id}",
            "text": "Rest.",
        }
        return json.dumps({**written, **fields}) + "\n"

    rows = tmp_path / "rows.jsonl"
    rows.write_text(row("asthma", source_org="CDC") + "\n" + row("flu", org="NHS", tier="guideline"))
    manifest = {
        "defaults": {"reviewed_on": "2024-01-01"},
        "tiers_by_org": {"CDC": "clinical_reference"},
        "documents": [{"file": "rows.jsonl", "doc_type": "faq"}],
    }
    (tmp_path / "manifest.yaml").write_text(json.dumps(manifest), encoding="utf-8")

    started = load_manifest(tmp_path)
    assert started == list(iter_manifest(tmp_path))
    assert [(d.id, d.org, d.tier, str(d.reviewed_on), d.doc_type) for d in started] == [
        ("asthma", "CDC", "clinical_reference", "2024-01-01", "faq"),
        ("flu", "NHS", "guideline", "2024-01-01", "faq"),
    ]

    # a bad row stops start-up naming the entry and the row's line (blank lines count)
    for text, key, reason in [
        (row("gout", org="CDC", text=""), "documents[0] line 4", "empty text"),
        (row("gout", org="CDC", url="ftp://x.org"), "documents[0] line 4.url", "not an http(s) URL"),
        ("{not json\n", "documents[0] line 4", "invalid JSON"),
        (row("flu", org="NHS"), "documents[0] line 4.id", "duplicate id 'flu'"),
    ]:
        rows.write_text(row("asthma", source_org="CDC") + "\n" + row("flu", org="NHS") + text)
        with pytest.raises(ConfigurationError) as info:
            load_manifest(tmp_path)
        assert (info.value.source, info.value.key) == (str(tmp_path / "manifest.yaml"), key)
        assert reason in info.value.reason
    rows.unlink()
    with pytest.raises(ConfigurationError, match=r"documents\[0\]\.file: cannot open"):
        load_manifest(tmp_path)


def test_a_default_format_reads_every_file_entry_and_leaves_fetched_urls_alone(tmp_path: Path) -> None:
    """``defaults: {format: html}`` reads files whose suffix says nothing (an export of ``.page`` files)
    as HTML at start-up and at ingestion alike; a URL entry is read by its response, and a ``format:`` of
    its own is refused naming the field (it used to stop with an AssertionError)."""
    page = "<html><head><title>Gout</title></head><body><p>Gout causes sudden joint pain.</p></body></html>"
    (tmp_path / "gout.page").write_text(page, encoding="utf-8")
    documents_listed: list[dict[str, str]] = [
        {"id": "gout", "file": "gout.page", "url": "https://www.nhs.uk/gout/"},
        {"id": "flu", "url": "https://www.nhs.uk/flu/", "title": "Flu"},
        {"id": "cold", "url": "https://www.nhs.uk/cold/", "title": "Cold", "format": "pdf"},
    ]
    manifest = {"defaults": {"org": "NHS", "format": "html"}, "documents": documents_listed}
    (tmp_path / "manifest.yaml").write_text(json.dumps(manifest), encoding="utf-8")

    def fetch(url: str) -> FetchedPage:
        return FetchedPage(
            final_url=url, content_type="text/html", text="Flu lasts about a week.", title="Flu"
        )

    loaded = list(iter_manifest(tmp_path, fetch))
    documents = {d.id: d for d in loaded if isinstance(d, SourceDocument)}
    failures = {f.name: f.reason for f in loaded if isinstance(f, LoadFailure)}
    assert documents["gout"].title == "Gout"
    assert "sudden joint pain" in documents["gout"].text
    assert "<p>" not in documents["gout"].text
    assert documents["flu"].text == "Flu lasts about a week."
    assert failures == {"cold": "format: applies to a file; a fetched URL is read by what its response is"}
    # start-up reads the file entry by the default format too, and names the refused field
    del documents_listed[1]
    (tmp_path / "manifest.yaml").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"documents\[1\]\.format: format: applies to a file"):
        load_manifest(tmp_path)
    del documents_listed[1]
    (tmp_path / "manifest.yaml").write_text(json.dumps(manifest), encoding="utf-8")
    assert [d.title for d in load_manifest(tmp_path)] == ["Gout"]
