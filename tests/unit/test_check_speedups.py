"""Shortcuts of the verifier's speed path read what the long way reads (#35 item 7, speed): whitespace
collapsed without the regular expression where nothing is to collapse, frames searched only in texts
holding their two words, typeset numbers only in non-ASCII texts, a text's word keys and a passage's
window layout computed once, one entity check per passage for a claim's candidates, only the candidates
that can win checked, and the entity vocabulary matched by a trie."""

from __future__ import annotations

import json
import random
import re
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from gateway.domain import VerdictLabel
from gateway.text import MARKER_SPACED, QUOTE_FOLDS, normalise, strip_markers
from gateway.verification.candidates import window_layout, windows
from gateway.verification.checks import role_reader
from gateway.verification.checks.analysis import POSSESSIVE, WORD_PARTS, AnalysedText, Analyses
from gateway.verification.checks.quantities import numeric_text
from gateway.verification.checks.results import CheckResult
from gateway.verification.checks.words import tokens
from gateway.verification.local import LocalEntailmentVerifier
from gateway.verification.policy import VerificationPolicy
from tests.support.checks import CHECK_DATA

RESTATEMENTS = Path(__file__).resolve().parents[2] / "bench" / "data" / "restatements"
SPACES = re.compile(r"\s+")
EDGES = [
    "",
    " ",
    "a  b",
    "a\tb",
    "a\nb",
    " x ",
    "a\u00a0b",
    "a\u2009b",
    "a\u2028b",
    "a\x1cb",
    "a\x85b",
    "\u3000x",
    "ﬁne “quoted” — text",
    "x [1] y",
    "x[2, 3].",
    "COVID\u201119 at 1\u00b77 mg, 781\u2009000 people",
    "Treatment of asthma with steroids spreads from the lungs to the blood.",
    "p.a.d. (peripheral artery disease) with with",
]


def _texts() -> list[str]:
    rows = [json.loads(line) for line in (RESTATEMENTS / "medquad_restatements.jsonl").open(encoding="utf-8")]
    generated = random.Random(35)
    alphabet = " \t\n\u00a0\u2009\u3000ab[1]’“-x\x85\u2028É"
    noise = [
        "".join(generated.choice(alphabet) for _ in range(generated.randint(0, 12))) for _ in range(5000)
    ]
    return [t for r in rows for t in (r["claim"], r["evidence"])] + EDGES + noise


TEXTS = _texts()


def _strip_markers(text: str) -> str:
    if "[" in text:
        text = MARKER_SPACED.sub("", text)
    return SPACES.sub(" ", text).strip()


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(QUOTE_FOLDS)
    return SPACES.sub(" ", text).strip().lower()


def test_whitespace_is_collapsed_as_the_regular_expression_does() -> None:
    assert [strip_markers(t) for t in TEXTS] == [_strip_markers(t) for t in TEXTS]
    assert [normalise(t) for t in TEXTS] == [_normalise(t) for t in TEXTS]


def test_frames_are_those_found_without_the_word_test() -> None:
    grammar = CHECK_DATA.grammar
    clean = [normalise(t) for t in TEXTS]
    shortcut = [role_reader.read_relations(t, grammar) for t in clean]
    assert any(r.family.startswith("frame") for found in shortcut for r in found)
    every_frame = [role_reader.read_relations(t, grammar, prefilter=lambda text, name: True) for t in clean]
    assert every_frame == shortcut


def test_ascii_numbers_need_no_typesetting_fix() -> None:
    assert numeric_text("1\u00b77 and 781\u2009000, COVID\u201119") == "1.7 and 781,000, COVID-19"
    ascii_texts = [t for t in TEXTS if t.isascii()]
    assert ascii_texts
    assert all(numeric_text(t) == t for t in ascii_texts)


def test_word_keys_are_the_binding_keys() -> None:
    analyses = Analyses(CHECK_DATA)
    stem = CHECK_DATA.words.stem
    for text in TEXTS[:400] + EDGES:
        analysed = analyses(text)
        keys: set[str] = set()
        for token in tokens(analysed.entity_text):
            keys.add(stem(token))
            keys.update(stem(p) for p in WORD_PARTS.split(POSSESSIVE.sub("", token)) if p)
        assert analysed.word_keys == (frozenset(keys), CHECK_DATA.words.content_words(analysed.entity_text))
        assert analyses(text).word_keys is analysed.word_keys


def test_a_window_layout_is_the_windows_and_read_only() -> None:
    for count in range(6):
        bounds, first, last, singles = window_layout(count, 3)
        assert bounds == tuple(windows(count, 3))
        assert first.tolist() == [a for a, _ in bounds]
        assert last.tolist() == [b for _, b in bounds]
        assert singles.tolist() == [b - a == 1 for a, b in bounds]
        assert not any(array.flags.writeable for array in (first, last, singles))
    assert window_layout(4, 3) is window_layout(4, 3)


