"""MiniLM in ONNX Runtime: the serving processes' encoder (questions, claims: small calls).

Exported once from the installed model with ``torch.onnx.export`` and cached as
``<cache_dir>/minilm-<digest>.onnx``; the digest covers the weights file, the model's config and
``EXPORT_FORMAT``, so a changed model (or a changed graph) is exported again. The graph takes the
tokeniser's ids and attention mask and returns unit-normalised mean-pooled sentence vectors, the
same as the sentence-transformers pipeline (``Transformer`` → mean ``Pooling`` → ``Normalize``) in
fp32: cosine 0.9999999 to it (docs/benchmarks.md). Tokenisation is the model directory's fast
tokenizer, truncated to the sentence-transformers ``max_seq_length`` of that directory.

With ``weights="int8"`` the fp32 graph's weight matrices, except those of the last
``INT8_FP32_LAYERS`` layers, are then quantised to 8 bits in blocks of ``INT8_BLOCK`` (ONNX Runtime's
``MatMulNBits``; the activations are quantised per block at run time, for VNNI integer dot products)
into ``minilm-<digest>-int8.onnx``: 0.78 of fp32's time for a question, cosine 0.9995 or more to fp32
(docs/benchmarks.md). Per-tensor dynamic quantisation was measured too and reached only 0.978.

Opening never half-works: a cached file ONNX Runtime cannot load is exported again, a cache that
cannot be written is exported to a temporary directory for this process only, and an export that
fails or disagrees with torch on a probe raises ``OnnxUnavailable``, on which the embedder keeps torch.
An int8 graph that cannot be made or disagrees with the fp32 one on the probe is not used: the fp32
graph serves, with a warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import structlog

from gateway.domain import Vector, unit_rows

log = structlog.get_logger("gateway.startup")

EXPORT_FORMAT = 1
"""Version of the exported graph (inputs, pooling, opset); part of the cache key."""
OPSET = 17
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
PROBE_TEXTS = ("hi", "How much paracetamol can an adult take in one day?", "Fièvre chez l'enfant : 頭痛")
"""Texts the exported graph must encode like torch before it is used or cached (padded in one call)."""
PROBE_MIN_COSINE = 0.9999
OnnxWeights = Literal["int8", "fp32"]
LengthGroups = Callable[[Sequence[int]], list[list[int]]]
"""Splits a call's texts, given their token lengths, into groups of indices encoded one call each."""
INT8_BLOCK = 16
"""Weights quantised per block of 16 input rows (32 and 128 were measured: further from fp32)."""
INT8_FP32_LAYERS = 2
"""The last encoder layers keep fp32 weights. Over 3,000 texts, the least cosine to fp32 is 0.9988 with
every layer int8, 0.9991 with the last one fp32 and 0.9995 with the last two (docs/benchmarks.md)."""
INT8_PROBE_MIN_COSINE = 0.999
"""The int8 graph's least cosine to the fp32 graph on the probe texts (what it reaches: 0.9997 or more)."""


class OnnxUnavailable(Exception):
    """ONNX Runtime cannot encode MiniLM in this process (a library, the export or the model is missing)."""


