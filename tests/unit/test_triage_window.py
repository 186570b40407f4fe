"""What triage encodes of a long post (``encode_max_tokens``: its last tokens) and when (#31 item 7,
latency): off the event loop, and only when the rule layers have not decided. No model is loaded:
the model's tokenizer file and a scripted encoder of random unit vectors stand in for MiniLM."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from gateway.domain import Scope, Vector, unit_rows
from gateway.errors import InvalidValue
from gateway.models.embedding import default_model_path
from gateway.testing.conversations import conversation
from gateway.triage.planning import plan
from gateway.triage.policy import TriagePolicy, TriageSettings
from gateway.triage.semantic import SemanticTriage, TokenWindow
from gateway.triage.triager import LayeredTriager
from tests.support.shipped_triage import GENERAL, TRIAGE
from tests.support.triage import reader_of

MODEL_PATH = default_model_path()

BACKGROUND = (
    "Some background first: in 2019 I had my gallbladder out and the recovery was slow, and two years "
    "ago I was treated for a stomach ulcer that has not come back since then as far as I know. "
)
NOW = "Since Monday my right knee has been stiff after running. Should I rest it or keep jogging?"


class Scripted:
    """An encoder of random unit vectors that records what it was given and on which thread."""

    def __init__(self, fails: bool = False) -> None:
        self.model_path = MODEL_PATH
        self.calls: list[list[str]] = []
        self.threads: list[int] = []
        self.fails = fails
        self._rng = np.random.default_rng(0)

    def encode(self, texts: Sequence[str]) -> Vector:
        self.calls.append(list(texts))
        self.threads.append(threading.get_ident())
        if self.fails:
            raise RuntimeError("the embedding model failed")
        return unit_rows(self._rng.normal(size=(len(texts), 384)).astype(np.float32))


def windowed(tokens: int) -> TriagePolicy:
    settings = dataclasses.replace(TRIAGE.settings, encode_max_tokens=tokens)
    return dataclasses.replace(TRIAGE, settings=settings)


def scripted_triage(policy: TriagePolicy) -> tuple[SemanticTriage, Scripted]:
    encoder = Scripted()
    return SemanticTriage(policy, encoder), encoder


def test_a_long_text_keeps_its_last_tokens_from_a_word_start_and_a_short_one_is_unchanged() -> None:
    window = TokenWindow.of_model(MODEL_PATH, 32)
    assert window(NOW) == NOW
    cut = window(BACKGROUND + NOW)
    assert NOW in cut
    assert (BACKGROUND + NOW).endswith(cut)
    assert len(cut) < len(BACKGROUND + NOW)
    assert (BACKGROUND + NOW)[-len(cut) - 1].isspace()
    tokenizer = Tokenizer.from_file(str(Path(MODEL_PATH) / "tokenizer.json"))  # as the window reads it
    tokenizer.no_padding()
    tokenizer.no_truncation()
    assert len(tokenizer.encode(cut).ids) <= 32  # the special tokens included


def test_the_window_is_off_as_shipped_and_bounds_only_what_is_encoded() -> None:
    shipped, _ = scripted_triage(TRIAGE)
    assert shipped.window is None
    assert shipped.encoded([BACKGROUND + NOW]) == [BACKGROUND + NOW]
    bounded, _ = scripted_triage(windowed(32))
    assert bounded.encoded([NOW, BACKGROUND + NOW]) == [NOW, bounded.window(BACKGROUND + NOW)]  # type: ignore[misc]


@pytest.mark.parametrize("tokens", [-1, 8, 15, 257])
def test_a_window_outside_its_range_is_refused(tokens: int) -> None:
    with pytest.raises(InvalidValue):
        TriageSettings(encode_max_tokens=tokens)


async def test_the_encode_runs_off_the_event_loop_and_is_given_the_windowed_texts() -> None:
    semantic, encoder = scripted_triage(windowed(32))
    encoder.calls.clear()
    await LayeredTriager(GENERAL, semantic, encoder).run(conversation(BACKGROUND + NOW))
    assert encoder.calls == [semantic.encoded([BACKGROUND + NOW])]
    assert encoder.threads[-1] != threading.get_ident()


async def test_an_emergency_the_rules_decide_is_returned_without_an_encode() -> None:
    semantic, _ = scripted_triage(TRIAGE)
    failing = Scripted(fails=True)
    triager = LayeredTriager(GENERAL, semantic, failing)
    result = await triager.run(conversation("my dad is unconscious and not breathing"))
    assert result.scope is Scope.EMERGENCY
    assert failing.calls == []
    with pytest.raises(RuntimeError, match="embedding model failed"):
        await triager.run(conversation(NOW))
    assert failing.calls == [[NOW]]


async def test_each_planned_text_is_encoded_in_its_own_call_in_order() -> None:
    semantic, encoder = scripted_triage(TRIAGE)
    encoder.calls.clear()
    triager = LayeredTriager(GENERAL, semantic, encoder)
    message = "My knee is stiff after running. Should I rest it? And is ibuprofen gel any use for it?"
    request = conversation("I run three times a week.", "Thanks.", message)
    planned = semantic.encoded(plan(request, GENERAL, TRIAGE, reader_of(TRIAGE)).texts)
    await triager.run(request)
    assert len(planned) > 3
    assert encoder.calls == [[text] for text in planned]
