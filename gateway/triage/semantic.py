"""The semantic triage layers: nearest exemplars and the classifier heads, over MiniLM embeddings.

Built once per process (the exemplar banks are encoded at start-up); per request it only scores the
vectors the triage stage encoded. Nothing here reads the text (``speller`` is held here
for the triage stage, which corrects the message before planning; ``encoded`` bounds each text to the
last ``encode_max_tokens`` tokens): ``gateway.triage.decision`` combines these scores with the rule layer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from gateway.domain import Vector
from gateway.knowledge.query import QueryWords
from gateway.triage.policy import TriagePolicy
from gateway.triage.spelling import TriageSpeller


class Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> Vector: ...


@dataclass(frozen=True)
class SemanticScore:
    """What the semantic layers say about one text."""

    category: str
    """The emergency category of the nearest emergency exemplar."""
    similarity: float
    """Cosine to that exemplar."""
    contrast: float
    """Cosine to the nearest non-emergency exemplar (any contrast bank)."""
    exemplar_fired: bool
    """The exemplar layer fires: above the category's threshold and beating the contrast by the margin."""
    emergency_probability: float
    health_probability: float
    health_similarity: float
    """Cosine to the nearest health exemplar (emergency, non-emergency or health-question bank)."""
    classifier_fired: bool
    """The classifier layer fires: emergency probability at or above ``emergency_probability``, unless a
    contrast exemplar is nearer than every emergency exemplar by more than ``classifier_veto_margin``."""
    by_category: tuple[tuple[str, float], ...] = ()
    """Cosine to the nearest exemplar of each category (the evidence layer picks among the categories
    whose signs the message holds)."""

    def similarity_of(self, category: str) -> float:
        return next((value for name, value in self.by_category if name == category), -1.0)


_WORD_START = re.compile(r"(?<!\S)\S")


class TokenWindow:
    """The last ``max_tokens`` tokens of a text (the model's own tokenizer; ``[CLS]`` and ``[SEP]``
    count), cut at a word's start: what triage encodes of a long post (``encode_max_tokens``).

    A long post tells its background first and its complaint of now and its question last (#31 item
    6), and the encode's cost grows with its tokens: the p95 of triage is the encode of a long post
    (docs/benchmarks.md). A text within the window is returned unchanged."""

    def __init__(self, tokenizer: Any, max_tokens: int) -> None:
        self._tokenizer = tokenizer
        self.max_tokens = max_tokens

    @classmethod
    def of_model(cls, model_path: str | Path, max_tokens: int) -> TokenWindow:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(Path(model_path) / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        return cls(tokenizer, max_tokens)

    def __call__(self, text: str) -> str:
        content = self.max_tokens - 2
        offsets = self._tokenizer.encode(text, add_special_tokens=False).offsets
        if len(offsets) <= content:
            return text
        first = _WORD_START.search(text, offsets[len(offsets) - content][0])
        return text[first.start() :] if first is not None else text


class SemanticTriage:
    """Scores texts against the policy's exemplar banks and classifier heads."""

    def __init__(self, policy: TriagePolicy, encoder: Encoder, spelling: QueryWords | None = None) -> None:
        """``spelling``: the thresholds of ``policies/query.yaml`` (None: messages are read as written)."""
        self.policy = policy
        self.encoder = encoder
        model_path = getattr(encoder, "model_path", None)
        self.speller = TriageSpeller(policy, spelling, model_path) if spelling else None
        settings = policy.settings
        self.window = (
            TokenWindow.of_model(model_path, settings.encode_max_tokens)
            if settings.encode_max_tokens and model_path is not None
            else None
        )
        names: list[str] = []
        texts: list[str] = []
        thresholds: list[float] = []
        for name, category in policy.categories.items():
            for exemplar in category.exemplars:
                names.append(name)
                texts.append(exemplar)
                thresholds.append(
                    category.threshold if category.threshold is not None else settings.exemplar_threshold
                )
        banks = policy.banks
        contrast = [*banks.non_emergency, *banks.health_questions, *banks.non_health]
        vectors = encoder.encode([*texts, *contrast])
        self._categories = names
        self._category_names = list(dict.fromkeys(names))
        self._category_starts = np.asarray([names.index(n) for n in self._category_names], dtype=np.int64)
        self._thresholds = np.asarray(thresholds, dtype=np.float32)
        self._emergency = vectors[: len(texts)]
        self._contrast = vectors[len(texts) :]
        self._health_rows = len(banks.non_emergency) + len(banks.health_questions)

    def encode(self, texts: Sequence[str]) -> Vector:
        return self.encoder.encode(list(texts))

    def encoded(self, texts: Sequence[str]) -> list[str]:
        """What is encoded of a plan's texts (``TriagePlan.texts``): each bounded to its last
        ``encode_max_tokens`` tokens (``TokenWindow``; off, or an encoder without a model directory:
        whole). The rule layers read the texts whole."""
        window = self.window
        return [window(t) for t in texts] if window is not None else list(texts)

    def score(self, vectors: Vector) -> list[SemanticScore]:
        if len(vectors) == 0:
            return []
        settings = self.policy.settings
        heads = self.policy.classifier.heads
        emergency = vectors @ self._emergency.T
        contrast = vectors @ self._contrast.T
        best = emergency.argmax(axis=1)
        best_contrast = contrast.max(axis=1)
        per_category = np.maximum.reduceat(emergency, self._category_starts, axis=1)
        health = np.maximum(emergency.max(axis=1), contrast[:, : self._health_rows].max(axis=1))
        p_emergency = heads["emergency"].probability(vectors)
        p_health = heads["clinical"].probability(vectors)
        scores = []
        for row in range(len(vectors)):
            index = int(best[row])
            similarity = float(emergency[row, index])
            nearest_contrast = float(best_contrast[row])
            scores.append(
                SemanticScore(
                    category=self._categories[index],
                    similarity=similarity,
                    contrast=nearest_contrast,
                    exemplar_fired=similarity >= float(self._thresholds[index])
                    and similarity >= nearest_contrast + settings.exemplar_margin,
                    emergency_probability=float(p_emergency[row]),
                    health_probability=float(p_health[row]),
                    health_similarity=float(health[row]),
                    classifier_fired=float(p_emergency[row]) >= settings.emergency_probability
                    and nearest_contrast - similarity <= settings.classifier_veto_margin,
                    by_category=tuple(
                        zip(self._category_names, (float(v) for v in per_category[row]), strict=True)
                    ),
                )
            )
        return scores
