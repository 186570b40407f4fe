"""Every check at once, and each text analysed once per verification."""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Sequence

import numpy as np

from gateway.domain import ClaimToCheck, unit_rows
from gateway.text import passage_from_text
from gateway.verification.checks import all_checks
from gateway.verification.checks.analysis import Analyses
from gateway.verification.checks.entities import Entity, EntityWords, extract_entities
from gateway.verification.checks.quantities import Quantity, QuantityPatterns, extract_quantities
from gateway.verification.local import LocalEntailmentVerifier
from gateway.verification.policy import VerificationPolicy
from tests.support.checks import on_texts

LEAFLET = (
    "Paracetamol is used to treat pain and fever. Adults can take 500 mg to 1 g every 4 to 6 hours. "
    "Do not take more than 4 g in 24 hours. Children under 16 should not take aspirin."
)

run_all = on_texts(all_checks.run_all)


def test_paraphrase_passes_every_check() -> None:
    results = run_all(
        "Adults can take 1 to 2 tablets every 4 to 6 hours.",
        "Adults may take one or two tablets every 4-6 hours, up to 4 times in 24 hours.",
    )
    assert [r for r in results if not r.passed] == []


class HashEncoder:
    """Fixed pseudo-random unit vectors per text: the test counts analyses, not similarity."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows = [np.random.default_rng(zlib.crc32(t.encode())).standard_normal(384) for t in texts]
        return unit_rows(np.array(rows, dtype=np.float32).reshape(len(texts), 384))


async def test_each_text_is_analysed_once_per_verification() -> None:
    """Two claims citing one passage, three candidate windows each: every distinct text (claim, window,
    passage) is analysed once, however many checks and claims read it."""
    numbers: Counter[str] = Counter()
    names: Counter[str] = Counter()

    def quantities(text: str, patterns: QuantityPatterns) -> tuple[Quantity, ...]:
        numbers[text] += 1
        return extract_quantities(text, patterns)

    def entities(text: str, clean: str, words: EntityWords) -> tuple[Entity, ...]:
        names[text] += 1
        return extract_entities(text, clean, words)

    passage = passage_from_text(LEAFLET, "p1")
    claims = ["Adults can take 2 g every 4 to 6 hours.", "Children under 16 may take aspirin."]
    verifier = LocalEntailmentVerifier(HashEncoder(), VerificationPolicy(local_candidates=3))
    analyses = Analyses(verifier.data, quantities=quantities, entities=entities)
    await verifier.verify([ClaimToCheck(c, None, ((1, passage),)) for c in claims], analyses)
    assert all(numbers[c] == 1 and names[c] == 1 for c in claims)
    assert names[passage.text] == 1
    assert len(numbers) > len(claims)
    assert max(numbers.values()) == 1
    assert max(names.values()) == 1
