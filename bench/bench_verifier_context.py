"""The verifier's polarity check with medspacy ConText's negation scopes instead of its own.

Run (medspacy is optional and not a dependency; rule-based, no model download)::

    .venv/bin/pip install medspacy==1.3.1
    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_verifier_context.py

Runs ``bench/bench_verifier.py`` (leak / supported recall / AUC on the seven dev sets) with
``AnalysedText.negations`` computed by ConText's default rules: every content word of a text is a
target; each NEGATED_EXISTENCE modifier negates the targets ConText gives it (the negation's
``scope``), and the content words of its scope span form its ``clause``. Negative-prefix words
("unrelated") are kept as in the checks. The local verdicts go to their own cache, so the default
cache is not mixed with this experiment's. Compare with a plain ``bench_verifier.py`` run.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import bench_verifier
from gateway.verification.checks import analysis, polarity
from gateway.verification.checks.words import WORD, WordData

CACHE = bench_verifier.ROOT / ".cache" / "bench_verifier_local_context.jsonl"
"""This experiment's local verdicts: this checkout's own, apart from ``bench_verifier.CACHE``."""
NEEDS = (
    "bench_verifier_context.py needs medspacy, which is optional and not installed: "
    ".venv/bin/pip install medspacy==1.3.1 (rule-based; no model download)"
)


def context_negations() -> Any:
    """``polarity.negations``'s replacement (same signature): ConText's negation scopes."""
    import medspacy
    from loguru import logger  # PyRuSH logs every token at DEBUG
    from medspacy.context import ConText
    from spacy.tokens import Span

    logger.remove()
    nlp = medspacy.load(medspacy_enable=["medspacy_pyrush"])
    context = ConText(nlp)

    def negations(
        clean: str, prefix_roots: frozenset[str], _words: polarity.PolarityWords, text_words: WordData
    ) -> tuple[polarity.Negation, ...]:
        stem, stopwords = text_words.stem, text_words.stopwords

        def content(token: Any) -> bool:
            word = token.text.lower()
            return WORD.fullmatch(word) is not None and word not in stopwords and len(word) > 1

        doc = nlp(clean)
        doc.ents = [Span(doc, i, i + 1, label="WORD") for i, token in enumerate(doc) if content(token)]
        doc = context(doc)
        graph = doc._.context_graph
        found: list[polarity.Negation] = []
        for modifier in graph.modifiers:
            if modifier.category != "NEGATED_EXISTENCE":
                continue
            scope = frozenset(stem(t.text.lower()) for t, m in graph.edges if m is modifier)
            if scope:
                start, end = modifier.scope_span
                words = frozenset(stem(doc[i].text.lower()) for i in range(start, end) if content(doc[i]))
                found.append(polarity.Negation(scope, words | scope))
        roots = prefix_roots - set(WORD.findall(clean))
        found += [polarity.Negation(frozenset((stem(r),)), frozenset((stem(r),))) for r in roots]
        return tuple(found)

    return negations


def main() -> int:
    if importlib.util.find_spec("medspacy") is None:
        print(NEEDS, file=sys.stderr)
        return 2
    analysis.negations = context_negations()  # type: ignore[attr-defined]
    sys.argv = [sys.argv[0], "--cache", str(CACHE), *sys.argv[1:]]
    status: int = asyncio.run(bench_verifier.main())
    return status


if __name__ == "__main__":
    raise SystemExit(main())
