"""Pluggable entailment model (``GATEWAY_NLI_MODEL``): a local NLI or fact-checking classifier.

The directory holds either a Hugging Face sequence-classification model (``config.json`` with an
``id2label`` naming an entailment / support label, its tokenizer beside it) or a sentence-transformers
CrossEncoder (``config_sentence_transformers.json``; one output is read as the probability of
entailment, several are resolved through ``id2label`` like the plain model). Nothing is downloaded:
``local_files_only`` throughout.

The model is loaded once at start-up (a bad directory stops start-up with a ConfigurationError naming
the setting), scores (premise, hypothesis) pairs in batches, and runs in a worker thread under a
timeout, so the event loop never waits on it. ``NLIStage`` turns its probabilities into verdicts and
fails closed: a timeout, an exception or an output that is not one finite probability per pair gives
every claim of the call an ``unsupported`` verdict with check ``nli_error`` and ``failure`` set.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.to_thread

from gateway.domain import Evidence, Verdict, VerdictLabel
from gateway.errors import ConfigurationError
from gateway.validation import refuse
from gateway.vocabulary import VerdictCheck, VerifierFailure, VerifierMethod

ENTAILMENT_NAMES = ("entailment", "entails", "entailed", "support", "supports", "supported")
"""Label names (lower-cased, prefix match) read as "the premise entails the hypothesis"."""
SETTING = "GATEWAY_NLI_MODEL"


class EntailmentModel(Protocol):
    """Probability that each premise entails its hypothesis, one per pair, in order."""

    name: str

    def entailment(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...


def entailment_index(id2label: dict[Any, Any]) -> int:
    """The output index whose label names entailment; ConfigurationError when none does."""
    names = {key: str(label).strip().lower() for key, label in id2label.items()}
    found = next((int(k) for k, name in names.items() if name.startswith(ENTAILMENT_NAMES)), None)
    if found is None:
        labels = ", ".join(str(v) for v in id2label.values())
        refuse(SETTING, "config.json id2label", f"no entailment label among: {labels}")
    return found


class TransformersNLI:
    """A Hugging Face sequence-classification NLI model from a local directory."""

    def __init__(self, directory: Path, batch_size: int = 16, max_length: int = 512) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.name = directory.name
        self._torch = torch
        self._tokenizer = AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
        self._model = AutoModelForSequenceClassification.from_pretrained(
            str(directory), local_files_only=True
        )
        self._model.eval()
        labels = int(self._model.config.num_labels)
        self._index = None if labels == 1 else entailment_index(dict(self._model.config.id2label))
        self._batch_size = batch_size
        self._max_length = _max_length(self._model.config, max_length)
        self._lock = threading.Lock()

    def entailment(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        torch = self._torch
        out: list[float] = []
        with self._lock, torch.inference_mode():
            for start in range(0, len(pairs), self._batch_size):
                chunk = pairs[start : start + self._batch_size]
                encoded = self._tokenizer(
                    [p for p, _ in chunk],
                    [h for _, h in chunk],
                    truncation=True,
                    max_length=self._max_length,
                    padding=True,
                    return_tensors="pt",
                )
                logits = self._model(**encoded).logits.float()
                if self._index is None:
                    probabilities = torch.sigmoid(logits[:, 0])
                else:
                    probabilities = torch.softmax(logits, dim=-1)[:, self._index]
                out.extend(float(p) for p in probabilities.tolist())
        return out


class CrossEncoderNLI:
    """A sentence-transformers CrossEncoder from a local directory."""

    def __init__(self, directory: Path, batch_size: int = 16) -> None:
        import torch
        from sentence_transformers import CrossEncoder

        self.name = directory.name
        self._torch = torch
        self._model = CrossEncoder(str(directory), local_files_only=True, device="cpu")
        config = self._model.model.config
        self._model.max_length = _max_length(config, self._model.max_length or 512)
        labels = int(config.num_labels)
        self._index = None if labels == 1 else entailment_index(dict(config.id2label))
        self._batch_size = batch_size
        self._lock = threading.Lock()

    def entailment(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        torch = self._torch
        with self._lock:
            if self._index is None:
                scores = self._model.predict(list(pairs), batch_size=self._batch_size, convert_to_numpy=True)
                values = [float(s) for s in scores.reshape(-1)]
                return [v if 0.0 <= v <= 1.0 else float(torch.sigmoid(torch.tensor(v))) for v in values]
            logits = self._model.predict(
                list(pairs), batch_size=self._batch_size, convert_to_tensor=True, apply_softmax=False
            )
            probabilities = torch.softmax(logits.float(), dim=-1)[:, self._index]
            return [float(p) for p in probabilities.tolist()]


def _max_length(config: Any, wanted: int) -> int:
    """Tokens per pair: at most what the model's position embeddings allow (long premises truncate)."""
    positions = getattr(config, "max_position_embeddings", None)
    return min(wanted, int(positions)) if isinstance(positions, int) and positions > 0 else wanted


