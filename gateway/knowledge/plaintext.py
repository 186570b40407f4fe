"""Passages are text: Markdown and HTML become plain text at ingestion, and provenance is checked.

A passage is quoted to patients and shown in clients that may render Markdown or HTML, so nothing in
it may be live markup. ``plain_text`` parses a document as CommonMark with raw HTML (markdown-it-py,
every link destination accepted so that a ``javascript:`` link is parsed, not left as text) and
rewrites only the blocks that hold markup; a clean document comes back unchanged, byte for byte, so
its content hash (and every citation of it) stays what it was:

* a link becomes its text (an autolink to anything but http(s) is dropped); an image its alt text;
* inline HTML tags are dropped, with the content of ``script``, ``style`` and similar elements;
* an HTML block becomes the text of its elements after lxml-html-clean has removed scripts, styles,
  event handlers, ``javascript:`` URLs, forms and embedded objects; block elements become lines;
* headings keep their ``#`` marks and list items their bullets (chunking splits on them).

HTML files first go through trafilatura (the article without navigation, ``loaders.extract_html``);
its Markdown output is cleaned here like any other. ``provenance_problem`` refuses a non-http(s) URL
and markup in a title or organisation, naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

URL_SCHEMES = ("http", "https")
"""The only URL schemes a document's provenance may use."""
DROPPED_ELEMENTS = frozenset(
    ["script", "style", "template", "noscript", "iframe", "object", "embed", "svg", "math", "head", "title"]
)
"""Elements dropped with everything inside them."""
BLOCK_ELEMENTS = frozenset(
    [
        "p",
        "div",
        "section",
        "article",
        "li",
        "ul",
        "ol",
        "tr",
        "table",
        "blockquote",
        "pre",
        "br",
        "hr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "dt",
        "dd",
    ]
)
"""Elements whose text starts on a line of its own."""
MARKUP = re.compile(
    r"<\s*/?\s*[a-zA-Z][a-zA-Z0-9-]*(\s[^<>]*)?/?\s*>"  # an HTML tag
    r"|<!--"  # an HTML comment
    r"|!?\[[^\]\n]*\]\([^)\n]*\)"  # a Markdown link or image
    r"|<[a-zA-Z][a-zA-Z0-9+.-]*:[^>\s]*>"  # an autolink
    r"|\b(?:javascript|vbscript)\s*:"  # a script URL
    r"|\bdata:[a-z]+/[a-z0-9.+-]+[;,]",  # a data URL
    re.IGNORECASE,
)
"""What counts as markup in a title, an organisation or a cleaned passage."""
_INLINE_MARKUP = frozenset(["link_open", "image", "html_inline"])
_TAG = re.compile(r"<\s*(/)?\s*([a-zA-Z][a-zA-Z0-9-]*)")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": True})
    parser.validateLink = lambda url: True  # type: ignore[method-assign]  # parse every link, then drop it
    return parser


def has_markup(text: str) -> bool:
    """Whether ``text`` holds an HTML tag or comment, a Markdown link or image, or a script/data URL."""
    return MARKUP.search(text) is not None


def plain_text(text: str) -> str:
    """``text`` with its markup turned into plain text (see the module docstring); unchanged if clean."""
    if "<" not in text and "](" not in text and ":" not in text:
        return text
    tokens = _parser().parse(text)
    lines = text.split("\n")
    replacements: list[tuple[int, int, list[str]]] = []
    for index, token in enumerate(tokens):
        if token.map is None:
            continue
        start, end = token.map
        if token.type == "html_block" or (
            token.type in ("fence", "code_block") and has_markup(token.content)
        ):
            replacements.append((start, end, html_lines(token.content)))
        elif token.type == "inline" and _needs_cleaning(token):
            source = lines[start:end]
            first = token.content.split("\n", 1)[0]
            cut = source[0].find(first) if first else -1
            prefix = source[0][:cut] if cut > 0 else ""
            if tokens[index - 1].type == "heading_open" and cut < 0:
                prefix = tokens[index - 1].markup + " "
            body = " ".join(part.strip() for part in inline_text(token.children or []).split("\n"))
            body = re.sub(r" {2,}", " ", body)
            replacements.append((start, end, [prefix + body.strip()]))
    if not replacements:
        return text
    for start, end, new in sorted(replacements, reverse=True):
        lines[start:end] = new
    return "\n".join(lines)


