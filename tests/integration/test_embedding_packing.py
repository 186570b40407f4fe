"""Packed (padding-free) torch calls give the padded calls' vectors, whatever the texts' lengths."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.domain import unit_rows
from gateway.models.embedding import Embedder, default_model_path
from gateway.models.packing import PackedForward

TEXTS = [
    "Adults can take 500 mg of paracetamol every 4 to 6 hours.",
    "Do not take more than 4 g in 24 hours.",
    "ok",
    "Gout is a form of arthritis caused by uric acid crystals in a joint, and an attack usually starts "
    "suddenly, often at night, with intense pain, swelling, redness and warmth in the big toe, although "
    "the ankle, the knee, the wrist and the fingers can also be affected; " * 3,
    "Do not take more than 4 g in 24 hours.",
]


def test_packed_vectors_are_the_padded_ones_in_fp32() -> None:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(default_model_path(), device="cpu")  # the fp32 model an Embedder loads
    packed = PackedForward.open(model)
    assert packed is not None
    vectors = packed.encode(TEXTS)
    padded = unit_rows(model.encode(TEXTS, convert_to_tensor=True, show_progress_bar=False).float().numpy())
    assert vectors.shape == padded.shape
    assert len(vectors) == len(TEXTS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float((vectors * padded).sum(axis=1).min()) > 0.99999


def test_a_packed_embedder_encodes_small_calls_like_a_padded_one() -> None:
    packed = Embedder(cache_size=0, packed=True)
    padded = Embedder(cache_size=0, packed=False)
    assert packed.packed
    assert not padded.packed
    cosines = (packed.encode(TEXTS) * padded.encode(TEXTS)).sum(axis=1)
    assert float(cosines.min()) > 0.9999
    # a text's vector does not depend on the texts packed beside it beyond rounding
    alone = packed.encode([TEXTS[1], TEXTS[0]])
    assert float((alone[0] * packed.encode(TEXTS)[1]).sum()) > 0.9999


def test_the_frozen_graph_gives_the_eager_models_vectors_exactly() -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(default_model_path(), device="cpu").to(torch.bfloat16)  # as served
    frozen = PackedForward.open(model)
    eager = PackedForward.open(model, frozen=False)
    assert frozen is not None
    assert eager is not None
    assert frozen.frozen
    assert not eager.frozen
    for texts in (TEXTS, TEXTS[:2], [TEXTS[3], TEXTS[2]], TEXTS[1:3] * 9):
        assert np.array_equal(frozen.encode(texts), eager.encode(texts))


def test_a_frozen_graph_that_differs_from_the_eager_model_is_not_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(default_model_path(), device="cpu")
    freeze = torch.jit.freeze
    monkeypatch.setattr(torch.jit, "freeze", lambda module: _Shifted(freeze(module)))
    packed = PackedForward.open(model)
    assert packed is not None  # packing itself still serves, on the eager model
    assert not packed.frozen
    padded = unit_rows(model.encode(TEXTS, convert_to_tensor=True, show_progress_bar=False).float().numpy())
    assert float((packed.encode(TEXTS) * padded).sum(axis=1).min()) > 0.99999


class _Shifted:
    """A frozen graph whose token states are off by a rounding step: must be refused."""

    def __init__(self, graph: object) -> None:
        self._graph = graph

    def __call__(self, *inputs: object) -> object:
        return self._graph(*inputs) * (1 + 2**-7)  # type: ignore[operator]
