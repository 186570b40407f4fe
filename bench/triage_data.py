"""Data for training and measuring triage: the policy's exemplar banks and ``../shared/eval/triage/``.

The shared rows are split deterministically by id (``split_of``): ``train`` rows train the classifier
(``bench/train_triage.py``), ``test`` rows are what ``bench/bench_triage.py`` reports, so the reported
figures are not training-set figures. Embeddings are cached under ``--cache`` (a scratch directory,
never the repository) so that re-running does not re-encode 24k texts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gateway.models.embedding import Embedder

ROOT = Path(__file__).resolve().parents[1]
_EVAL_PLACES = (ROOT.parent / "shared" / "eval" / "triage", ROOT.parents[1] / "shared" / "eval" / "triage")
EVAL = next((p for p in _EVAL_PLACES if p.is_dir()), _EVAL_PLACES[0])
"""``../shared/eval/triage`` beside the checkout (or beside the worktrees' folder, for a git worktree)."""
TRAIN_SHARE = 70
"""Percent of each shared file used for training; the rest is held out for the benchmark."""


@dataclass(frozen=True)
class SharedRow:
    id: str
    text: str
    label: str


def split_of(row_id: str) -> str:
    bucket = int(hashlib.sha256(row_id.encode()).hexdigest()[:8], 16) % 100
    return "train" if bucket < TRAIN_SHARE else "test"


def shared_rows(name: str, split: str | None = None) -> list[SharedRow]:
    rows = []
    with (EVAL / f"{name}.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            data = json.loads(line)
            if split is None or split_of(data["id"]) == split:
                rows.append(SharedRow(data["id"], data["text"], data["label"]))
    return rows


def encode_cached(
    embedder: Embedder, texts: Sequence[str], cache: Path | None, name: str, *, one_by_one: bool = False
) -> np.ndarray:
    """Encode ``texts`` (in one pass of batches, or ``one_by_one`` as a serving process encodes a
    one-question message), reusing ``cache/<name>-<runtime>-<digest>.npy`` when present."""
    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    runtime = embedder.runtime.replace(" + ", "+").replace(" ", "-") + ("-single" if one_by_one else "")
    path = cache / f"{name}-{runtime}-{digest}.npy" if cache else None
    if path is not None and path.is_file():
        cached: np.ndarray = np.load(path)
        return cached
    if not texts:
        vectors = np.zeros((0, embedder.dimensions), np.float32)
    elif one_by_one:
        vectors = np.concatenate([embedder.encode([text]) for text in texts])
    else:
        vectors = embedder.encode(list(texts))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
    return vectors
