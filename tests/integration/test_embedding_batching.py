"""The embedder's group-commit coalescing, its text cache and its thread settings."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from gateway.domain import Vector
from gateway.errors import ConfigurationError
from gateway.models.cpu import bulk_threads, serving_threads
from gateway.models.embedding import (
    CACHEABLE_CALL,
    CACHEABLE_CHARS,
    Embedder,
    ModelCall,
)
from gateway.settings import Settings
from tests.support.waiting import changed_until, wait_for

QUESTIONS = [
    "How much paracetamol can an adult take in one day?",
    "What are the early signs of type 2 diabetes?",
    "How should eye drops be used after cataract surgery?",
    "Can ibuprofen upset the stomach?",
    "How is high blood pressure treated?",
    "What causes gout attacks?",
    "Is it safe to drive after a general anaesthetic?",
    "When should a fever in a child be checked by a doctor?",
]


class ModelCalls:
    """Wraps an embedder's model calls: records each call's texts, sets ``entered`` and first runs the
    test's ``before``."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.before: Callable[[list[str]], None] | None = None
        self.entered = threading.Event()
        """Set once a call is inside the model (since the calls were last forgotten)."""

    def wrap(self, real: ModelCall) -> ModelCall:
        def call(texts: list[str]) -> Vector:
            self.batches.append(list(texts))
            self.entered.set()
            if self.before is not None:
                self.before(texts)
            return real(texts)

        return call

    @property
    def sizes(self) -> list[int]:
        return [len(batch) for batch in self.batches]

    def gate_first(self) -> threading.Event:
        """Forget the calls so far; make the next one wait until the test sets the returned event."""
        gate = threading.Event()
        self.batches.clear()
        self.entered.clear()

        def wait(texts: list[str]) -> None:
            if len(self.batches) == 1:
                assert gate.wait(30)

        self.before = wait
        return gate


_CALLS = ModelCalls()


@pytest.fixture(scope="module")
def plain() -> Embedder:
    """An embedder without cache, so every text reaches the model (through ``calls``)."""
    return Embedder(cache_size=0, around_model=_CALLS.wrap)


@pytest.fixture(scope="module")
def capped() -> Embedder:
    """Like ``plain``, but at most two texts in one model call."""
    return Embedder(cache_size=0, around_model=_CALLS.wrap, max_coalesced_texts=2)


@pytest.fixture
def calls() -> Iterator[ModelCalls]:
    """The model calls of ``plain`` made in this test."""
    _CALLS.batches.clear()
    _CALLS.entered.clear()
    _CALLS.before = None
    yield _CALLS
    _CALLS.before = None


def _cosines(a: Vector, b: Vector) -> Vector:
    return (a * b).sum(axis=1)


def _wait_for_queue(embedder: Embedder, length: int) -> None:
    changed_until(embedder.changes, lambda: embedder.waiting >= length, f"{length} callers queued")


def test_concurrent_callers_are_encoded_in_one_call_and_get_exactly_their_own_vectors(
    plain: Embedder, calls: ModelCalls
) -> None:
    requests = [QUESTIONS[i : i + 1 + i % 3] for i in range(len(QUESTIONS))]
    alone = [plain.encode(texts) for texts in requests]
    gate = calls.gate_first()
    results: dict[int, Vector] = {}

    def call(i: int) -> None:
        results[i] = plain.encode(requests[i])

    first = threading.Thread(target=call, args=(0,))
    first.start()
    wait_for(calls.entered, "the first caller leads at once and is inside the model")
    others = [threading.Thread(target=call, args=(i,)) for i in range(1, len(requests))]
    for thread in others:
        thread.start()
    _wait_for_queue(plain, len(others))
    gate.set()
    for thread in [first, *others]:
        thread.join(30)
    assert calls.sizes == [len(requests[0]), sum(len(t) for t in requests[1:])]  # one call for all who queued
    for i, texts in enumerate(requests):
        assert results[i].shape == (len(texts), Embedder.dimensions)
        assert np.all(_cosines(results[i], alone[i]) >= 0.9999), f"caller {i} got another caller's vectors"
    assert not plain.busy
    assert not plain.waiting


def test_a_model_failure_reaches_every_caller_in_the_call_and_the_embedder_recovers(
    plain: Embedder, calls: ModelCalls
) -> None:
    gate = threading.Event()

    def failing(texts: list[str]) -> None:
        if len(calls.batches) == 1:
            assert gate.wait(30)
        else:
            raise RuntimeError("model exploded")

    calls.before = failing
    outcomes: dict[int, object] = {}

    def call(i: int) -> None:
        try:
            outcomes[i] = plain.encode([QUESTIONS[i]])
        except RuntimeError as err:
            outcomes[i] = err

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    threads[0].start()
    wait_for(calls.entered, "the first caller is inside the model")
    for thread in threads[1:]:
        thread.start()
    _wait_for_queue(plain, 3)
    gate.set()
    for thread in threads:
        thread.join(30)
    assert isinstance(outcomes[0], np.ndarray)
    for i in (1, 2, 3):
        assert isinstance(outcomes[i], RuntimeError)
        assert "model exploded" in str(outcomes[i])
    calls.before = None
    assert plain.encode([QUESTIONS[0]]).shape == (1, Embedder.dimensions)


def test_one_caller_alone_is_encoded_at_once(plain: Embedder) -> None:
    before = plain.model_calls
    for question in QUESTIONS[:3]:
        plain.encode_one(question)
    assert plain.model_calls == before + 3
    assert not plain.busy