def max_seq_length(model_path: Path) -> int:
    """The sentence-transformers truncation limit of the model directory (``sentence_bert_config.json``)."""
    try:
        config = json.loads((model_path / "sentence_bert_config.json").read_text(encoding="utf-8"))
        return int(config["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise OnnxUnavailable(f"no max_seq_length in {model_path}: {err}") from err


def model_digest(model_path: Path) -> str:
    """The cache key: sha-256 of the weights file and ``config.json``, and the export format."""
    weights = next((model_path / name for name in WEIGHT_FILES if (model_path / name).is_file()), None)
    if weights is None:
        raise OnnxUnavailable(f"no weights file ({', '.join(WEIGHT_FILES)}) in {model_path}")
    digest = hashlib.sha256(f"export-format {EXPORT_FORMAT}\n".encode())
    for part in (weights, model_path / "config.json"):
        with part.open("rb") as stream:
            digest.update(hashlib.file_digest(stream, "sha256").digest())
    return digest.hexdigest()[:20]


def cached_model_file(model_path: Path, cache_dir: Path) -> Path:
    return cache_dir / f"minilm-{model_digest(model_path)}.onnx"


def int8_model_file(fp32_file: Path) -> Path:
    """Where the int8 graph made from ``fp32_file`` is kept: beside it."""
    return fp32_file.with_name(f"{fp32_file.stem}-int8.onnx")


class OnnxEncoder:
    """Unit MiniLM vectors from ONNX Runtime; ``threads`` intra-op threads, no spinning thread pool.

    ``encode`` is safe to call from several threads (ONNX Runtime sessions are), though the embedder
    makes one call at a time.
    """

    def __init__(
        self, model_file: Path, model_path: Path, threads: int, weights: OnnxWeights = "fp32"
    ) -> None:
        """Open an exported graph; raises what ONNX Runtime or the tokenizer raise (``open`` wraps it)."""
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # an idle pool that spins waits on a core the other requests and processes need
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        self._tokenizer = _tokenizer(model_path)
        self.model_file = model_file
        self.model_path = model_path
        self.threads = threads
        self.weights = weights
        self.dimensions = int(self._session.get_outputs()[0].shape[1])

    @classmethod
    def open(
        cls,
        model_path: Path,
        cache_dir: Path,
        threads: int,
        weights: OnnxWeights = "fp32",
        making: GraphMaking | None = None,
    ) -> OnnxEncoder:
        """The encoder of ``model_path``, exported into ``cache_dir`` on first use; raises OnnxUnavailable.

        With ``weights="int8"`` the quantised graph when it can be made and agrees, else the fp32 one;
        ``making``: how graphs are exported, quantised and checked (default ``GraphMaking()``).
        """
        making = making or GraphMaking()
        try:
            import onnxruntime  # noqa: F401
            import tokenizers  # noqa: F401
        except ImportError as err:
            raise OnnxUnavailable(f"{err.name} is not installed") from err
        target = cached_model_file(model_path, cache_dir)
        if target.is_file():
            try:
                return cls._weighted(cls(target, model_path, threads), weights, making)
            except _ort_errors() as err:
                log.warning("onnx_cache_unreadable", path=str(target), error=f"{type(err).__name__}: {err}")
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
            making.export(model_path, target)
        except OSError as err:  # the cache cannot be written: export for this process only
            log.warning("onnx_cache_unwritable", path=str(cache_dir), error=f"{type(err).__name__}: {err}")
            return cls._uncached(model_path, target.name, threads, weights, making)
        return cls._weighted(cls._opened(target, model_path, threads), weights, making)

    @classmethod
    def _uncached(
        cls, model_path: Path, name: str, threads: int, weights: OnnxWeights, making: GraphMaking
    ) -> OnnxEncoder:
        try:
            with tempfile.TemporaryDirectory(prefix="minilm-onnx-") as scratch:
                making.export(model_path, Path(scratch) / name)
                fp32 = cls._opened(Path(scratch) / name, model_path, threads)
                return cls._weighted(fp32, weights, making)  # the sessions keep their graphs
        except OSError as err:
            raise OnnxUnavailable(f"export failed: {type(err).__name__}: {err}") from err

    @classmethod
    def _opened(
        cls, model_file: Path, model_path: Path, threads: int, weights: OnnxWeights = "fp32"
    ) -> OnnxEncoder:
        failures: tuple[type[Exception], ...] = (OSError, *_ort_errors())
        try:
            return cls(model_file, model_path, threads, weights)
        except failures as err:
            raise OnnxUnavailable(f"cannot open {model_file}: {type(err).__name__}: {err}") from err

    @classmethod
    def _weighted(cls, fp32: OnnxEncoder, weights: OnnxWeights, making: GraphMaking) -> OnnxEncoder:
        """``fp32`` itself, or its int8 graph (cached beside it) when asked for and it agrees with it."""
        if weights == "fp32":
            return fp32
        target = int8_model_file(fp32.model_file)
        try:
            quantised = None
            if target.is_file():
                try:
                    quantised = cls._opened(target, fp32.model_path, fp32.threads, "int8")
                except OnnxUnavailable as err:
                    log.warning("onnx_cache_unreadable", path=str(target), error=str(err))
            if quantised is None:
                making.quantise(fp32.model_file, target)
                quantised = cls._opened(target, fp32.model_path, fp32.threads, "int8")
            return _agreeing(quantised, fp32, making.int8_min_cosine)
        except (OSError, OnnxUnavailable) as err:
            log.warning("onnx_int8_unavailable", fallback="fp32", reason=f"{type(err).__name__}: {err}")
            return fp32

    def encode(self, texts: Sequence[str], groups: LengthGroups | None = None) -> Vector:
        """One unit float32 vector per text, in order (like ``Embedder._model_encode``).

        ``groups``: splits the call's texts by token length (``embedding.length_groups``) into runs
        that are each one session call padded only to its own longest text: a padded call costs its
        longest text for every text. The texts are tokenised once; None: one call for all.
        """
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        if groups is None or len(texts) < 2:
            return self._run(ids, mask)
        lengths = mask.sum(axis=1)
        split = groups([int(n) for n in lengths])
        if len(split) == 1:
            return self._run(ids, mask)
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for group in split:
            width = int(lengths[group].max())  # padding is on the right: the columns beyond are padding
            out[group] = self._run(ids[group, :width], mask[group, :width])
        return out

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> Vector:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (vectors,) = self._session.run(["embedding"], feeds)
        return unit_rows(vectors)


def export_model(model_path: Path, target: Path) -> None:
    """Export MiniLM to ``target`` atomically (written beside it, checked, renamed); logs the time.

    Raises OSError when ``target``'s directory cannot be written, OnnxUnavailable for anything else.
    """
    started = time.perf_counter()
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    partial.touch()  # an unwritable directory fails here, before the costly export
    try:
        try:
            wrapper = _pooled_model(model_path)
            _trace(wrapper, partial)
            _check_against_torch(wrapper, partial, model_path)
        except (OSError, OnnxUnavailable):
            raise
        except Exception as err:  # an exporter or library failure: the caller keeps torch
            raise OnnxUnavailable(f"export failed: {type(err).__name__}: {err}") from err
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    log.info("onnx_model_exported", path=str(target), seconds=round(time.perf_counter() - started, 2))


def quantise_int8(source: Path, target: Path) -> None:
    """Quantise ``source``'s weight matrices to 8 bits per ``INT8_BLOCK`` into ``target`` (atomically).

    Raises OSError when ``target`` cannot be written, OnnxUnavailable for anything else.
    """
    started = time.perf_counter()
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    partial.touch()
    try:
        try:
            import onnx

            with _root_logging_kept():
                from onnxruntime.quantization.matmul_nbits_quantizer import (
                    DefaultWeightOnlyQuantConfig,
                    MatMulNBitsQuantizer,
                )

            model = onnx.load(str(source))
            config = DefaultWeightOnlyQuantConfig(
                block_size=INT8_BLOCK, is_symmetric=True, accuracy_level=4, bits=8
            )  # accuracy level 4: int8 arithmetic on block-quantised activations
            kept = fp32_products(model)
            quantiser = MatMulNBitsQuantizer(model, algo_config=config, nodes_to_exclude=kept)
            with _quiet("onnxruntime.quantization.matmul_nbits_quantizer"):
                quantiser.process()
            quantiser.model.save_model_to_file(str(partial))
        except OSError:
            raise
        except Exception as err:  # a library failure: the caller keeps the fp32 graph
            raise OnnxUnavailable(f"int8 quantisation failed: {type(err).__name__}: {err}") from err
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    log.info("onnx_model_quantised", path=str(target), seconds=round(time.perf_counter() - started, 2))


_LAYER = re.compile(r"/layer\.(\d+)/")


def fp32_products(model: Any) -> list[str]:
    """The weight products left in fp32: those of the last ``INT8_FP32_LAYERS`` encoder layers.

    Raises OnnxUnavailable when the graph's node names show no encoder layer (an exporter that names
    them otherwise): better no int8 than an unmeasured split.
    """
    weights = {tensor.name for tensor in model.graph.initializer}
    layered: list[tuple[int, str]] = []
    for node in model.graph.node:
        found = _LAYER.search(node.name) if node.op_type == "MatMul" and node.input[1] in weights else None
        if found:
            layered.append((int(found.group(1)), node.name))
    if not layered:
        raise OnnxUnavailable("no encoder layer found among the graph's weight products")
    last = max(layer for layer, _ in layered)
    return [name for layer, name in layered if layer > last - INT8_FP32_LAYERS]


def _agreeing(quantised: OnnxEncoder, reference: OnnxEncoder, min_cosine: float) -> OnnxEncoder:
    """``quantised`` when it encodes the probe texts like ``reference``; else OnnxUnavailable."""
    cosines = (quantised.encode(PROBE_TEXTS) * reference.encode(PROBE_TEXTS)).sum(axis=1)
    if float(cosines.min()) < min_cosine:
        raise OnnxUnavailable(f"the int8 graph disagrees with fp32 (cosine {float(cosines.min()):.6f})")
    return quantised


@dataclass(frozen=True)
class GraphMaking:
    """How ``OnnxEncoder.open`` makes its graphs: the export, the int8 quantisation and the probe's
    cosine floor (tests swap a step here)."""

    export: Callable[[Path, Path], None] = export_model
    quantise: Callable[[Path, Path], None] = quantise_int8
    int8_min_cosine: float = INT8_PROBE_MIN_COSINE


@contextlib.contextmanager
def _root_logging_kept() -> Iterator[None]:
    """Importing ONNX Runtime's quantiser calls ``logging.basicConfig(level=INFO)``: undo that, so the
    process's own logging configuration (and its silence on other libraries' INFO lines) stands."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


@contextlib.contextmanager
def _quiet(logger: str) -> Iterator[None]:
    """The quantiser logs a line per node it skips at INFO: keep it to warnings."""
    target = logging.getLogger(logger)
    level = target.level
    target.setLevel(logging.WARNING)
    try:
        yield
    finally:
        target.setLevel(level)


def _tokenizer(model_path: Path) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_path / "tokenizer.json"))
    padding = tokenizer.padding or {}
    pad_token = padding.get("pad_token", "[PAD]")
    pad_id = padding.get("pad_id", tokenizer.token_to_id(pad_token) or 0)
    tokenizer.no_padding()  # the file may pad every text to a fixed length: pad a call to its longest
    tokenizer.enable_padding(pad_id=pad_id, pad_token=pad_token)
    tokenizer.enable_truncation(max_length=max_seq_length(model_path))
    return tokenizer


def _pooled_model(model_path: Path) -> Any:
    """BERT followed by the mean pooling and normalisation of sentence-transformers, as one module.

    The BERT model is called with keywords (positional arguments meet its ``use_cache`` parameter);
    eager attention traces into plain matrix products and an additive mask.
    """
    import torch
    from transformers import AutoModel

    class MeanPooled(torch.nn.Module):
        def __init__(self, bert: torch.nn.Module) -> None:
            super().__init__()
            self.bert = bert

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
        ) -> torch.Tensor:
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    bert = AutoModel.from_pretrained(str(model_path), attn_implementation="eager", dtype=torch.float32)
    return MeanPooled(bert).eval()


def _trace(wrapper: Any, path: Path) -> None:
    import torch

    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]], dtype=torch.long)
    mask = (ids != 0).long()  # one padded row, so the mask is traced as data, never folded away
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes: dict[str, dict[int, str]] = {name: {0: "texts", 1: "tokens"} for name in names}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the legacy exporter's deprecation and tracer notes
        torch.onnx.export(
            wrapper,
            (ids, mask, torch.zeros_like(ids)),
            str(path),
            dynamo=False,
            input_names=names,
            output_names=["embedding"],
            dynamic_axes={**axes, "embedding": {0: "texts"}},
            opset_version=OPSET,
        )


def _check_against_torch(wrapper: Any, path: Path, model_path: Path) -> None:
    """Encode the probe texts with the graph and with torch; refuse a graph that disagrees."""
    import torch

    encoder = OnnxEncoder(path, model_path, threads=1)
    exported = encoder.encode(PROBE_TEXTS)
    encodings = encoder._tokenizer.encode_batch(list(PROBE_TEXTS))
    ids = torch.tensor([e.ids for e in encodings], dtype=torch.long)
    mask = torch.tensor([e.attention_mask for e in encodings], dtype=torch.long)
    with torch.no_grad():
        expected = wrapper(ids, mask, torch.zeros_like(ids)).numpy()
    cosines = (exported * unit_rows(expected)).sum(axis=1)
    if float(cosines.min()) < PROBE_MIN_COSINE:
        raise OnnxUnavailable(f"exported graph disagrees with torch (cosine {float(cosines.min()):.6f})")


def _ort_errors() -> tuple[type[Exception], ...]:
    """What ONNX Runtime raises for a file it cannot load (its errors derive from Exception only)."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    return (state.Fail, state.InvalidProtobuf, state.InvalidGraph, state.NoSuchFile, state.InvalidArgument)
