"""Embedder precision and the passage vectors ingestion builds from sentence and heading vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gateway.errors import ConfigurationError
from gateway.knowledge.ingest import passage_vector
from gateway.models.cpu import native_bf16, resolve_precision
from gateway.models.embedding import Embedder
from gateway.settings import Settings

TEXTS = [
    "Adults can take 500 mg of paracetamol every 4 to 6 hours.",
    "Do not take more than 4 g in 24 hours.",
    "Gout is a form of arthritis caused by uric acid crystals in a joint.",
]


def test_bf16_is_chosen_only_for_cpus_that_multiply_bfloat16_natively(tmp_path: Path) -> None:
    with_bf16 = tmp_path / "bf16"
    with_bf16.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f avx512_bf16 avx512_vnni\n")
    without = tmp_path / "plain"
    without.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f\n")
    assert native_bf16(with_bf16)
    assert not native_bf16(without)
    assert not native_bf16(tmp_path / "missing")
    assert resolve_precision("fp32") == "fp32"
    assert resolve_precision("bf16") == "bf16"
    assert resolve_precision("auto") == ("bf16" if native_bf16() else "fp32")


def test_bf16_embeddings_agree_with_fp32_and_are_unit_vectors() -> None:
    fp32 = Embedder(precision="fp32").encode(TEXTS)
    bf16 = Embedder(precision="bf16").encode(TEXTS)
    assert bf16.dtype == np.float32
    assert np.allclose(np.linalg.norm(bf16, axis=1), 1.0, atol=1e-5)
    assert np.all((fp32 * bf16).sum(axis=1) > 0.99)
    unrelated = float(bf16[0] @ bf16[2])
    assert unrelated < 0.5


def test_precision_setting_rejects_unknown_values() -> None:
    assert Settings.from_env({"GATEWAY_EMBEDDING_PRECISION": "fp32"}).embedding_precision == "fp32"
    with pytest.raises(ConfigurationError, match="GATEWAY_EMBEDDING_PRECISION"):
        Settings.from_env({"GATEWAY_EMBEDDING_PRECISION": "int4"})


def test_passage_vector_is_a_unit_blend_of_content_and_heading(embedder) -> None:  # type: ignore[no-untyped-def]
    sentences = embedder.encode(TEXTS[:2])
    heading = embedder.encode_one("Paracetamol - Dosage")
    vector = passage_vector(sentences, heading)
    assert np.isclose(np.linalg.norm(vector), 1.0, atol=1e-5)
    content = sentences.mean(axis=0)
    content /= np.linalg.norm(content)
    assert vector @ heading > content @ heading
    assert vector @ content > heading @ content
    query = embedder.encode_one("how much paracetamol can an adult take")
    off_topic = embedder.encode_one("uric acid crystals in joints")
    assert vector @ query > vector @ off_topic
