"""``policies/extractive.yaml``: how the extractive responder ranks a passage's sentences for a
question (its focus words and the kind of answer it asks for). See the file for the why."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import Field, with_config

from gateway.knowledge.answer_kinds import QuestionKind
from gateway.resources import bundled
from gateway.validation import FILE_CONFIG, load_file

POLICY_FILE = "extractive.yaml"


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class ExtractivePolicy:
    """Weights added to a sentence's cosine: its share of the question's focus words, and the cue
    of the question's kind."""

    focus_weight: Annotated[float, Field(ge=0.0, le=1.0)] = 0.0
    cue_weight: Annotated[float, Field(ge=0.0, le=1.0)] = 0.0
    heading_weight: Annotated[float, Field(ge=0.0, le=0.1)] = 0.0
    """Read by retrieval (answer_kinds.SectionKinds), not by the responder."""
    ignored_words: tuple[str, ...] = ()
    question_kinds: tuple[QuestionKind, ...] = ()

    def kinds(self, question: str) -> tuple[QuestionKind, ...]:
        """The kinds of answer ``question`` asks for (none: cosine and focus words rank alone)."""
        return tuple(k for k in self.question_kinds if k.answer and k.asked.search(question))


def load_extractive_policy(directory: Path | None = None) -> ExtractivePolicy:
    """``extractive.yaml`` of ``directory``, else of the bundled policies; errors name file and key."""
    path = (directory / POLICY_FILE) if directory is not None else None
    if path is None or not path.is_file():
        path = bundled("policies") / POLICY_FILE
    return load_file(path, ExtractivePolicy)
