"""Kinds of answer a question asks for (treatment, cause, symptoms, ...), one vocabulary in
``policies/extractive.yaml`` ``question_kinds``: the extractive responder ranks sentences with it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from pydantic import with_config

from gateway.validation import FILE_CONFIG, compile_all


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class QuestionKind:
    """A kind of question (``question`` matches it) and what an answering sentence says (``answer``)."""

    name: str
    question: str
    answer: str

    def __post_init__(self) -> None:
        compile_all(self, (self.question,), "question")
        compile_all(self, (self.answer,), "answer")

    @cached_property
    def asked(self) -> re.Pattern[str]:
        return re.compile(self.question, re.IGNORECASE)

    @cached_property
    def answered(self) -> re.Pattern[str]:
        return re.compile(self.answer, re.IGNORECASE)
