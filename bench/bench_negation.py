"""Negation scope for the red-flag rules: the policy's own scopes against medspacy's ConText and negspacy.

Run (the libraries are optional; a method whose library is missing is skipped)::

    .venv/bin/pip install medspacy==1.3.1 negspacy==1.1.0   # both rule-based, no model download
    PYTHONPATH=. .venv/bin/python bench/bench_negation.py

Only the rule layer is measured (the semantic layers do not use a negation scope). Every match of a
negatable emergency rule is handed to each method as a target span; a rule fires on a message when
one of its matches is not negated (non-negatable rules always fire). Reported per set:

- emergencies caught by the rule layer (a negation method can only lose these: a wrongly negated match);
- non-emergencies the rule layer flags (a method wins these by negating a denied symptom);
- per-message time of the negation step alone (median, p95), next to the policy scopes as baseline.

Sets: ``bench/data/triage_messages.jsonl`` and ``../shared/eval/triage/`` (all rows). Asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.triage_data import EVAL, ROOT
from gateway.policies import load_policy
from gateway.triage.contexts import OperatingContext, TriageRule
from gateway.triage.evidence import negated
from gateway.triage.policy import NegationPolicy
from gateway.triage.rule_layer import compiled as _compiled

Span = tuple[int, int]
Negator = Callable[[str, list[Span]], list[bool]]
"""(text, target spans) -> negated flag per span."""


@dataclass(frozen=True)
class Message:
    text: str
    emergency: bool


def messages(names: Iterable[str]) -> dict[str, list[Message]]:
    sets: dict[str, list[Message]] = {}
    rows = [json.loads(line) for line in (ROOT / "bench/data/triage_messages.jsonl").open(encoding="utf-8")]
    sets["triage_messages"] = [Message(" ".join(r["turns"]), r["label"] == "emergency") for r in rows]
    for name in names:
        path = EVAL / f"{name}.jsonl"
        if path.is_file():
            data = [json.loads(line) for line in path.open(encoding="utf-8")]
            sets[name] = [Message(d["text"], d["label"] == "suicide") for d in data]
    return sets


def matches(text: str, rules: tuple[TriageRule, ...]) -> list[tuple[TriageRule, Span]]:
    return [(rule, m.span()) for rule in rules for p in rule.patterns for m in _compiled(p).finditer(text)]


def policy_negator(negation: NegationPolicy) -> Negator:
    return lambda text, spans: [negated(text, start, negation) for start, _ in spans]


def spacy_negator(nlp: Any, run: Callable[[Any], Any], attribute: str) -> Negator:
    """Runs a spaCy component over a doc whose entities are exactly the rule matches."""
    from spacy.tokens import Span as SpacySpan
    from spacy.util import filter_spans

    def negate(text: str, spans: list[Span]) -> list[bool]:
        doc = nlp.make_doc(text)
        for _name, proc in nlp.pipeline:  # sentence splitting only
            doc = proc(doc)
        made = [doc.char_span(s, e, label="RED_FLAG", alignment_mode="expand") for s, e in spans]
        ents = filter_spans([m for m in made if isinstance(m, SpacySpan)])
        doc.ents = ents
        doc = run(doc)
        flags = {(e.start_char, e.end_char): bool(getattr(e._, attribute)) for e in doc.ents}
        out = []
        for span, made_span in zip(spans, made, strict=True):
            key = (made_span.start_char, made_span.end_char) if made_span is not None else span
            # a match swallowed by an overlapping one takes the verdict of the span that covers it
            covering = [v for (s, e), v in flags.items() if s <= key[0] and key[1] <= e]
            out.append(flags.get(key, any(covering)))
        return out

    return negate


def context_negator() -> Negator | None:
    try:
        import medspacy
        from medspacy.context import ConText
    except ImportError:
        return None
    with contextlib.suppress(ImportError):  # no loguru: nothing logs PyRuSH's per-token DEBUG lines
        from loguru import logger

        logger.remove()
    nlp = medspacy.load(medspacy_enable=["medspacy_pyrush"])
    context = ConText(nlp)
    return spacy_negator(nlp, context, "is_negated")


def negspacy_negator() -> Negator | None:
    try:
        import spacy
        from negspacy.negation import Negex
        from negspacy.termsets import termset
    except ImportError:
        return None
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    negex = Negex(nlp, "negex", termset("en_clinical").get_patterns(), [], "negex", [])
    return spacy_negator(nlp, negex, "negex")


def fires(text: str, found: list[tuple[TriageRule, Span]], negator: Negator) -> bool:
    if any(not rule.negatable for rule, _ in found):
        return True
    if not found:
        return False
    return not all(negator(text, [span for _, span in found]))


def run(context: OperatingContext, sets: dict[str, list[Message]], methods: dict[str, Negator]) -> None:
    rules = context.emergency
    header = f"{'set':<18}{'method':<10}{'emergencies fired':>20}{'others flagged':>18}"
    header += f"{'median ms':>11}{'p95 ms':>9}"
    print(header)
    for name, rows in sets.items():
        found = [(m, matches(m.text, rules)) for m in rows]
        with_match = [(m, f) for m, f in found if f]
        emergencies = sum(m.emergency for m in rows)
        others = len(rows) - emergencies
        for method, negator in methods.items():
            times: list[float] = []
            hit = flagged = 0
            for message, spans in with_match:
                started = time.perf_counter()
                fired = fires(message.text, spans, negator)
                times.append((time.perf_counter() - started) * 1000)
                hit += fired and message.emergency
                flagged += fired and not message.emergency
            median = statistics.median(times) if times else 0.0
            p95 = statistics.quantiles(times, n=20)[-1] if len(times) > 1 else median
            print(
                f"{name:<18}{method:<10}{f'{hit}/{emergencies}':>20}{f'{flagged}/{others}':>18}"
                f"{median:>11.3f}{p95:>9.3f}"
            )
    print("(time: the negation step of messages with at least one rule match)")


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--context", default="general")
    parser.add_argument("-v", "--verbose", action="store_true", help="list messages where methods disagree")
    args = parser.parse_args()
    policy = load_policy(ROOT / "policies", args.context)
    methods: dict[str, Negator] = {"policy": policy_negator(policy.triage.settings.negation)}
    for name, make in (("context", context_negator), ("negspacy", negspacy_negator)):
        negator = make()
        if negator is None:
            print(f"({name}: library not installed, skipped)")
        else:
            methods[name] = negator
    sets = messages(["clinical", "non_clinical", "suicide_risk"])
    run(policy.context, sets, methods)
    if args.verbose:
        for rows in sets.values():
            for message in rows:
                found = matches(message.text, policy.context.emergency)
                verdicts = {k: fires(message.text, found, n) for k, n in methods.items()} if found else {}
                if len(set(verdicts.values())) > 1:
                    print(message.emergency, verdicts, message.text[:160])


if __name__ == "__main__":
    main()
