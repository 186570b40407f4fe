"""MiniLM in ONNX Runtime: same vectors as torch, one export cached and reused, clean fallbacks.

The real model is exported once for the module (about 1-5 s); tests that need a cache of their own
link that file instead of exporting again, except the two that must export (corrupt, unwritable).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from structlog.testing import capture_logs

from gateway.knowledge import onnx_encoder
from gateway.knowledge.embedding import ONNX_MAX_TEXTS, Embedder, default_model_path
from gateway.knowledge.onnx_encoder import OnnxEncoder, cached_model_file, max_seq_length
from gateway.settings import Settings

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


def linked_cache(encoder: OnnxEncoder, directory: Path) -> Path:
    """A cache directory holding the module's export under its key (a link: no second export)."""
    directory.mkdir(parents=True, exist_ok=True)
    cached_model_file(MODEL, directory).symlink_to(encoder.model_file)
    return directory


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


def test_serving_embedder_uses_onnx_for_small_calls_and_bf16_torch_for_large_ones(
    encoder: OnnxEncoder, tmp_path: Path
) -> None:
    cache = linked_cache(encoder, tmp_path / "cache")
    serving = Embedder(precision="bf16", threads=1, cache_size=0, onnx_dir=cache)
    assert serving.runtime == "onnx fp32 + torch bf16"
    texts = [f"question number {i} about gout" for i in range(ONNX_MAX_TEXTS + 1)]
    assert np.array_equal(serving.encode(texts[:ONNX_MAX_TEXTS]), encoder.encode(texts[:ONNX_MAX_TEXTS]))
    large = serving.encode(texts)
    assert not np.array_equal(large[:ONNX_MAX_TEXTS], encoder.encode(texts[:ONNX_MAX_TEXTS]))
    assert np.all((large * encoder.encode(texts)).sum(axis=1) >= 0.999)
    fp32 = Embedder(precision="fp32", threads=1, cache_size=0, onnx_dir=cache)
    assert fp32.runtime == "onnx fp32"  # faster than torch fp32 at every size: no torch model loaded
    assert np.array_equal(fp32.encode(texts), encoder.encode(texts))


def test_from_settings_serves_with_onnx_from_the_data_dir_and_ingests_with_torch(
    encoder: OnnxEncoder, tmp_path: Path
) -> None:
    linked_cache(encoder, tmp_path / "cache")
    settings = Settings(data_dir=tmp_path, embedding_precision="fp32", embedding_threads=1)
    assert Embedder.from_settings(settings).runtime == "onnx fp32"
    assert Embedder.from_settings(settings, bulk=True).runtime == "torch fp32"


def test_a_model_onnx_cannot_serve_falls_back_to_torch_with_a_warning(
    encoder: OnnxEncoder, tmp_path: Path
) -> None:
    model = tmp_path / "model"  # the installed model without its sentence-transformers config
    shutil.copytree(
        MODEL, model, copy_function=os.symlink, ignore=shutil.ignore_patterns("sentence_bert_config.json")
    )
    cache = linked_cache(encoder, tmp_path / "cache")
    with capture_logs() as logs:
        embedder = Embedder(str(model), precision="fp32", cache_size=0, onnx_dir=cache)
    warnings = [e for e in logs if e["log_level"] == "warning"]
    assert [e["event"] for e in warnings] == ["onnx_runtime_unavailable"]
    assert "max_seq_length" in warnings[0]["reason"]
    assert embedder.runtime == "torch fp32"
    assert embedder.encode(TEXTS[:2]).shape == (2, Embedder.dimensions)