def load_entailment_model(directory: Path) -> EntailmentModel:
    """Load the model in ``directory`` (CrossEncoder or plain HF); ConfigurationError naming the setting."""
    if not (directory / "config.json").is_file():
        refuse(SETTING, str(directory), "no config.json: not a model directory")
    try:
        if (directory / "config_sentence_transformers.json").is_file():
            return CrossEncoderNLI(directory)
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        if int(config.get("num_labels", len(config.get("id2label", {})) or 1)) > 1:
            entailment_index(dict(config.get("id2label", {})))
        return TransformersNLI(directory)
    except ConfigurationError:
        raise
    except (OSError, ValueError, KeyError, RuntimeError) as err:
        refuse(SETTING, str(directory), f"cannot load the model: {err}", cause=err)


@dataclass(frozen=True)
class NLIRequest:
    """One claim to decide: the hypothesis, the evidence text (premise) and where it is."""

    claim: str
    premise: str
    evidence: Evidence | None


class NLIStage:
    """Decides claims the local gate could not: entailed at ``threshold`` or above; fails closed."""

    name = VerifierMethod.NLI

    def __init__(self, model: EntailmentModel, threshold: float, timeout: float) -> None:
        self._model = model
        self._threshold = threshold
        self._timeout = timeout

    async def decide(self, requests: Sequence[NLIRequest]) -> list[Verdict | None]:
        """Per request: a supported verdict, a failure verdict, or None (not entailed: keep yours)."""
        if not requests:
            return []
        pairs = [(r.premise, r.claim) for r in requests]
        try:
            with anyio.fail_after(self._timeout):
                scores = await anyio.to_thread.run_sync(self._model.entailment, pairs, abandon_on_cancel=True)
        except TimeoutError:
            return [
                self._failed(r, f"no answer within {self._timeout:g}s", VerifierFailure.TIMEOUT)
                for r in requests
            ]
        except Exception as err:
            return [self._failed(r, type(err).__name__, VerifierFailure.ERROR) for r in requests]
        if len(scores) != len(requests) or not all(
            isinstance(s, float) and math.isfinite(s) and 0.0 <= s <= 1.0 for s in scores
        ):
            return [
                self._failed(r, "not one probability per claim", VerifierFailure.INVALID_OUTPUT)
                for r in requests
            ]
        return [self._verdict(r, s) for r, s in zip(requests, scores, strict=True)]

    def _verdict(self, request: NLIRequest, score: float) -> Verdict | None:
        if score < self._threshold:
            return None
        reason = (
            f"the entailment model {self._model.name!r} finds the evidence entails the claim ({score:.2f})"
        )
        return Verdict(
            VerdictLabel.SUPPORTED,
            round(score, 4),
            VerifierMethod.NLI,
            VerdictCheck.NLI_ENTAILMENT,
            reason,
            request.evidence,
        )

    def _failed(self, request: NLIRequest, detail: str, failure: VerifierFailure) -> Verdict:
        reason = f"entailment model failed, claim not verified: {detail}"
        return Verdict(
            VerdictLabel.UNSUPPORTED,
            0.0,
            VerifierMethod.NLI,
            VerdictCheck.NLI_ERROR,
            reason,
            request.evidence,
            failure=failure,
        )
