"""The pluggable entailment model: a tiny NLI model built and saved here, loaded by the real code."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
import torch
from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

from gateway.domain import ClaimToCheck, VerdictLabel
from gateway.errors import ConfigurationError
from gateway.settings import Settings
from gateway.text import passage_from_text
from gateway.verification.cascade import CascadeVerifier, build_verifier
from gateway.verification.entailment import (
    CrossEncoderNLI,
    NLIRequest,
    NLIStage,
    TransformersNLI,
    load_entailment_model,
)
from gateway.verification.policy import VerificationPolicy

WORDS = [
    "adults",
    "take",
    "mg",
    "every",
    "hours",
    "do",
    "not",
    "more",
    "than",
    "in",
    "children",
    "should",
    "aspirin",
    "the",
    "a",
    "of",
]
LABELS = {0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}


def save_tiny_nli(directory: Path, favour: int, labels: dict[int, str] | None = None) -> Path:
    """A 2-layer BERT whose classifier always favours output ``favour``, with a WordPiece vocab."""
    directory.mkdir(parents=True, exist_ok=True)
    vocab = directory / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tokenizer = BertTokenizer(str(vocab))
    names = labels or LABELS
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=len(names),
        id2label=names,
        label2id={v: k for k, v in names.items()},
    )
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.fill_(-5.0)
        model.classifier.bias[favour] = 5.0
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def entailing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_nli(tmp_path_factory.mktemp("nli") / "entailing", favour=0)


@pytest.fixture(scope="module")
def contradicting(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_nli(tmp_path_factory.mktemp("nli") / "contradicting", favour=2)


PAIRS = [
    ("Adults take 500 mg every 4 hours.", "Adults take 500 mg."),
    ("Do not take aspirin.", "Take aspirin."),
]


def test_a_huggingface_nli_model_is_loaded_and_its_entailment_label_found(
    entailing: Path, contradicting: Path
) -> None:
    yes = load_entailment_model(entailing)
    assert isinstance(yes, TransformersNLI)
    assert all(p > 0.99 for p in yes.entailment(PAIRS))
    long_premise = ("adults take 500 mg every 4 hours " * 40, "adults take 500 mg")  # > 64 positions
    assert yes.entailment([long_premise])[0] > 0.99
    no = load_entailment_model(contradicting)
    assert all(p < 0.01 for p in no.entailment(PAIRS))


def test_a_crossencoder_directory_is_loaded_as_one(entailing: Path, tmp_path: Path) -> None:
    from sentence_transformers import CrossEncoder

    target = tmp_path / "cross"
    CrossEncoder(str(entailing), device="cpu").save(str(target))
    model = load_entailment_model(target)
    assert isinstance(model, CrossEncoderNLI)
    assert all(p > 0.99 for p in model.entailment(PAIRS))
    assert model.entailment([("adults take 500 mg every 4 hours " * 40, "adults")])[0] > 0.99


def test_a_directory_without_an_entailment_label_stops_start_up(tmp_path: Path) -> None:
    bad = save_tiny_nli(tmp_path / "sentiment", favour=0, labels={0: "POSITIVE", 1: "NEGATIVE"})
    with pytest.raises(ConfigurationError, match="no entailment label"):
        load_entailment_model(bad)
    with pytest.raises(ConfigurationError, match=r"config\.json"):
        load_entailment_model(tmp_path / "nothing-here")


class Broken:
    """Entailment models that fail in each way a real one can."""

    def __init__(self, how: str) -> None:
        self.name = how
        self.how = how
        self.released = threading.Event()
        """Set by the test once it has its verdicts: the slow model's call then returns."""

    def entailment(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if self.how == "slow":
            self.released.wait(30)  # stalls past the stage's timeout until the test lets it go
        if self.how == "raises":
            raise RuntimeError("CUDA out of memory")
        if self.how == "short":
            return [0.99]
        if self.how == "nan":
            return [float("nan")] * len(pairs)
        return [0.99] * len(pairs)


@pytest.mark.parametrize(
    ("how", "failure"),
    [("slow", "timeout"), ("raises", "error"), ("short", "invalid_output"), ("nan", "invalid_output")],
)
async def test_model_failures_fail_every_claim_closed(how: str, failure: str) -> None:
    model = Broken(how)
    # only the stalled model should meet the timeout: the others answer at once, but a busy machine (a
    # full collection holding the GIL) must not turn their failure into a timeout
    stage = NLIStage(model, threshold=0.9, timeout=0.3 if how == "slow" else 60.0)
    requests = [NLIRequest(h, p, None) for p, h in PAIRS]
    verdicts = await stage.decide(requests)
    model.released.set()
    assert len(verdicts) == len(requests)
    for verdict in verdicts:
        assert verdict is not None
        assert verdict.label is VerdictLabel.UNSUPPORTED
        assert verdict.check == "nli_error"
        assert verdict.failure == failure
        assert verdict.reason.startswith("entailment model failed, claim not verified")


TEXT = "Adults can take 500 mg every 4 to 6 hours. Do not take more than 4 g in 24 hours."


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_the_configured_model_decides_claims_the_local_gate_cannot(
    embedder,  # type: ignore[no-untyped-def]
    entailing: Path,
    contradicting: Path,
) -> None:
    """Wired by GATEWAY_NLI_MODEL: a chat claim without a quote is decided by the model, either way."""
    source = ((1, passage_from_text(TEXT)),)
    claim = ClaimToCheck("Grown-ups may use 500 mg every four to six hours.", None, source)
    policy = VerificationPolicy()
    for directory, expected in (
        (entailing, VerdictLabel.SUPPORTED),
        (contradicting, VerdictLabel.UNSUPPORTED),
    ):
        verifier = build_verifier(Settings(nli_model=directory), policy, embedder)
        assert isinstance(verifier, CascadeVerifier)
        [verdict] = await verifier.verify([claim])
        assert verdict.label is expected
        if expected is VerdictLabel.SUPPORTED:
            assert verdict.method == "nli"
            assert verdict.check == "nli_entailment"
        else:
            assert verdict.check == "no_anchored_quote"
    # a local contradiction is final: the model is never asked to overrule it
    verifier = build_verifier(Settings(nli_model=entailing), policy, embedder)
    changed = ClaimToCheck(
        "Do not take more than 8 g in 24 hours.", "Do not take more than 4 g in 24 hours", source
    )
    [verdict] = await verifier.verify([changed])
    assert verdict.label is VerdictLabel.CONTRADICTED
