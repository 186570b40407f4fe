"""Passages are text (issue #32, item 2): a hostile corpus of Markdown and HTML is ingested as plain
text, non-http(s) URLs and markup in titles and organisations are refused naming the document and the
field, and answer time never releases markup from a passage (the policy's last guard)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.bootstrap import open_store
from gateway.claims.bounds import instruction_sentence
from gateway.cleanup.stage import judge_claims
from gateway.domain import Passage, Span, Statement, StatementKind, Verdict, VerdictLabel
from gateway.knowledge.corpus import SourceDocument
from gateway.knowledge.ingest import Ingestor
from gateway.knowledge.loaders import LoadFailure, iter_jsonl, iter_manifest
from gateway.knowledge.plaintext import has_markup, plain_text
from gateway.policies import load_configured_policy
from gateway.settings import Settings
from gateway.vocabulary import VerdictCheck
from tests.conftest import FIXTURE_KB, REPO

HOSTILE_MD = "\n".join(
    [
        "# Gout <b>basics</b>",
        "",
        "## Treatment",
        "",
        "Rest the joint and [click here](javascript:alert('md')) for help. "
        '<a href="javascript:alert(\'a\')" onclick="steal()">Read the leaflet</a> today.',
        "Cold packs can ease the pain.<script>alert('inline')</script> "
        "![tracker](data:image/png;base64,AAAA)",
        "",
        '<div onmouseover="steal()"><script>document.cookie</script><style>p {color: red}</style>'
        "<p>Drink plenty of water.</p></div>",
        "",
        '- Take anti-inflammatory medicine as prescribed <img src=x onerror="steal()">',
        "- See <javascript:alert('auto')> or <https://www.nhs.uk/conditions/gout/>",
        "",
    ]
)

HOSTILE_HTML = """<html><head><title>Gout care</title><script>alert('head')</script></head>
<body><nav><a href="/">Home</a></nav><article><h1>Gout care</h1>
<p>Gout is a kind of arthritis that causes sudden pain in a joint.
<a href="javascript:alert('x')" onclick="steal()">Learn more about gout</a> from your pharmacist.</p>
<script>window.location='https://evil.example'</script><style>body {display:none}</style>
<p onmouseover="steal()">Raise the affected limb and keep it cool to ease the swelling.</p>
</article></body></html>
"""


def entry(**fields: str) -> str:
    base = {
        "id": "gout",
        "file": "docs/gout.md",
        "title": "Gout",
        "org": "NHS",
        "url": "https://www.nhs.uk/gout/",
    }
    base.update(fields)
    return "  - " + json.dumps(base)


def corpus(tmp_path: Path, *entries: str) -> Path:
    (tmp_path / "docs").mkdir(parents=True, exist_ok=True)
    (tmp_path / "docs" / "gout.md").write_text(HOSTILE_MD, encoding="utf-8")
    (tmp_path / "docs" / "gout.html").write_text(HOSTILE_HTML, encoding="utf-8")
    (tmp_path / "manifest.yaml").write_text("documents:\n" + "\n".join(entries) + "\n", encoding="utf-8")
    return tmp_path


def test_markdown_becomes_plain_text_with_the_link_text_kept() -> None:
    text = plain_text(HOSTILE_MD)
    assert not has_markup(text), text
    for kept in ("click here", "Read the leaflet", "Drink plenty of water.", "Cold packs can ease the pain."):
        assert kept in text
    for gone in ("alert", "steal", "cookie", "color", "javascript", "data:", "onclick", "<", "]("):
        assert gone not in text
    assert "# Gout basics" in text
    assert "## Treatment" in text  # headings stay: chunking splits on them
    assert "- Take anti-inflammatory medicine as prescribed" in text  # so do bullets


def test_a_clean_corpus_is_left_byte_for_byte() -> None:
    """The bundled and fixture corpora have no markup: their text, so their content hashes, do not move."""
    documents = [*(REPO / "knowledge" / "docs").glob("*.md"), *(FIXTURE_KB / "docs").glob("*.md")]
    assert len(documents) > 50
    for path in documents:
        source = path.read_text(encoding="utf-8")
        assert plain_text(source) == source, path.name


def test_html_and_markdown_documents_are_ingested_as_text(tmp_path: Path) -> None:
    root = corpus(
        tmp_path,
        entry(),
        entry(id="gout-html", file="docs/gout.html", title="Gout care"),
    )
    loaded = list(iter_manifest(root))
    assert all(isinstance(d, SourceDocument) for d in loaded), loaded
    for document in loaded:
        assert isinstance(document, SourceDocument)
        assert not has_markup(document.text), document.text
        assert "alert" not in document.text
        assert "steal" not in document.text
    html = next(d for d in loaded if isinstance(d, SourceDocument) and d.id == "gout-html")
    assert "Learn more about gout" in html.text
    assert "Raise the affected limb" in html.text


def test_bad_urls_and_markup_in_provenance_are_refused_naming_document_and_field(tmp_path: Path) -> None:
    root = corpus(
        tmp_path,
        entry(id="js-url", url="javascript:alert(1)"),
        entry(id="data-url", url="data:text/html;base64,PHNjcmlwdD4="),
        entry(id="ftp-url", url="ftp://files.example.org/gout.md"),
        entry(id="html-title", title="Gout <script>alert(1)</script>"),
        entry(id="link-org", org="[NHS](javascript:alert(1))"),
        entry(id="fine"),
    )
    failures = {f.name: f.reason for f in iter_manifest(root) if isinstance(f, LoadFailure)}
    assert set(failures) == {"js-url", "data-url", "ftp-url", "html-title", "link-org"}
    for name in ("js-url", "data-url", "ftp-url"):
        assert failures[name].startswith("url: "), failures[name]
        assert "not an http(s) URL" in failures[name]
    assert failures["html-title"].startswith("title: contains markup")
    assert failures["link-org"].startswith("org: contains markup")

    rows = tmp_path / "rows.jsonl"
    row = {
        "id": "r1",
        "title": "Gout",
        "org": "NIH",
        "url": "javascript:void(0)",
        "text": "Gout is arthritis.",
    }
    rows.write_text(json.dumps(row) + "\n", encoding="utf-8")
    (failure,) = list(iter_jsonl(rows))
    assert isinstance(failure, LoadFailure)
    assert failure.name == "rows.jsonl:1 (r1)"
    assert failure.reason.startswith("url: ")


@pytest.mark.slow  # loads MiniLM, Chroma or the services
def test_a_hostile_corpus_is_searched_as_plain_text(embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = corpus(tmp_path / "kb", entry(), entry(id="gout-html", file="docs/gout.html", title="Gout care"))
    store = open_store(Settings(data_dir=tmp_path / "data"), embedder)
    report = Ingestor(store, embedder).run(iter_manifest(root))
    assert report.failures == []
    passages = store.search_sync("how do I treat gout pain and swelling", 10)
    assert {p.document_id for p in passages} == {"gout", "gout-html"}
    for passage in passages:
        assert not has_markup(passage.text), passage.text
        assert not has_markup(passage.title)


def patterns() -> tuple[str, ...]:
    return tuple(load_configured_policy(Settings()).thresholds.cleanup.planted_instruction)


def test_answer_time_never_releases_markup_from_a_passage() -> None:
    """A passage of an index built before (markup still in it): a claim quoting it is removed and
    refuses the answer; a statement shown unverified with markup refuses it too."""
    policy = load_configured_policy(Settings()).thresholds.cleanup
    for hostile in (
        "Rest the joint and [click here](javascript:alert(1)) for help.",
        "Cold packs can ease the pain.<script>alert(1)</script>",
        'Read the <a href="https://x.org">leaflet</a> today.',
        "See the chart ![chart](data:image/png;base64,AAAA) for doses.",
    ):
        passage = Passage("p1", "d1", hostile, "Gout", "https://x.org", "NHS", "guideline", None, 0.9)
        claim = Statement(hostile, Span(0, len(hostile)), StatementKind.CLAIM, (1,), hostile)
        verdict = Verdict(VerdictLabel.SUPPORTED, 1.0, "anchoring", "quote_found", "")
        (result,) = judge_claims([claim], [verdict], [passage], policy)
        assert result.verdict.check is VerdictCheck.PLANTED_INSTRUCTION, hostile
        assert result.final_text is None
        shown = Statement(hostile, Span(0, len(hostile)), StatementKind.DISCLAIMER)
        assert instruction_sentence([shown], patterns()), hostile
    plain = Statement("Rest the joint [1].", Span(0, 19), StatementKind.DISCLAIMER)
    assert not instruction_sentence([plain], patterns())  # a citation marker is not a link