def _needs_cleaning(token: Token) -> bool:
    children = token.children or []
    return any(c.type in _INLINE_MARKUP for c in children) or any(
        c.type == "text" and has_markup(c.content) for c in children
    )


def inline_text(children: Sequence[Token]) -> str:
    """The text of an inline token's children: links by their text, images by their alt text, tags
    dropped (with the content of script-like elements), line breaks as newlines."""
    out: list[str] = []
    hidden = 0
    dropped_link = False
    for child in children:
        kind = child.type
        if kind == "html_inline":
            tag = _TAG.match(child.content)
            if tag and tag.group(2).lower() in DROPPED_ELEMENTS and not child.content.rstrip().endswith("/>"):
                hidden = max(0, hidden - 1) if tag.group(1) else hidden + 1
            elif tag and tag.group(2).lower() == "br":
                out.append("\n")
            continue
        if hidden:
            continue
        if kind == "link_open":
            href = str(child.attrGet("href") or "")
            dropped_link = child.markup == "autolink" and urlsplit(href).scheme.lower() not in URL_SCHEMES
        elif kind == "link_close":
            dropped_link = False
        elif dropped_link:
            continue
        elif kind in ("text", "code_inline"):
            out.append(_scrub(child.content))
        elif kind in ("softbreak", "hardbreak"):
            out.append("\n")
        elif kind == "image":
            out.append(_scrub(child.content))
        elif child.children:
            out.append(inline_text(child.children))
    return "".join(out)


def _scrub(text: str) -> str:
    """Remove what is still markup in a text run (a script URL written out, a stray tag)."""
    return re.sub(r"\s{2,}", " ", MARKUP.sub("", text)) if has_markup(text) else text


def html_lines(html: str) -> list[str]:
    """The text of an HTML fragment, one line per block element, after lxml-html-clean."""
    import lxml.html
    from lxml.etree import ParserError
    from lxml_html_clean import Cleaner

    cleaner = Cleaner(
        scripts=True,
        javascript=True,
        comments=True,
        style=True,
        inline_style=True,
        links=True,
        meta=True,
        page_structure=False,
        processing_instructions=True,
        embedded=True,
        frames=True,
        forms=True,
        annoying_tags=True,
        remove_unknown_tags=False,
        safe_attrs_only=True,
    )
    try:
        fragment = cleaner.clean_html(lxml.html.fragment_fromstring(html, create_parent="div"))
    except (ParserError, ValueError):
        return []
    parts: list[str] = []

    def walk(element: lxml.html.HtmlElement) -> None:
        tag = str(element.tag).lower() if isinstance(element.tag, str) else ""
        if tag in DROPPED_ELEMENTS:
            if element.tail:
                parts.append(element.tail)
            return
        block = tag in BLOCK_ELEMENTS
        if block:
            parts.append("\n")
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            parts.append("#" * int(tag[1]) + " ")
        elif tag == "li":
            parts.append("- ")
        if element.text:
            parts.append(element.text)
        for child in element:
            walk(child)
        if block:
            parts.append("\n")
        if element.tail:
            parts.append(element.tail)

    walk(fragment)
    text = _scrub("".join(parts))
    return [re.sub(r"[ \t]+", " ", line).strip() for line in text.split("\n") if line.strip()]


def provenance_problem(field: str, value: str) -> str | None:
    """Why a document's ``url``, ``title`` or ``org`` is refused, naming the field; None when fine."""
    if field == "url":
        parts = urlsplit(value)
        if parts.scheme.lower() not in URL_SCHEMES or not parts.netloc:
            shown = value if len(value) <= 80 else value[:77] + "..."
            return f"url: {shown!r} is not an http(s) URL"
        if any(c.isspace() or ord(c) < 32 for c in value):
            return "url: contains whitespace or control characters"
        return None
    if has_markup(value):
        return f"{field}: contains markup (an HTML tag, a Markdown link or a script URL): {value[:80]!r}"
    return None
