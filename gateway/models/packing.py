"""Padding-free MiniLM calls: the texts of a small torch call packed end to end into a few sequences.

A padded call costs the longest text's length for every text: the verifier's claims in calls of 8
(median 21 tokens, up to 49) are 42% padding. Here the texts are placed end to end in rows as wide as
the call's longest text, and at least ``MIN_ROW_TOKENS`` (first fit, longest first), each text with its
own positions (0, 1, ...) and an attention mask that lets a token see only its own text's tokens; the
sentence vector is the mean of the text's own token states, as sentence-transformers' mean pooling
computes it. Above ``MIN_ROW_TOKENS`` a packed call never has more positions nor more attention work
than the padded one (a row is as wide as a padded text, and there are no more rows than texts). In fp32
the vectors are those of the padded call (cosine 0.9999998); in bfloat16 they differ from it as much as
a padded call's vectors differ between two call sizes (cosine 0.99995 or more; docs/benchmarks.md). What it
saves: the padded positions' work in every matrix product, and the sentence-transformers call around
the model.

It relies on the model taking a prepared 4-D attention mask and explicit position ids (transformers'
BERT does); ``PackedForward.open`` checks the pipeline's modules and encodes probe texts both ways,
and returns None (the caller keeps padded calls) when anything differs.

The packed model call runs as a frozen TorchScript graph of the BERT model (``torch.jit.trace`` then
``torch.jit.freeze``, 0.3 s at start-up): the same kernels without transformers' Python around each
layer, 0.88 of the eager call's CPU time for 8 claims (docs/benchmarks.md), and bit-identical token
states. ``open`` compares them on two probe calls of different shapes and keeps the eager model
(warning ``frozen_encoding_unavailable``) unless every state is equal, so freezing never moves a vector.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import structlog

from gateway.domain import Vector, unit_rows

log = structlog.get_logger("gateway.startup")

MIN_ROW_TOKENS = 64
"""Narrowest packed row. Attention over a row costs its width squared (with a mask, torch's CPU kernel
computes every pair), so rows stay narrow: measured on the verifier bench's claims, rows of 64 tokens
against 128, 256 and 512 (docs/benchmarks.md)."""
PROBE_TEXTS = (
    "hi",
    "How much paracetamol can an adult take in one day?",
    "Wait at least 4 hours between doses, and do not take more than 4 doses in 24 hours.",
    "Fièvre chez l'enfant : 頭痛",
)
PROBE_MIN_COSINE = 0.999
"""Least cosine of a packed probe vector to the padded one. A mask the model ignored (texts attending to
each other) falls far below; bfloat16 rounding stays above 0.9999."""
FREEZE_PROBES = ((PROBE_TEXTS, MIN_ROW_TOKENS), (PROBE_TEXTS[1:], 16))
"""Calls the frozen graph must compute exactly like the eager model: the probe texts in one padded row
of 64 (traced from it), and three of them in rows of their own lengths (no padding)."""
PIPELINE = ("Transformer", "Pooling", "Normalize")
"""The sentence-transformers modules this reproduces: the model, mean pooling, normalisation."""


def pack_rows(lengths: Sequence[int], capacity: int) -> list[list[int]]:
    """Indices of texts grouped into rows of at most ``capacity`` tokens, first fit, longest first.

    A text longer than ``capacity`` gets a row of its own."""
    rows: list[list[int]] = []
    room: list[int] = []
    for index in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        size = lengths[index]
        for row, free in enumerate(room):
            if size <= free:
                rows[row].append(index)
                room[row] -= size
                break
        else:
            rows.append([index])
            room.append(max(capacity, size) - size)
    return rows


class PackedForward:
    """Mean-pooled unit vectors of a sentence-transformers model (Transformer, mean Pooling, Normalize),
    computed on packed rows; ``encode`` is called under the embedder's one-call-at-a-time discipline."""

    def __init__(self, model: Any, min_row_tokens: int = MIN_ROW_TOKENS) -> None:
        """Raises ValueError when ``model`` is not the pipeline this reproduces."""
        modules = [type(module).__name__ for module in model]
        if tuple(modules) != PIPELINE or getattr(model[1], "pooling_mode", None) != "mean":
            raise ValueError(f"not a mean-pooled pipeline: {modules}")
        if not getattr(model[1], "include_prompt", True):
            raise ValueError("pooling excludes prompt tokens")
        self._model = model
        self._bert = model[0].auto_model
        self._tokenizer = model.tokenizer
        self._max_length = int(model.max_seq_length)
        self._min_row = min_row_tokens
        self._frozen: Any = None
        """The BERT model as a frozen TorchScript graph (``freeze``), or None: the eager model."""

    @property
    def frozen(self) -> bool:
        """Whether calls run the frozen graph (``freeze``; read-only)."""
        return self._frozen is not None

    @classmethod
    def open(cls, model: Any, *, frozen: bool = True) -> PackedForward | None:
        """The packed forward of ``model`` when it encodes the probe texts like padded calls; else None
        (logged): padding-free calls are a speed feature, never a reason for different vectors.
        ``frozen``: also try the frozen graph (``freeze``)."""
        try:
            packed = cls(model)
            import torch

            with torch.inference_mode():
                padded = model.encode(list(PROBE_TEXTS), convert_to_tensor=True, show_progress_bar=False)
            cosine = float((packed.encode(PROBE_TEXTS) * unit_rows(padded.float().numpy())).sum(axis=1).min())
        except (ValueError, TypeError, RuntimeError, AttributeError, IndexError) as err:
            reason = f"{type(err).__name__}: {err}"
            log.warning("packed_encoding_unavailable", fallback="padded", reason=reason)
            return None
        if cosine < PROBE_MIN_COSINE:
            log.warning("packed_encoding_unavailable", fallback="padded", reason=f"probe cosine {cosine:.6f}")
            return None
        if frozen:
            packed.freeze()
        return packed

    def freeze(self) -> bool:
        """Run the model calls as a frozen TorchScript graph when it gives the eager model's token states
        exactly (every value equal) on ``FREEZE_PROBES`` (calls of different rows and widths); else keep
        the eager model (logged). Returns whether the graph is used."""
        import torch

        probes = [self._inputs(texts, min_row)[0] for texts, min_row in FREEZE_PROBES]
        try:
            with torch.inference_mode(), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the tracer's notes on Python values it records
                trace: Any = torch.jit.trace  # untyped in torch's stubs
                traced = trace(_forward_module(self._bert), probes[0], check_trace=False, strict=False)
                graph = torch.jit.freeze(traced)
                unequal = [
                    i
                    for i, inputs in enumerate(probes)
                    if not torch.equal(graph(*inputs), self._forward(inputs))
                ]
        except (RuntimeError, TypeError, ValueError, AttributeError) as err:
            reason = f"{type(err).__name__}: {err}"
            log.warning("frozen_encoding_unavailable", fallback="eager", reason=reason)
            return False
        if unequal:
            log.warning(
                "frozen_encoding_unavailable", fallback="eager", reason=f"probe calls {unequal} differ"
            )
            return False
        self._frozen = graph
        return True

    def _forward(self, inputs: tuple[Any, ...]) -> Any:
        """The eager model's last hidden states for ``_inputs``' tensors (under inference mode)."""
        ids, mask, positions, types = inputs
        return self._bert(
            input_ids=ids, attention_mask=mask, position_ids=positions, token_type_ids=types
        ).last_hidden_state

    def encode(self, texts: Sequence[str]) -> Vector:
        """One unit float32 vector per text, in order."""
        import torch

        inputs, pooling = self._inputs(texts, self._min_row)
        with torch.inference_mode():
            states = self._frozen(*inputs) if self._frozen is not None else self._forward(inputs)
            flat = states.reshape(pooling.shape[1], -1).float()
            vectors = torch.from_numpy(pooling) @ flat
        return unit_rows(vectors.numpy())

    def _inputs(self, texts: Sequence[str], min_row: int) -> tuple[tuple[Any, ...], np.ndarray]:
        """The model's inputs for ``texts`` packed in rows of at least ``min_row`` tokens (ids, 4-D mask,
        positions, token types), and the pooling matrix (a text's row: 1/length on its own tokens)."""
        import torch

        ids: list[list[int]] = self._tokenizer(list(texts), truncation=True, max_length=self._max_length)[
            "input_ids"
        ]
        lengths = [len(i) for i in ids]
        rows = pack_rows(lengths, max(min_row, *lengths))
        width = max(sum(lengths[i] for i in row) for row in rows)
        tokens = np.zeros((len(rows), width), dtype=np.int64)
        positions = np.zeros((len(rows), width), dtype=np.int64)
        segment = np.full((len(rows), width), -1, dtype=np.int64)
        pooling = np.zeros((len(texts), len(rows) * width), dtype=np.float32)
        for r, row in enumerate(rows):
            offset = 0
            for index in row:
                size = lengths[index]
                tokens[r, offset : offset + size] = ids[index]
                positions[r, offset : offset + size] = np.arange(size)
                segment[r, offset : offset + size] = index
                pooling[index, r * width + offset : r * width + offset + size] = 1.0 / size
                offset += size
        # a token sees its own text's tokens; a padding position only itself (no empty softmax row)
        same = segment[:, :, None] == segment[:, None, :]
        mask = same & ((segment[:, :, None] >= 0) | np.eye(width, dtype=bool)[None])
        input_ids = torch.from_numpy(tokens)
        inputs = (
            input_ids,
            torch.from_numpy(mask)[:, None],
            torch.from_numpy(positions),
            torch.zeros_like(input_ids),
        )
        return inputs, pooling


def _forward_module(bert: Any) -> Any:
    """The BERT model as a module of positional tensors returning the last hidden states (what
    ``torch.jit.trace`` records)."""
    import torch

    class Forward(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids: Any, mask: Any, positions: Any, types: Any) -> Any:
            return self.model(
                input_ids=ids, attention_mask=mask, position_ids=positions, token_type_ids=types
            ).last_hidden_state

    return Forward(bert).eval()
