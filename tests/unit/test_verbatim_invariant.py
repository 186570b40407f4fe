"""A claim that repeats a sentence of the bundled corpus word for word must be supported by its chunk.

Regression: a verbatim atorvastatin sentence was once rejected by a false antonym clash between two
truncated stems. The invariant is checked over every sentence of every document in ``knowledge/``:
through the verifier (all claims of a chunk in one batch, as a request sends them), and at the level of
the checks and the scoring of the sentence's own candidate, so it holds even without the verbatim rule.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gateway.domain import ClaimToCheck, Passage, VerdictLabel
from gateway.knowledge.chunking import chunk_document
from gateway.knowledge.loaders import load_manifest
from gateway.verification.checks import all_checks, polarity
from gateway.verification.checks.analysis import Analyses
from gateway.verification.local import LocalEntailmentVerifier, candidate
from gateway.verification.policy import VerificationPolicy
from tests.support.checks import on_texts

run_all = on_texts(all_checks.run_all)
check_antonyms = on_texts(polarity.check_antonyms)
KNOWLEDGE = Path(__file__).resolve().parents[2] / "knowledge"


class NoEncoder:
    """Verbatim claims need no embedding; any call would mean the shortcut was missed."""

    calls = 0

    def encode(self, texts: object) -> np.ndarray:
        NoEncoder.calls += 1
        return np.zeros((len(texts), 384), dtype=np.float32)  # type: ignore[arg-type]


def corpus_passages() -> list[Passage]:
    return [
        Passage(
            id=chunk.id,
            document_id=chunk.document_id,
            text=chunk.text,
            title="",
            url="",
            org="",
            tier="unknown",
            reviewed_on=None,
            score=1.0,
            sentence_spans=chunk.sentence_spans,
        )
        for document in load_manifest(KNOWLEDGE)
        for chunk in chunk_document(document)
    ]


@pytest.fixture(scope="module")
def passages() -> list[Passage]:
    found = corpus_passages()
    assert len(found) > 100
    return found


@pytest.mark.parametrize("combiner", ["rules", "learned"])
async def test_every_corpus_sentence_is_supported_by_its_chunk(
    passages: list[Passage], combiner: str
) -> None:
    verifier = LocalEntailmentVerifier(NoEncoder(), VerificationPolicy(local_combiner=combiner))  # type: ignore[arg-type]
    failures = []
    for passage in passages:
        sentences = [text for _, text in passage.sentences()]
        verdicts = await verifier.verify([ClaimToCheck(s, None, ((1, passage),)) for s in sentences])
        failures += [
            (s, v.check, v.reason)
            for s, v in zip(sentences, verdicts, strict=True)
            if v.label is not VerdictLabel.SUPPORTED
        ]
    assert failures == []
    assert NoEncoder.calls == 0


@pytest.mark.parametrize("combiner", ["rules", "learned"])
def test_own_sentence_scores_as_support_without_the_verbatim_rule(
    passages: list[Passage], combiner: str
) -> None:
    """The scorer alone (cosine 1.0 with itself) supports every sentence: no check fires on its source."""
    verifier = LocalEntailmentVerifier(NoEncoder(), VerificationPolicy(local_combiner=combiner))  # type: ignore[arg-type]
    failures = []
    for passage in passages:
        for span, sentence in passage.sentences():
            assert not any(r.clash for r in run_all(sentence, sentence)), sentence
            analyses = Analyses(verifier.data)
            found = candidate(1, passage, span, sentence, analyses)
            assessment = verifier.evidence_judge.judge(analyses(sentence), found, 1.0, 1.0)
            if assessment.label is not VerdictLabel.SUPPORTED:
                failures.append((sentence, assessment.check, assessment.reason))
    assert failures == []


def test_the_reported_atorvastatin_sentence(passages: list[Passage]) -> None:
    [passage] = [p for p in passages if "most common side effects reported with atorvastatin" in p.text]
    [sentence] = [t for _, t in passage.sentences() if t.startswith("The most common side effects")]
    assert check_antonyms(sentence, passage.text).passed


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Ear infections are common in children.", "Treat early; symptoms may come later."),
        ("Protein in the urine can be measured.", "Kidney damage can be serious."),
        ("Fasting blood sugar is measured in the morning.", "Symptoms develop slowly."),
        (
            "Common side effects include nausea.",
            "Serious muscle damage is rare. Common side effects include nausea.",
        ),
    ],
)
def test_antonyms_compare_whole_words_not_truncated_stems(claim: str, evidence: str) -> None:
    assert check_antonyms(claim, evidence).passed