def test_cache_serves_repeated_texts_without_the_model_and_stays_bounded() -> None:
    embedder = Embedder(cache_size=3)
    first = embedder.encode(QUESTIONS[:2])
    calls = embedder.model_calls
    again = embedder.encode([QUESTIONS[1], QUESTIONS[0], QUESTIONS[1]])
    assert embedder.model_calls == calls  # all three rows from the cache
    assert np.allclose(again, first[[1, 0, 1]])
    again[0] *= 2  # the caller's array is its own; the cache is not changed through it
    assert np.allclose(embedder.encode([QUESTIONS[1]])[0], first[1])
    for question in QUESTIONS[2:7]:
        embedder.encode_one(question)
    assert embedder.cache_len == 3
    embedder.encode_one("x" * (CACHEABLE_CHARS + 1))
    assert embedder.cache_len == 3
    assert ("x" * (CACHEABLE_CHARS + 1)) not in embedder.cached_texts
    bulk = [f"sentence number {i} about nothing" for i in range(CACHEABLE_CALL + 1)]
    kept = embedder.cached_texts
    embedder.encode(bulk)
    assert embedder.cached_texts == kept  # bulk calls (ingestion) never evict the query cache


def test_thread_defaults_and_settings_validation() -> None:
    assert serving_threads(2) == 1
    assert serving_threads(16) == 4
    assert bulk_threads(2) == 2
    assert Settings.from_env({"GATEWAY_EMBEDDING_THREADS": "2"}).embedding_threads == 2
    with pytest.raises(ConfigurationError, match="GATEWAY_EMBEDDING_THREADS"):
        Settings.from_env({"GATEWAY_EMBEDDING_THREADS": "-1"})
    with pytest.raises(ConfigurationError, match="GATEWAY_EMBEDDING_CACHE_SIZE"):
        Settings.from_env({"GATEWAY_EMBEDDING_CACHE_SIZE": "-5"})


def test_a_long_queue_is_served_in_capped_calls_each_led_by_the_next_waiter(
    plain: Embedder, capped: Embedder, calls: ModelCalls
) -> None:
    alone = plain.encode(QUESTIONS[:6])
    gate = calls.gate_first()
    results: dict[int, Vector] = {}

    def call(i: int) -> None:
        results[i] = capped.encode([QUESTIONS[i]])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(6)]
    threads[0].start()
    wait_for(calls.entered, "the first caller is inside the model")
    for thread in threads[1:]:
        thread.start()
    _wait_for_queue(capped, 5)
    gate.set()
    for thread in threads:
        thread.join(30)
    assert calls.sizes == [1, 2, 2, 1]
    for i in range(6):
        assert float(results[i][0] @ alone[i]) >= 0.9999
    assert not capped.busy
    assert not capped.waiting


def test_a_bulk_call_is_encoded_in_slices_that_queries_can_queue_between(
    plain: Embedder, capped: Embedder, calls: ModelCalls
) -> None:
    alone = plain.encode(QUESTIONS[:5])
    calls.batches.clear()
    sliced = capped.encode(QUESTIONS[:5])
    assert calls.sizes == [2, 2, 1]
    assert np.all(_cosines(sliced, alone) >= 0.9999)


def test_a_bulk_call_is_sliced_by_length_and_returned_in_the_callers_order(
    plain: Embedder, capped: Embedder, calls: ModelCalls
) -> None:
    """Slices of similar length pad little; the vectors still come back in the order asked."""
    texts = ["Gout.", QUESTIONS[0] * 3, "Ask a pharmacist.", QUESTIONS[4], QUESTIONS[1] * 2]
    alone = np.concatenate([plain.encode([text]) for text in texts])
    calls.batches.clear()
    sliced = capped.encode(texts)
    lengths = [len(text) for batch in calls.batches for text in batch]
    assert lengths == sorted(len(text) for text in texts)
    assert np.all(_cosines(sliced, alone) >= 0.9999)


def test_a_text_that_fails_the_model_fails_only_its_own_caller(plain: Embedder, calls: ModelCalls) -> None:
    gate = calls.gate_first()
    wait = calls.before
    assert wait is not None

    def poisoned(texts: list[str]) -> None:
        if "poison" in texts:
            raise ValueError("the tokenizer rejected a text")
        wait(texts)

    calls.before = poisoned
    outcomes: dict[int, object] = {}
    requests = [[QUESTIONS[0]], [QUESTIONS[1]], ["poison"], [QUESTIONS[2]]]

    def call(i: int) -> None:
        try:
            outcomes[i] = plain.encode(requests[i])
        except ValueError as err:
            outcomes[i] = err

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    threads[0].start()
    wait_for(calls.entered, "the first caller is inside the model")
    for thread in threads[1:]:
        thread.start()
    _wait_for_queue(plain, 3)
    gate.set()
    for thread in threads:
        thread.join(30)
    assert isinstance(outcomes[2], ValueError)
    for i in (0, 1, 3):
        assert isinstance(outcomes[i], np.ndarray), f"caller {i} failed for another caller's text"
    assert not plain.busy


def test_a_bank_encoded_again_is_answered_without_the_model() -> None:
    """Each rebuild of the services encodes the same triage exemplar banks: the second time is free."""
    plain = Embedder(cache_size=1)  # too small to hold the bank's rows one by one
    bank = [f"{question} (variant {i})" for i in range(20) for question in QUESTIONS[:4]]
    first = plain.encode(bank)
    calls = plain.model_calls
    again = plain.encode(bank)
    assert plain.model_calls == calls
    assert np.allclose(again, first)
    again[0] *= 2  # the caller's copy; the remembered bank is unchanged
    assert np.allclose(plain.encode(bank)[0], first[0])
    plain.encode(list(reversed(bank)))  # another order is another call
    assert plain.model_calls > calls
