"""MiniLM in ONNX Runtime: same vectors as torch, one export cached and reused, clean fallbacks.

The real model is exported once for the module (about 1-5 s); tests that need a cache of their own
link that file instead of exporting again, except the two that must export (corrupt, unwritable).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from structlog.testing import capture_logs

from gateway.models import onnx_encoder
from gateway.models.cpu import native_int8_dot, resolve_onnx_weights
from gateway.models.embedding import ONNX_MAX_TEXTS, Embedder, default_model_path, length_groups
from gateway.models.onnx_encoder import (
    GraphMaking,
    OnnxEncoder,
    OnnxUnavailable,
    cached_model_file,
    int8_model_file,
    max_seq_length,
)
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


def test_truncation_limit_is_the_model_directorys(encoder: OnnxEncoder) -> None:
    limit = max_seq_length(MODEL)
    from sentence_transformers import SentenceTransformer

    assert limit == SentenceTransformer(str(MODEL), device="cpu").max_seq_length
    long, longer = "gout " * (limit + 20), "gout " * (limit + 400)
    both = encoder.encode([long, longer])
    assert np.array_equal(both[0], both[1])  # both cut at the same token


def test_a_grouped_call_pads_each_group_only_to_its_own_longest_text(encoder: OnnxEncoder) -> None:
    texts = ["Take it with food.", "Gout is a form of arthritis. " * 20, "hi", "Rest and drink water."]
    seen: list[list[int]] = []

    def each_alone(lengths: Sequence[int]) -> list[list[int]]:
        seen.append(list(lengths))
        return [[i] for i in range(len(lengths))]

    alone = encoder.encode(texts, each_alone)
    assert len(seen) == 1  # one call of the grouping, with each text's own token count
    assert seen[0][0] == seen[0][3] == 7  # [CLS] four words and a full stop [SEP]
    assert seen[0][2] == 3
    assert seen[0][1] > 100
    assert np.array_equal(alone, np.concatenate([encoder.encode([t]) for t in texts]))
    grouped = encoder.encode(texts, length_groups)
    assert np.all((grouped * encoder.encode(texts)).sum(axis=1) >= 0.99999)  # padding barely moves one
    assert np.array_equal(encoder.encode(texts[:1], each_alone), encoder.encode(texts[:1]))
    assert len(seen) == 1  # one text: nothing to group


def test_a_second_start_reuses_the_cached_export(encoder: OnnxEncoder, onnx_cache: Path) -> None:
    cached = cached_model_file(MODEL, onnx_cache)
    assert encoder.model_file == cached
    assert [p.name for p in onnx_cache.iterdir()] == [cached.name]  # no partial file left behind
    modified = cached.stat().st_mtime_ns

    def no_export(*_: object) -> None:
        raise AssertionError("exported again")

    again = OnnxEncoder.open(MODEL, onnx_cache, threads=1, making=GraphMaking(export=no_export))
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
    assert Embedder.from_settings(settings.model_copy(update={"embedding_onnx_weights": "fp32"})).runtime == (
        "onnx fp32"
    )
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


# --- int8 weights ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def int8_cache(encoder: OnnxEncoder, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return linked_cache(encoder, tmp_path_factory.mktemp("int8-cache"))


@pytest.fixture(scope="module")
def int8_encoder(int8_cache: Path) -> OnnxEncoder:
    """The module's one quantisation (under a second), from the module's fp32 export."""
    return OnnxEncoder.open(MODEL, int8_cache, threads=1, weights="int8")


def test_int8_graph_is_quantised_cached_beside_the_fp32_one_and_agrees_with_it(
    int8_encoder: OnnxEncoder, int8_cache: Path, encoder: OnnxEncoder
) -> None:
    import onnx

    assert int8_encoder.weights == "int8"
    assert int8_encoder.model_file == int8_model_file(cached_model_file(MODEL, int8_cache))
    graph = onnx.load(str(int8_encoder.model_file)).graph
    weights = {tensor.name for tensor in graph.initializer}
    quantised = [n.name.split("/")[3] for n in graph.node if n.op_type == "MatMulNBits"]
    fp32 = [n.name.split("/")[3] for n in graph.node if n.op_type == "MatMul" and n.input[1] in weights]
    assert sorted(quantised) == sorted(["layer.0", "layer.1", "layer.2", "layer.3"] * 6)
    assert sorted(fp32) == sorted(["layer.4", "layer.5"] * 6)  # the last two keep fp32 weights
    quantised, reference = int8_encoder.encode(TEXTS), encoder.encode(TEXTS)
    assert quantised.shape == reference.shape
    assert np.allclose(np.linalg.norm(quantised, axis=1), 1.0, atol=1e-5)
    cosines = (quantised * reference).sum(axis=1)
    worded = np.array([bool(text.strip()) for text in TEXTS])
    assert np.all(cosines[worded] >= 0.999), cosines
    assert np.all(cosines[~worded] >= 0.998), cosines  # no words: only [CLS] [SEP] (0.9987 measured)
    assert not np.allclose(quantised, reference, atol=1e-6)
    alone = np.concatenate([int8_encoder.encode([text]) for text in TEXTS])
    assert np.all((alone * quantised).sum(axis=1) >= 0.9999)  # padding in a call barely moves a vector


def test_a_second_start_reuses_the_int8_graph(int8_encoder: OnnxEncoder, int8_cache: Path) -> None:
    def no_quantisation(*_: object) -> None:
        raise AssertionError("quantised again")

    making = GraphMaking(quantise=no_quantisation)
    again = OnnxEncoder.open(MODEL, int8_cache, threads=1, weights="int8", making=making)
    assert again.weights == "int8"
    assert np.array_equal(again.encode(TEXTS[:2]), int8_encoder.encode(TEXTS[:2]))


def test_a_corrupt_int8_file_is_quantised_again(
    encoder: OnnxEncoder, int8_encoder: OnnxEncoder, tmp_path: Path
) -> None:
    cache = linked_cache(encoder, tmp_path)
    target = int8_model_file(cached_model_file(MODEL, cache))
    target.write_bytes(b"\x08\x07not an onnx graph" * 100)
    with capture_logs() as logs:
        rebuilt = OnnxEncoder.open(MODEL, cache, threads=1, weights="int8")
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == ["onnx_cache_unreadable"]
    assert rebuilt.weights == "int8"
    assert np.array_equal(rebuilt.encode(TEXTS[:2]), int8_encoder.encode(TEXTS[:2]))


def test_an_unwritable_cache_quantises_for_this_process_only(
    int8_encoder: OnnxEncoder, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    uncached = OnnxEncoder.open(MODEL, blocker / "cache", threads=1, weights="int8")
    assert uncached.weights == "int8"
    assert not uncached.model_file.exists()  # made in a temporary directory, gone; the session has it
    assert np.allclose(uncached.encode(TEXTS[:2]), int8_encoder.encode(TEXTS[:2]), atol=1e-6)


def test_int8_that_cannot_be_made_serves_fp32_with_a_warning(encoder: OnnxEncoder, tmp_path: Path) -> None:
    def failing(*_: object) -> None:
        raise OnnxUnavailable("int8 quantisation failed: the quantiser broke")

    cache = linked_cache(encoder, tmp_path)
    with capture_logs() as logs:
        opened = OnnxEncoder.open(
            MODEL, cache, threads=1, weights="int8", making=GraphMaking(quantise=failing)
        )
    warnings = [e for e in logs if e["log_level"] == "warning"]
    assert [e["event"] for e in warnings] == ["onnx_int8_unavailable"]
    assert "the quantiser broke" in warnings[0]["reason"]
    assert opened.weights == "fp32"
    assert np.array_equal(opened.encode(TEXTS[:2]), encoder.encode(TEXTS[:2]))


def test_an_int8_graph_that_disagrees_with_fp32_is_not_used(
    encoder: OnnxEncoder, int8_encoder: OnnxEncoder, tmp_path: Path
) -> None:
    cache = linked_cache(encoder, tmp_path)
    int8_model_file(cached_model_file(MODEL, cache)).symlink_to(int8_encoder.model_file)
    strict = GraphMaking(int8_min_cosine=0.9999999)  # stricter than int8 reaches
    with capture_logs() as logs:
        opened = OnnxEncoder.open(MODEL, cache, threads=1, weights="int8", making=strict)
    warnings = [e for e in logs if e["log_level"] == "warning"]
    assert [e["event"] for e in warnings] == ["onnx_int8_unavailable"]
    assert "disagrees" in warnings[0]["reason"]
    assert opened.weights == "fp32"


def test_a_graph_without_named_encoder_layers_is_not_quantised(encoder: OnnxEncoder) -> None:
    import onnx

    model = onnx.load(str(encoder.model_file))
    for index, node in enumerate(model.graph.node):
        node.name = f"node_{index}"  # another exporter's names
    with pytest.raises(OnnxUnavailable, match="no encoder layer"):
        onnx_encoder.fp32_products(model)


def test_serving_embedder_with_int8_weights(int8_encoder: OnnxEncoder, int8_cache: Path) -> None:
    serving = Embedder(precision="bf16", threads=1, cache_size=0, onnx_dir=int8_cache, onnx_weights="int8")
    assert serving.runtime == "onnx int8 + torch bf16"
    assert np.array_equal(serving.encode(TEXTS[:2]), int8_encoder.encode(TEXTS[:2]))


def test_auto_weights_are_int8_only_where_the_cpu_has_int8_dot_products(tmp_path: Path) -> None:
    with_vnni, without = tmp_path / "vnni", tmp_path / "plain"
    with_vnni.write_text("flags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n")
    without.write_text("flags\t\t: fpu sse2 avx2 avx512f\n")
    assert native_int8_dot(with_vnni)
    assert not native_int8_dot(without)
    assert not native_int8_dot(tmp_path / "missing")
    assert resolve_onnx_weights("auto") == ("int8" if native_int8_dot() else "fp32")
    assert resolve_onnx_weights("fp32") == "fp32"
    assert resolve_onnx_weights("int8") == "int8"


QUANTISE_IN_A_FRESH_PROCESS = """
import logging, sys
from pathlib import Path
from gateway.models.onnx_encoder import quantise_int8
root = logging.getLogger()
before = (list(root.handlers), root.level)
quantise_int8(Path(sys.argv[1]), Path(sys.argv[2]))
assert (list(root.handlers), root.level) == before, (root.handlers, root.level)
"""


def test_quantising_leaves_the_process_logging_alone(encoder: OnnxEncoder, tmp_path: Path) -> None:
    """The quantiser's module calls ``logging.basicConfig(level=INFO)`` when first imported."""
    target = tmp_path / "int8.onnx"
    command = [sys.executable, "-c", QUANTISE_IN_A_FRESH_PROCESS, str(encoder.model_file), str(target)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False, env=env)
    assert done.returncode == 0, done.stderr
    assert target.exists()
