"""Kinds of answer a question asks for (treatment, cause, symptoms, ...), one vocabulary in
``policies/extractive.yaml`` ``question_kinds``: the extractive responder ranks sentences with it,
retrieval moves up the passages whose section heading (their document title: "What are the
treatments for X?", "How to prevent X", an operator's "Treatment" heading) is of the kind asked, and
the query planner adds a kind's ``search_words`` to the BM25 query (synonyms.py reads them).

Most misses of a right topic are its wrong section (symptoms asked, treatments found); BM25 scores a
section's topic words, not the kind of its heading, so the boost is small (``heading_weight``, on the
reciprocal-rank-fusion scale) and only among the fused candidates: it orders sections of one topic and
cannot bring in a topic the search did not find. A question asking no particular kind is left as is."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Annotated

from pydantic import Field, with_config

from gateway.knowledge.synonyms import Group
from gateway.validation import FILE_CONFIG, compile_all, read_yaml, validate


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class QuestionKind:
    """A kind of question (``question`` matches it), what an answering sentence says (``answer``;
    empty: not used by the extractive responder) and what a section answering it is headed
    (``heading``; empty: not a kind of section). A ``fallback`` kind ("what is X?") counts only when
    no other kind does, for a question and for a heading alike. ``search_words``: how patients word
    this question -> the words the sources title such a section with, for the BM25 query (query.py)."""

    name: str
    question: str
    answer: str = ""
    heading: str = ""
    fallback: bool = False
    search_words: Group = field(default=None, hash=False)

    def __post_init__(self) -> None:
        compile_all(self, (self.question,), "question")
        compile_all(self, tuple(p for p in (self.answer,) if p), "answer")
        compile_all(self, tuple(p for p in (self.heading,) if p), "heading")

    @cached_property
    def asked(self) -> re.Pattern[str]:
        return re.compile(self.question, re.IGNORECASE)

    @cached_property
    def answered(self) -> re.Pattern[str]:
        return re.compile(self.answer, re.IGNORECASE)

    @cached_property
    def headed(self) -> re.Pattern[str]:
        return re.compile(self.heading, re.IGNORECASE)


HEADINGS_KEPT = 100_000
"""Headings whose kinds ``SectionKinds`` keeps at most (a cache, not a vocabulary)."""


def _matching(
    kinds: Sequence[QuestionKind], text: str, pattern: Callable[[QuestionKind], re.Pattern[str]]
) -> frozenset[str]:
    found = [k for k in kinds if pattern(k).search(text)]
    specific = [k for k in found if not k.fallback]
    return frozenset(k.name for k in (specific or found))


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class SectionKinds:
    """The section kinds of ``extractive.yaml`` (the kinds with a ``heading``) and the boost a
    candidate passage gets when its heading is of a kind the question asks."""

    heading_weight: Annotated[float, Field(ge=0.0, le=0.1)] = 0.0
    question_kinds: tuple[QuestionKind, ...] = ()

    @cached_property
    def sectioned(self) -> tuple[QuestionKind, ...]:
        return tuple(k for k in self.question_kinds if k.heading)

    @cached_property
    def search_words(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Every kind's ``search_words`` (phrase, words), in file order."""
        return tuple(pair for kind in self.question_kinds for pair in (kind.search_words or {}).items())

    def asked(self, question: str) -> frozenset[str]:
        """The section kinds ``question`` asks for (empty: it asks nothing particular)."""
        return _matching(self.sectioned, question, lambda k: k.asked)

    @cached_property
    def _headings(self) -> dict[str, frozenset[str]]:
        """Kinds of the headings seen (a knowledge base has a few thousand titles; cleared past
        ``HEADINGS_KEPT``): the same titles come back as candidates question after question."""
        return {}

    def of_heading(self, heading: str) -> frozenset[str]:
        """The section kinds a heading (a document title) announces."""
        known = self._headings.get(heading)
        if known is None:
            if len(self._headings) >= HEADINGS_KEPT:
                self._headings.clear()
            known = self._headings[heading] = _matching(self.sectioned, heading, lambda k: k.headed)
        return known

    def rerank(
        self,
        fused: Sequence[tuple[str, float]],
        asked: frozenset[str],
        heading_of: Callable[[str], str],
        depth: int = 50,
    ) -> list[str]:
        """Record ids of ``fused`` (id, fusion score; best first), the first ``depth`` re-ordered by
        score plus ``heading_weight`` when the record's heading is of an asked kind."""
        ids = [rid for rid, _ in fused]
        if not asked or self.heading_weight <= 0.0:
            return ids
        head = fused[:depth]
        key = {
            rid: score + (self.heading_weight if self.of_heading(heading_of(rid)) & asked else 0.0)
            for rid, score in head
        }
        order = sorted(range(len(head)), key=lambda i: (-key[head[i][0]], i))
        return [head[i][0] for i in order] + ids[depth:]


def load_section_kinds(path: Path) -> SectionKinds:
    """``heading_weight`` and ``question_kinds`` of ``extractive.yaml`` at ``path`` (its other keys
    belong to the extractive responder); none when the file is missing."""
    if not path.is_file():
        return SectionKinds()
    data = read_yaml(path) or {}
    picked = {key: data[key] for key in ("heading_weight", "question_kinds") if key in data}
    return validate(SectionKinds, picked, str(path))
