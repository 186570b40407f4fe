"""Stage 6: SourceCleanup and the refusal policy.

Supported claims are kept. An unsupported claim is handed to the rewriter (when one is configured),
whose rewrite must pass verification again; otherwise the claim is removed. A sentence reaches the
patient only if every claim in it survived. The whole answer is refused when no claim survives, when
too large a share is removed, or when a safety-critical claim (dose, contraindication, interaction,
emergency advice; rules in policy) fails.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from gateway.domain import (
    ClaimOutcome,
    ClaimResult,
    Outcome,
    RefusalReason,
    Span,
    Statement,
    Verdict,
)
from gateway.policy import CleanupPolicy


@lru_cache(maxsize=256)
def _pattern(expression: str) -> re.Pattern[str]:
    return re.compile(expression, re.IGNORECASE)


def safety_rule(text: str, policy: CleanupPolicy) -> str | None:
    """The id of the first safety-critical rule the text matches, if any."""
    for rule in policy.safety_critical:
        if any(_pattern(p).search(text) for p in rule.patterns):
            return rule.id
    return None


def judge_claims(
    statements: Sequence[Statement], verdicts: Sequence[Verdict], policy: CleanupPolicy
) -> list[ClaimResult]:
    """Keep supported claims, remove the rest (a rewrite, when available, is applied by the caller)."""
    claims = [s for s in statements if s.is_claim]
    results = []
    for statement, verdict in zip(claims, verdicts, strict=True):
        rule = safety_rule(statement.text, policy)
        if verdict.supported:
            results.append(
                ClaimResult(
                    statement, verdict, ClaimOutcome.VERIFIED, statement.text, safety_critical=bool(rule)
                )
            )
        else:
            results.append(
                ClaimResult(
                    statement,
                    verdict,
                    ClaimOutcome.REMOVED,
                    None,
                    reason=verdict.reason or verdict.check,
                    safety_critical=bool(rule),
                )
            )
    return results


def refusal_reason(results: Sequence[ClaimResult], policy: CleanupPolicy) -> tuple[RefusalReason, str] | None:
    if not results:
        return RefusalReason.NO_CLAIM_SURVIVED, "the answer contained no checkable claim"
    removed = [r for r in results if r.outcome is ClaimOutcome.REMOVED]
    critical = [r for r in removed if r.safety_critical]
    if critical:
        return (
            RefusalReason.SAFETY_CRITICAL_FAILED,
            f"a safety-critical claim failed verification: {critical[0].statement.text!r}",
        )
    if len(removed) == len(results):
        return RefusalReason.NO_CLAIM_SURVIVED, "no claim was supported by its cited source"
    share = len(removed) / len(results)
    if share > policy.max_removed_share:
        return RefusalReason.TOO_MANY_REMOVED, f"{len(removed)} of {len(results)} claims failed verification"
    return None


def assemble(
    answer: str, statements: Sequence[Statement], results: Sequence[ClaimResult]
) -> tuple[str, list[ClaimResult]]:
    """The patient's text: the sentences whose claims all survived, with each claim's final span."""
    by_sentence: dict[int, list[ClaimResult]] = {}
    for result in results:
        by_sentence.setdefault(result.statement.sentence_index, []).append(result)
    pieces: list[str] = []
    placed: dict[int, Span] = {}
    cursor = 0
    seen: set[int] = set()
    for statement in statements:
        index = statement.sentence_index
        if index in seen:
            continue
        seen.add(index)
        claim_results = by_sentence.get(index, [])
        if any(r.outcome is ClaimOutcome.REMOVED for r in claim_results):
            continue
        rewritten = [r for r in claim_results if r.outcome is ClaimOutcome.REWRITTEN]
        text = (
            rewritten[0].final_text
            if rewritten and rewritten[0].final_text
            else answer[statement.span.start : statement.span.end]
        )
        if pieces:
            cursor += 1
        placed[index] = Span(cursor, cursor + len(text))
        pieces.append(text)
        cursor += len(text)
    final = []
    for result in results:
        span = (
            placed.get(result.statement.sentence_index)
            if result.outcome is not ClaimOutcome.REMOVED
            else None
        )
        final.append(_with_span(result, span))
    return " ".join(pieces), final


def _with_span(result: ClaimResult, span: Span | None) -> ClaimResult:
    from dataclasses import replace

    return replace(result, final_span=span)


def cleanup(
    answer: str, statements: Sequence[Statement], results: Sequence[ClaimResult], policy: CleanupPolicy
) -> Outcome:
    text, placed = assemble(answer, statements, results)
    refusal = refusal_reason(placed, policy)
    if refusal is not None:
        reason, detail = refusal
        return Outcome("", tuple(statements), tuple(placed), True, reason, detail)
    return Outcome(text, tuple(statements), tuple(placed))
