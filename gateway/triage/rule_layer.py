"""Triage's rule layer: the context's red-flag rules (``policies/contexts/<name>.yaml``), negation-aware.

A match whose words are negated ("no chest pain", "denies", "without fever") does not fire. A general
information question about a red flag ("what are the signs of a stroke?") is told apart from a report.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from gateway.triage.contexts import OperatingContext, TriageRule
from gateway.triage.evidence import negated
from gateway.triage.flag_parts import flag_starts
from gateway.triage.policy import NegationPolicy, TriagePolicy


@lru_cache(maxsize=1024)
def compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def matches(patterns: tuple[str, ...], text: str) -> bool:
    return any(compiled(p).search(text) for p in patterns)


def _fires(rule: TriageRule, text: str, negation: NegationPolicy | None) -> bool:
    return fired(rule, text, negation) is not None


def fired(rule: TriageRule, text: str, negation: NegationPolicy | None) -> str | None:
    """The words of the first match of ``rule`` that is not negated (or, for a rule that is not
    ``negatable``, not denied as its ``denied_by`` says), if any. A match is read at its start and at
    its ``flag`` groups: "sweating at the gym and had no chest pain" denies the chest pain it needs."""
    for pattern in rule.patterns:
        for match in compiled(pattern).finditer(text):
            starts = {match.start(), *flag_starts(match)}
            if negation is None or not any(_denied(rule, text, start, negation) for start in starts):
                return match.group(0)
    return None


def _denied(rule: TriageRule, text: str, start: int, negation: NegationPolicy) -> bool:
    before = text[:start]
    if any(compiled(p).search(before) for p in rule.denied_by):
        return True
    return rule.negatable and negated(text, start, negation)


def first_rule(
    rules: tuple[TriageRule, ...],
    text: str,
    negation: NegationPolicy | None = None,
    safe: Callable[[TriageRule], bool] | None = None,
) -> TriageRule | None:
    """The first rule that fires on ``text`` and whose red flag the text does not state itself safe
    from (``safe``: the evidence reader's ``states_safe``, where the caller has one)."""
    return next((rule for rule in rules if _fires(rule, text, negation) and not (safe and safe(rule))), None)


def _is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?")


def information_only(text: str, context: OperatingContext, policy: TriagePolicy | None = None) -> bool:
    """A general question that reports nothing personal ("what are the signs of a stroke?"); with a
    policy, vignette and third-person reports (``evidence.yaml`` ``information_personal``) are personal,
    and so is a question whose supposition is told as done (``asking.confirms``: "I already took them")."""
    extra = policy.evidence.information_questions if policy is not None else ()
    if not (matches(context.information_questions, text) or matches(extra, text)):
        return False
    if matches(context.personal_report, text):
        return False
    if policy is None:
        return True
    evidence = policy.evidence
    return not (matches(evidence.information_personal, text) or matches(evidence.asking.confirms, text))


def red_flag(
    text: str,
    context: OperatingContext,
    negation: NegationPolicy | None = None,
    safe: Callable[[TriageRule], bool] | None = None,
) -> TriageRule | None:
    """The emergency rule this text reports, if any (information questions excepted)."""
    rule = first_rule(context.emergency, text, negation, safe)
    if rule is None or (rule.information_exempt and information_only(text, context)):
        return None
    return rule