def test_a_passage_entity_check_is_shared_by_its_candidates() -> None:
    from gateway.text import passage_from_text
    from gateway.verification.candidates import candidate

    verifier = LocalEntailmentVerifier(np.ones, VerificationPolicy(), CHECK_DATA)  # type: ignore[arg-type]
    text = "Ibuprofen eases pain in adults. Paracetamol lowers fever. Children may take it."
    passage = passage_from_text(text)
    analyses = Analyses(CHECK_DATA)
    claim = analyses("Ibuprofen lowers fever in children.")
    shared: dict[AnalysedText, CheckResult] = {}
    for span, sentence in passage.sentences():
        found = candidate(1, passage, span, sentence, analyses)
        assert verifier.evidence_judge.judge(claim, found, 0.8, 0.8, shared) == verifier.evidence_judge.judge(
            claim, found, 0.8, 0.8
        )
    assert list(shared) == [analyses(text)]


def test_the_best_candidate_is_the_one_judging_every_candidate_picks() -> None:
    """Candidates whose base score is below a judged score are not checked; the winner (ties to the
    most similar) is the same as when every candidate is judged, or, when that winner is unsupported,
    a candidate judged contradicted (a contradiction shown by another candidate, #35)."""
    from gateway.text import passage_from_text
    from gateway.verification.candidates import candidate

    verifier = LocalEntailmentVerifier(np.ones, VerificationPolicy(), CHECK_DATA)  # type: ignore[arg-type]
    text = (
        "Ibuprofen eases pain in 20% of adults. Paracetamol does not lower fever. Children may take it. "
        "Aspirin raises the risk of bleeding in all patients."
    )
    passage = passage_from_text(text)
    claims = [
        "Ibuprofen eases pain in 30% of adults.",
        "Paracetamol lowers fever.",
        "Children may take it.",
        "Aspirin always raises the risk of bleeding.",
        "Aspirin lowers the risk of bleeding in children",
    ]
    generated = random.Random(7)
    skipped = 0
    for claim_text in claims:
        for trial in range(40):
            analyses = Analyses(CHECK_DATA)
            claim = analyses(claim_text)
            similarities = [round(generated.uniform(0.2, 0.9), 1 if trial % 2 else 6) for _ in range(4)]
            found = [
                (candidate(1, passage, span, sentence, analyses), s)
                for (span, sentence), s in zip(passage.sentences(), similarities, strict=True)
            ]
            judged = [verifier.evidence_judge.judge(claim, c, s, max(similarities)) for c, s in found]
            chosen = verifier.evidence_judge.best(claim, found, max(similarities))
            winner = max(judged, key=lambda a: (a.score, a.similarity))
            contradicted = [a for a in judged if a.label is VerdictLabel.CONTRADICTED]
            if winner.label is VerdictLabel.UNSUPPORTED and chosen != winner:
                assert chosen in contradicted
            else:
                assert chosen == winner
            best = max(a.score for a in judged)
            skipped += sum(verifier.evidence_judge.base(claim, c, s)[0] < best for c, s in found)
    assert skipped > 0


def test_the_entity_patterns_match_what_the_longest_first_alternation_matches() -> None:
    """The vocabulary and subject patterns are tries; they find what the plain alternation of the
    forms, longest first, finds (same places, same forms), on real and generated texts."""
    words = CHECK_DATA.entities
    generated = random.Random(11)
    forms = sorted(words.vocabulary, key=len, reverse=True)
    pieces = [*forms[:200], " ", "-", "s", "x", ".", "\n"]
    texts = [normalise(t) for t in _texts()[:3000]] + [
        "".join(generated.choice(pieces) for _ in range(generated.randint(1, 8))) for _ in range(3000)
    ]
    for trie, listed in (
        (words.vocabulary_pattern, words.vocabulary),
        (words.subjects_pattern, words.subjects),
    ):
        plain = re.compile(
            r"(?<![\w-])(?:"
            + "|".join(re.escape(f) for f in sorted(listed, key=len, reverse=True))
            + r")(?![\w-])"
        )
        found = 0
        for text in texts:
            expected = [(m.start(), m.group(0)) for m in plain.finditer(text)]
            assert [(m.start(), m.group(0)) for m in trie.finditer(text)] == expected
            found += len(expected)
        assert found > 100


def test_kept_readings_are_shared_across_requests_and_read_the_same() -> None:
    from gateway.verification.checks.analysis import Readings

    kept = Readings(CHECK_DATA, size=2)
    text = "Paracetamol does not lower fever in 20% of children."
    first, second = Analyses(CHECK_DATA, kept=kept), Analyses(CHECK_DATA, kept=kept)
    assert first(text) is second(text)
    fresh = AnalysedText(text, CHECK_DATA)
    assert (first(text).negations, first(text).quantities, first(text).entities) == (
        fresh.negations,
        fresh.quantities,
        fresh.entities,
    )
    with pytest.raises(ValueError, match="same word data"):
        Analyses(CHECK_DATA, entities=lambda *_: (), kept=kept)
