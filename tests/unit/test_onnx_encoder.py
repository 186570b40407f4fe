"""MiniLM in ONNX Runtime: same vectors as torch, one export cached and reused, clean fallbacks.

The real model is exported once for the module (about 1-5 s); only the two tests that must export
again (corrupt cache, unwritable cache) do.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from structlog.testing import capture_logs

from gateway.knowledge import onnx_encoder
from gateway.knowledge.embedding import Embedder, default_model_path
from gateway.knowledge.onnx_encoder import OnnxEncoder, cached_model_file, max_seq_length

MODEL = Path(default_model_path())
TEXTS = [
    "How much paracetamol can an adult take in one day?",
    "hi",
    "",
    "   ",
    "Fièvre chez l'enfant : quand consulter ? 頭痛がします 😷",
    "Gout is a form of arthritis. " * 120,  # about 800 tokens: truncated at max_seq_length
]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="module")
def encoder(onnx_cache: Path) -> OnnxEncoder:
    """The module's one export."""
    return OnnxEncoder.open(MODEL, onnx_cache, threads=1)


@pytest.fixture(scope="module")
def torch_fp32() -> Embedder:
    return Embedder(precision="fp32", cache_size=0)


def test_vectors_match_torch_fp32_for_short_long_empty_and_non_ascii_texts(
    encoder: OnnxEncoder, torch_fp32: Embedder
) -> None:
    exported = encoder.encode(TEXTS)
    expected = torch_fp32.encode(TEXTS)
    assert exported.dtype == np.float32
    assert exported.shape == (len(TEXTS), Embedder.dimensions)
    assert np.allclose(np.linalg.norm(exported, axis=1), 1.0, atol=1e-5)
    cosines = (exported * expected).sum(axis=1)
    assert np.all(cosines >= 0.999), cosines
    alone = np.concatenate([encoder.encode([text]) for text in TEXTS])  # no padding: same vectors
    assert np.all((alone * exported).sum(axis=1) >= 0.99999)
    assert encoder.encode([]).shape == (0, Embedder.dimensions)


def test_truncation_limit_is_the_model_directorys(encoder: OnnxEncoder, torch_fp32: Embedder) -> None:
    limit = max_seq_length(MODEL)
    assert limit == torch_fp32._model.max_seq_length
    long, longer = "gout " * (limit + 20), "gout " * (limit + 400)
    both = encoder.encode([long, longer])
    assert np.array_equal(both[0], both[1])  # both cut at the same token


def test_a_second_start_reuses_the_cached_export(
    encoder: OnnxEncoder, onnx_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = cached_model_file(MODEL, onnx_cache)
    assert encoder.model_file == cached
    assert [p.name for p in onnx_cache.iterdir()] == [cached.name]  # no partial file left behind
    modified = cached.stat().st_mtime_ns

    def no_export(*_: object) -> None:
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_encoder, "export_model", no_export)
    again = OnnxEncoder.open(MODEL, onnx_cache, threads=1)
    assert cached.stat().st_mtime_ns == modified
    assert np.array_equal(again.encode(TEXTS[:2]), encoder.encode(TEXTS[:2]))


def test_a_corrupt_cached_file_is_exported_again(encoder: OnnxEncoder, tmp_path: Path) -> None:
    target = cached_model_file(MODEL, tmp_path)
    target.write_bytes(b"\x08\x07not an onnx graph" * 100)
    with capture_logs() as logs:
        rebuilt = OnnxEncoder.open(MODEL, tmp_path, threads=1)
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == ["onnx_cache_unreadable"]
    assert target.stat().st_size > 1_000_000
    assert np.allclose(rebuilt.encode(TEXTS[:2]), encoder.encode(TEXTS[:2]), atol=1e-6)


def test_an_unwritable_cache_exports_for_this_process_only(encoder: OnnxEncoder, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with capture_logs() as logs:
        uncached = OnnxEncoder.open(MODEL, blocker / "cache", threads=1)
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == ["onnx_cache_unwritable"]
    assert not uncached.model_file.exists()  # the temporary export is gone; the session holds the graph
    assert np.allclose(uncached.encode(TEXTS[:2]), encoder.encode(TEXTS[:2]), atol=1e-6)
