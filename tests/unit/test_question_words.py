"""The one question-word list (gateway/data/question_words.yaml), validated on load, used by the
extractive responder and the knowledge store."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.drafting.extractive import is_heading_question
from gateway.text import QuestionWords, question_words
from tests.support.data_files import assert_refused


def test_the_bundled_list_loads() -> None:
    assert {"what", "how", "whom", "whose"} <= question_words()


@pytest.mark.parametrize("word", sorted(question_words()))
def test_a_short_line_starting_with_a_question_word_is_a_heading(word: str) -> None:
    assert is_heading_question(f"{word.capitalize()} causes gout")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("words: [What]\n", "lower-case"),
        ("words: []\n", "at least one"),
        ("words: [how]\nextra: 1\n", "extra: unknown key"),
    ],
)
def test_a_bad_list_is_refused_naming_the_key(tmp_path: Path, body: str, reason: str) -> None:
    assert_refused(tmp_path / "question_words.yaml", body, QuestionWords, reason)
