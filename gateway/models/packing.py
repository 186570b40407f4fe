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
"""

from __future__ import annotations

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

    @classmethod
    def open(cls, model: Any) -> PackedForward | None:
        """The packed forward of ``model`` when it encodes the probe texts like padded calls; else None
        (logged): padding-free calls are a speed feature, never a reason for different vectors."""
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
        return packed

    def encode(self, texts: Sequence[str]) -> Vector:
        """One unit float32 vector per text, in order."""
        import torch

        ids: list[list[int]] = self._tokenizer(list(texts), truncation=True, max_length=self._max_length)[
            "input_ids"
        ]
        lengths = [len(i) for i in ids]
        rows = pack_rows(lengths, max(self._min_row, *lengths))
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
        with torch.inference_mode():
            input_ids = torch.from_numpy(tokens)
            states = self._bert(
                input_ids=input_ids,
                attention_mask=torch.from_numpy(mask)[:, None],
                position_ids=torch.from_numpy(positions),
                token_type_ids=torch.zeros_like(input_ids),
            ).last_hidden_state
            flat = states.reshape(len(rows) * width, -1).float()
            vectors = torch.from_numpy(pooling) @ flat
        return unit_rows(vectors.numpy())
