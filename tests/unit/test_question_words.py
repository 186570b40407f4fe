"""The one question-word list (gateway/data/question_words.yaml), validated on load, read when the
extractive responder (or a knowledge store without a query planner) is built at start-up."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from gateway.drafting.extractive import ExtractiveResponder, is_heading_question
from gateway.errors import ConfigurationError
from gateway.models.embedding import Embedder
from gateway.text import QUESTION_WORDS_PATH, QuestionWords, load_question_words
from tests.support.data_files import assert_refused, broken_copy

ASKING = load_question_words()


def test_the_bundled_list_loads() -> None:
    assert {"what", "how", "whom", "whose"} <= ASKING


@pytest.mark.parametrize("word", sorted(ASKING))
def test_a_short_line_starting_with_a_question_word_is_a_heading(word: str) -> None:
    assert is_heading_question(f"{word.capitalize()} causes gout", ASKING)


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


def test_a_broken_list_stops_the_extractive_responder_being_built(tmp_path: Path) -> None:
    """Read when the responder is built (bootstrap.build_upstream, at start-up), not on a first question."""
    broken = broken_copy(QUESTION_WORDS_PATH, tmp_path, "words: [what,", "words: [What,")
    no_model = cast(Embedder, None)  # the responder only keeps its embedder: nothing is encoded here
    with pytest.raises(ConfigurationError) as info:
        ExtractiveResponder(no_model, question_words=broken)
    assert str(broken) in str(info.value)
    assert "lower-case" in str(info.value)
