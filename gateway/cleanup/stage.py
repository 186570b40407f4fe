"""Stage 6: SourceCleanup and the refusal policy.

Supported claims are kept. An unsupported claim is handed to the rewriter, whose rewrite must pass
verification again; otherwise the claim is removed. A claim resting on an instruction planted in a
source is never evidence and never rewritten: it refuses the answer. The whole answer is refused when
no claim survives, when more than ``max_removed_share`` of the claims is removed, or when a
safety-critical claim (dose, contraindication, interaction, emergency advice; rules in policy) fails
and is not rewritten-and-verified (``allow_rewritten_safety_critical``).

``Cleanup`` assembles the patient's text sentence by sentence, in order, and only releases a sentence
once it is final (its claims verified, rewritten or removed) and no outcome still pending could make
the answer refused. Before rewriting, every failing claim counts as removed: that is the worst case,
and rewrites only improve it. So what ``ready()`` returns is never retracted, which is what lets the
pipeline stream it.

Text rules: a sentence whose only claim is removed is dropped; a sentence with several claims keeps
the surviving ones as one sentence each; a rewrite carries the marker of the passage it was verified
against; a supported claim without a marker gets the marker of the passage its evidence is in; a
leading connective ("However, ...") after a dropped sentence is removed. Marker numbers are never
renumbered: ``[n]`` always means ``trust.sources[n-1]``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from rapidfuzz import fuzz

from gateway.cleanup.policy import CleanupPolicy
from gateway.domain import (
    ClaimOutcome,
    ClaimResult,
    Evidence,
    Outcome,
    Passage,
    RefusalReason,
    Span,
    Statement,
    Verdict,
    VerdictLabel,
)
from gateway.drafting.contract import with_markers
from gateway.knowledge.instructions import is_planted, matches_any
from gateway.text import marker_numbers, normalise, sentence_spans, strip_markers
from gateway.vocabulary import VerdictCheck

DUPLICATE_SIMILARITY = 90.0
"""rapidfuzz ratio (0..100) at or above which a rewrite repeats a sentence already in the answer."""
_CONNECTIVE = re.compile(
    r"^(however|also|but|and|so|therefore|in addition|additionally|moreover|furthermore|"
    r"as a result|because of this|for this reason|this means that|that means)\s*,?\s+",
    re.IGNORECASE,
)


def safety_rule(text: str, policy: CleanupPolicy) -> str | None:
    """The id of the first safety-critical rule the text matches, if any."""
    for rule in policy.safety_critical:
        if matches_any(text, rule.patterns):
            return rule.id
    return None


# --- judging -----------------------------------------------------------------------------------------


def judge_claims(
    statements: Sequence[Statement],
    verdicts: Sequence[Verdict],
    passages: Sequence[Passage],
    policy: CleanupPolicy,
) -> list[ClaimResult]:
    """Keep supported claims; every other claim starts ``removed`` (the worst case rewriting improves)."""
    claims = [s for s in statements if s.is_claim]
    return [_judge(s, v, passages, policy) for s, v in zip(claims, verdicts, strict=True)]


def _judge(
    statement: Statement, verdict: Verdict, passages: Sequence[Passage], policy: CleanupPolicy
) -> ClaimResult:
    critical = safety_rule(statement.text, policy) is not None
    if _rests_on_planted(statement, verdict, passages, policy):
        reason = "the claim repeats or rests on an instruction planted in a source"
        planted = Verdict(
            VerdictLabel.UNSUPPORTED,
            0.0,
            verdict.method,
            VerdictCheck.PLANTED_INSTRUCTION,
            reason,
            verdict.evidence,
        )
        return ClaimResult(
            statement, planted, ClaimOutcome.REMOVED, None, reason=reason, safety_critical=True
        )
    if verdict.supported:
        return ClaimResult(
            statement, verdict, ClaimOutcome.VERIFIED, statement.text, safety_critical=critical
        )
    reason = verdict.reason or verdict.check
    return ClaimResult(
        statement, verdict, ClaimOutcome.REMOVED, None, reason=reason, safety_critical=critical
    )


def _rests_on_planted(
    statement: Statement, verdict: Verdict, passages: Sequence[Passage], policy: CleanupPolicy
) -> bool:
    texts = [statement.text, statement.quote or ""]
    if verdict.evidence is not None:
        texts.append(evidence_context(verdict.evidence, passages))
    return any(is_planted(text, policy.planted_instruction) for text in texts if text)


def evidence_context(evidence: Evidence, passages: Sequence[Passage]) -> str:
    """The whole sentences of the cited passage that the evidence span touches."""
    if not 1 <= evidence.source_number <= len(passages):
        return evidence.text
    passage = passages[evidence.source_number - 1]
    text, span = passage.text, evidence.span
    sentences = passage.sentence_spans or sentence_spans(text)  # stored at ingestion: not split again
    touched = [text[s.start : s.end] for s in sentences if s.start < span.end and span.start < s.end]
    return " ".join(touched) or evidence.text


def rewritable(result: ClaimResult) -> bool:
    return result.outcome is ClaimOutcome.REMOVED and result.verdict.check != VerdictCheck.PLANTED_INSTRUCTION


# --- refusing ----------------------------------------------------------------------------------------


def refusal_reason(results: Sequence[ClaimResult], policy: CleanupPolicy) -> tuple[RefusalReason, str] | None:
    """Why the whole answer must be refused, or None. Monotone: a rewrite never makes it refuse."""
    if not results:
        return RefusalReason.NO_CLAIM_SURVIVED, "the answer contained no checkable claim"
    planted = [r for r in results if r.verdict.check == VerdictCheck.PLANTED_INSTRUCTION]
    if planted:
        return (
            RefusalReason.SAFETY_CRITICAL_FAILED,
            f"the draft repeats an instruction planted in a source: {planted[0].statement.text!r}",
        )
    critical = [r for r in results if r.safety_critical and _critical_failed(r, policy)]
    if critical:
        return (
            RefusalReason.SAFETY_CRITICAL_FAILED,
            f"a safety-critical claim failed verification: {critical[0].statement.text!r}",
        )
    removed = [r for r in results if r.outcome is ClaimOutcome.REMOVED]
    if len(removed) == len(results):
        return RefusalReason.NO_CLAIM_SURVIVED, "no claim was supported by its cited source"
    if len(removed) / len(results) > policy.max_removed_share:
        return RefusalReason.TOO_MANY_REMOVED, f"{len(removed)} of {len(results)} claims failed verification"
    return None


_REMOVALS = (RefusalReason.NO_CLAIM_SURVIVED, RefusalReason.TOO_MANY_REMOVED)


def _critical_failed(result: ClaimResult, policy: CleanupPolicy) -> bool:
    if result.outcome is ClaimOutcome.REMOVED:
        return True
    return result.outcome is ClaimOutcome.REWRITTEN and not policy.allow_rewritten_safety_critical


# --- assembling --------------------------------------------------------------------------------------


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _evidence_numbers(results: Sequence[ClaimResult]) -> tuple[int, ...]:
    numbers = [r.verdict.evidence.source_number for r in results if r.verdict.evidence is not None]
    return tuple(dict.fromkeys(numbers))


def _rewrite_numbers(result: ClaimResult) -> tuple[int, ...]:
    evidence = result.rewrite_verdict.evidence if result.rewrite_verdict else None
    return (evidence.source_number,) if evidence else result.statement.source_numbers


def _claim_sentence(result: ClaimResult) -> str:
    """One surviving claim of a multi-claim sentence, as its own sentence with its markers."""
    if result.outcome is ClaimOutcome.REWRITTEN and result.final_text:
        return with_markers(_capitalised(result.final_text), _rewrite_numbers(result))
    numbers = result.statement.source_numbers or _evidence_numbers([result])
    return with_markers(_capitalised(strip_markers(result.statement.text)), numbers)


@dataclass
class _Sentence:
    span: Span
    claim_ids: list[int] = field(default_factory=list)


def _sentences(statements: Sequence[Statement], first_claim: int = 0) -> list[_Sentence]:
    by_index: dict[int, _Sentence] = {}
    claim_id = first_claim
    for statement in statements:
        sentence = by_index.setdefault(statement.sentence_index, _Sentence(statement.span))
        if statement.is_claim:
            sentence.claim_ids.append(claim_id)
            claim_id += 1
    return [by_index[i] for i in sorted(by_index)]


class Cleanup:
    """Applies the claims' outcomes to the draft and releases the patient's text in order."""

    def __init__(
        self,
        answer: str,
        statements: Sequence[Statement],
        results: Sequence[ClaimResult],
        policy: CleanupPolicy,
    ) -> None:
        self._answer = answer
        self._statements = tuple(statements)
        self._policy = policy
        self.results = list(results)
        self._sentences = _sentences(statements)
        self._pending = {i for i, r in enumerate(self.results) if rewritable(r)}
        """Claims whose rewrite is still to come: until resolved, their sentences are not released."""
        self._next = 0
        self._pieces: list[str] = []
        self._length = 0
        self._spans: dict[int, Span] = {}
        self._dropped_previous = False
        self.removals_refuse = True
        """False for a reply that calls tools: a failing claim is removed with its reason, and no claim
        (or too few) surviving does not refuse the text; a safety-critical failure still does."""

    def extend(
        self, answer: str, statements: Sequence[Statement], results: Sequence[ClaimResult]
    ) -> list[int]:
        """Add the next sentence(s) of a streamed draft: ``answer`` is the whole answer so far,
        ``statements`` the new ones (spans in ``answer``, sentence indices after the earlier ones) and
        ``results`` their judged claims. Returns the new claims that fail: they are pending until
        ``resolve``d (their rewrite), so nothing after them is released before."""
        first = len(self.results)
        self._answer = answer
        self._statements += tuple(statements)
        self.results.extend(results)
        self._sentences.extend(_sentences(statements, first))
        failing = [i for i in range(first, len(self.results)) if rewritable(self.results[i])]
        self._pending.update(failing)
        return failing

    def stop_reason(self) -> tuple[RefusalReason, str] | None:
        """A refusal no later claim can undo: a planted instruction, or a safety-critical claim that failed
        for good (its rewrite, if any, done). A streamed answer stops there (docs/safety.md)."""
        settled = [r for i, r in enumerate(self.results) if i not in self._pending]
        refusal = refusal_reason(settled, self._policy) if settled else None
        if refusal is not None and refusal[0] is RefusalReason.SAFETY_CRITICAL_FAILED:
            return refusal
        return None

    def ended(self, reason: RefusalReason, detail: str, note: str) -> Outcome:
        """The outcome of an answer that stops after some sentences were released: the released text and
        ``note``. A claim never released is removed (withheld), whatever its verdict."""
        placed = []
        for i, result in enumerate(self.results):
            span = self._spans.get(i)
            if span is not None and result.outcome is not ClaimOutcome.REMOVED:
                placed.append(replace(result, final_span=span))
            elif result.outcome is ClaimOutcome.REMOVED:
                placed.append(replace(result, final_span=None))
            else:
                withheld = f"withheld: the answer ended early ({reason.value})"
                reason_text = f"{withheld}; {result.reason}" if result.reason else withheld
                placed.append(
                    replace(
                        result,
                        outcome=ClaimOutcome.REMOVED,
                        final_text=None,
                        final_span=None,
                        reason=reason_text,
                    )
                )
        answer = f"{self.text} {note}" if self.text else note
        return Outcome(answer, self._statements, tuple(placed), False, reason, detail, ended_early=True)

    def start_rewrites(self) -> list[int]:
        """The claims to rewrite now. None when even every rewrite succeeding would still refuse: then
        they stay removed and the refusal is final."""
        best = [
            replace(r, outcome=ClaimOutcome.REWRITTEN) if i in self._pending else r
            for i, r in enumerate(self.results)
        ]
        if refusal_reason(best, self._policy) is not None:
            self._pending.clear()
        return sorted(self._pending)

    def resolve(self, index: int, result: ClaimResult) -> None:
        """Record a rewrite's outcome (a rewrite repeating another sentence of the answer is removed)."""
        self._pending.discard(index)
        if result.outcome is ClaimOutcome.REWRITTEN and self._repeats(index, result.final_text or ""):
            result = replace(
                result,
                outcome=ClaimOutcome.REMOVED,
                final_text=None,
                reason=f"the rewrite repeats another sentence of the answer; {result.reason}",
            )
        self.results[index] = result

    def _repeats(self, index: int, text: str) -> bool:
        plain = normalise(strip_markers(text))
        others = [
            r.final_text if r.outcome is ClaimOutcome.REWRITTEN else r.statement.text
            for i, r in enumerate(self.results)
            if i != index and r.outcome is not ClaimOutcome.REMOVED and i not in self._pending
        ]
        return any(
            fuzz.ratio(plain, normalise(strip_markers(o or ""))) >= DUPLICATE_SIMILARITY for o in others
        )

    def refusal(self) -> tuple[RefusalReason, str] | None:
        refusal = refusal_reason(self.results, self._policy)
        if refusal is not None and not self.removals_refuse and refusal[0] in _REMOVALS:
            return None
        return refusal

    def ready(self) -> list[str]:
        """The next sentences that are final, one piece each (with its leading space), once nothing
        pending could still make the answer refused. Pieces concatenate to the final text."""
        if self.refusal() is not None:
            return []
        pieces: list[str] = []
        while self._next < len(self._sentences) and not self._pending & set(
            self._sentences[self._next].claim_ids
        ):
            before = len(self.text)
            self._place(self._sentences[self._next])
            self._next += 1
            if len(self.text) > before:
                pieces.append(self.text[before:])
        return pieces

    @property
    def text(self) -> str:
        return " ".join(self._pieces)

    def outcome(self) -> Outcome:
        """The final outcome: a claim whose rewrite never came stays removed."""
        self._pending.clear()
        refusal = self.refusal()
        if refusal is not None:
            reason, detail = refusal
            return Outcome("", self._statements, tuple(self.results), True, reason, detail)
        self.ready()
        placed = tuple(
            replace(r, final_span=self._spans.get(i) if r.outcome is not ClaimOutcome.REMOVED else None)
            for i, r in enumerate(self.results)
        )
        return Outcome(self.text, self._statements, placed)

    def _place(self, sentence: _Sentence) -> None:
        pieces = self._compose(sentence)
        if not pieces:
            self._dropped_previous = True
            return
        if self._dropped_previous or not self._pieces:
            pieces[0] = (pieces[0][0], _capitalised(_CONNECTIVE.sub("", pieces[0][1])))
        self._dropped_previous = False
        for claim_ids, text in pieces:
            start = self._length + (1 if self._pieces else 0)
            self._pieces.append(text)
            self._length = start + len(text)
            for claim_id in claim_ids:
                self._spans[claim_id] = Span(start, self._length)

    def _compose(self, sentence: _Sentence) -> list[tuple[list[int], str]]:
        """The sentence's final text, as (claim ids, text) pieces; empty when it is dropped."""
        original = self._answer[sentence.span.start : sentence.span.end]
        results = [self.results[i] for i in sentence.claim_ids]
        if all(r.outcome is ClaimOutcome.VERIFIED for r in results):
            numbers = () if marker_numbers(original) else _evidence_numbers(results)
            return [(sentence.claim_ids, with_markers(original, numbers) if numbers else original)]
        return [
            ([i], _claim_sentence(r))
            for i, r in zip(sentence.claim_ids, results, strict=True)
            if r.outcome is not ClaimOutcome.REMOVED
        ]
