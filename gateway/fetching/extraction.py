"""A fetched page's text: trafilatura for HTML (in a worker thread), plain decoding for text."""

from __future__ import annotations

import anyio.to_thread

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown"})


def decode_body(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


async def extract_text(content_type: str, body: bytes, charset: str | None) -> tuple[str, str]:
    """(text, title): trafilatura for HTML (in a worker thread), plain decoding for text."""
    if content_type in TEXT_TYPES:
        return decode_body(body, charset).strip(), ""
    html = decode_body(body, charset)
    return await anyio.to_thread.run_sync(html_text, html)


def html_text(html: str) -> tuple[str, str]:
    import trafilatura

    text = trafilatura.extract(html, include_comments=False, include_tables=True, favor_recall=True) or ""
    if not text.strip():
        _tree, baseline, _length = trafilatura.baseline(html)
        text = baseline or ""
    metadata = trafilatura.extract_metadata(html)
    title = (metadata.title if metadata is not None else None) or ""
    # one block per line: make each a paragraph so sentence splitting never joins a heading to text
    paragraphs = [line.strip() for line in text.splitlines() if line.strip()]
    return "\n\n".join(paragraphs), str(title)
