"""Split a document into passages: by Markdown headings, then by sentences up to a size budget.

Chunk ids are stable: ``<document id>:<section index>.<chunk index>``, so re-ingesting an unchanged
document yields the same ids and citations in audit records stay resolvable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.domain import Span
from gateway.knowledge.corpus import SourceDocument
from gateway.text import sentence_spans

TARGET_CHARS = 700
"""Passage size: a few sentences, small enough to be specific evidence, big enough for context."""
OVERLAP_SENTENCES = 1
"""Sentences repeated at the start of the next chunk so a fact split across a boundary survives."""

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.MULTILINE)
_MARKUP = re.compile(r"(\*\*|__|`)")
_BULLET = re.compile(r"^\s*[-*•]\s+", re.MULTILINE)


@dataclass(frozen=True)
class Chunk:
    id: str
    document_id: str
    section: str
    text: str
    sentence_spans: tuple[Span, ...]


def sections(markdown: str) -> list[tuple[str, str]]:
    """(heading, body) pairs; text before the first heading belongs to an empty heading."""
    result: list[tuple[str, str]] = []
    last_heading, last_end = "", 0
    for match in _HEADING.finditer(markdown):
        result.append((last_heading, markdown[last_end : match.start()]))
        last_heading, last_end = match.group(2).strip(), match.end()
    result.append((last_heading, markdown[last_end:]))
    return [(h, _clean(b)) for h, b in result if _clean(b)]


def _clean(body: str) -> str:
    """Plain prose: markup removed, wrapped lines joined, each bullet item its own sentence."""
    body = _MARKUP.sub("", body)
    paragraphs: list[str] = []
    current: list[str] = []
    for raw in body.splitlines():
        line = raw.strip()
        if _BULLET.match(raw):
            if current:
                paragraphs.append(" ".join(current))
                current = []
            item = _BULLET.sub("", raw).strip()
            paragraphs.append(item if item[-1:] in ".!?" else item + ".")
        elif line:
            current.append(line)
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    if current:
        paragraphs.append(" ".join(current))
    return "\n\n".join(p for p in paragraphs if p.strip(". ")).strip()


def chunk_document(document: SourceDocument, target_chars: int = TARGET_CHARS) -> list[Chunk]:
    chunks: list[Chunk] = []
    for section_index, (heading, body) in enumerate(sections(document.text)):
        sentences = [body[s.start : s.end] for s in sentence_spans(body)]
        groups: list[list[str]] = []
        current: list[str] = []
        for sentence in sentences:
            if current and sum(len(s) + 1 for s in current) + len(sentence) > target_chars:
                groups.append(current)
                current = current[-OVERLAP_SENTENCES:] if OVERLAP_SENTENCES else []
            current.append(sentence)
        if current and (not groups or current != groups[-1][-len(current) :]):
            groups.append(current)
        for chunk_index, group in enumerate(groups):
            text = " ".join(group)
            chunks.append(
                Chunk(
                    id=f"{document.id}:{section_index}.{chunk_index}",
                    document_id=document.id,
                    section=heading,
                    text=text,
                    sentence_spans=tuple(sentence_spans(text)),
                )
            )
    return chunks
