"""LLM judge: asks a chat model whether the cited passages entail a claim.

The judge is the expensive, optional last step of the cascade: it sees only the claims the local
checker left ``not_verified``. It is asked for strict JSON (``verdict``, ``quote``, ``reason``,
``conflict``) at temperature 0, through a ``ChatModel`` (``gateway.models``: in the gateway, the judge
endpoint's model behind the process's limits and metrics). Claims are judged ``batch_size`` per call
(``JudgeConfig``): one prompt numbers the statements, each with its own passages, and the answer is
``{"verdicts": [...]}`` with one verdict per statement number. Every failure of a call (timeout, HTTP
error, no free slot, malformed JSON, a statement missing or repeated, an unknown verdict) fails every
claim of that call closed: ``unsupported`` with check ``judge_error`` and ``failure`` set (status
``not_verified``); ``verify`` never raises. A "supported" or "contradicted" verdict must carry a quote
that really occurs in a cited passage (``anchoring.find_quote``), otherwise it is downgraded to
``not_verified``: a judge that cannot point at its evidence is not trusted. The judge's
``unsupported`` is a decision (status ``unsupported``); its ``contradicted`` names the conflict kind.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from gateway.domain import ClaimToCheck, Conflict, ConflictKind, Evidence, Passage, Verdict, VerdictLabel
from gateway.errors import JudgeOutputError, MalformedDraft, UpstreamBusy, UpstreamError, UpstreamTimeout
from gateway.models.chat_model import ChatModel, Messages
from gateway.verification.anchoring import find_quote
from gateway.vocabulary import VerdictCheck, VerifierFailure, VerifierMethod

SUPPORTED_SCORE = 1.0
"""Score of a judge-supported claim whose quote anchored; the judge gives no finer confidence."""
UNSUPPORTED_SCORE = 0.0

SYSTEM_PROMPT = """\
You check medical statements against numbered source passages for a patient-safety system.

Decide whether the passages, and only the passages, establish the statement:
- "supported": every part of the statement follows from the passages. Numbers, doses, units,
  frequencies, durations, negations, the people concerned (children, adults, pregnant women...) and
  qualifiers (always, may, some...) must all agree. A statement that is stronger or more specific
  than the passages is not supported.
- "contradicted": the passages state something incompatible with the statement.
- "unsupported": anything else, including partial support and missing information.

Return JSON only. "quote" is a short verbatim excerpt copied character for character from one
passage that decides the verdict (empty when unsupported). "reason" is one short sentence.
"conflict" names what a contradicted statement changes: "number" (a number, dose, unit or frequency),
"negation", "opposite", "quantifier", "entity" (a medicine or condition), "population" (the people
concerned) or "statement" (anything else); empty unless contradicted."""

BATCH_INSTRUCTIONS = """\
Several statements follow, each numbered and each with its own passages. Judge each statement only
against its own passages. Return {"verdicts": [...]} with exactly one item per statement, whose
"statement" is the statement's number."""

JUDGE_TEMPERATURE = 0.0
"""Judging is a decision, not writing: no sampling."""
VERDICT_SCHEMA_NAME = "claim_verdict"
CONFLICT_NAMES = ("", *(kind.value for kind in ConflictKind))
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": [label.value for label in VerdictLabel]},
        "quote": {"type": "string"},
        "reason": {"type": "string"},
        "conflict": {"type": "string", "enum": list(CONFLICT_NAMES)},
    },
    "required": ["verdict", "quote", "reason", "conflict"],
    "additionalProperties": False,
}
BATCH_SCHEMA_NAME = "claim_verdicts"
BATCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdicts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"statement": {"type": "integer"}, **VERDICT_SCHEMA["properties"]},
                "required": ["statement", *VERDICT_SCHEMA["required"]],
                "additionalProperties": False,
            },
        }
    },
    "required": ["verdicts"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class JudgeAnswer:
    """One statement's verdict as the judge gave it."""

    label: VerdictLabel
    quote: str
    reason: str
    conflict: ConflictKind | None = None


@dataclass(frozen=True)
class JudgeConfig:
    timeout: float
    """Seconds one claim's judge call may take, waiting for a slot included (``GATEWAY_JUDGE_TIMEOUT``)."""
    quote_threshold: float = 0.85
    """Fuzzy threshold (0..1) at which the judge's quote counts as found in a passage."""
    max_concurrency: int = 4
    """Judge calls of one verify() in flight at once."""
    batch_size: int = 1
    """Claims per judge call (``verification.judge_batch_size``); 1 asks about one claim per call."""


def _passages(claim: ClaimToCheck) -> str:
    return "\n\n".join(f"[{number}] {passage.text}" for number, passage in claim.sources)


def build_messages(claim: ClaimToCheck) -> Messages:
    user = f"Passages:\n{_passages(claim)}\n\nStatement: {claim.text}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def build_batch_messages(claims: Sequence[ClaimToCheck]) -> Messages:
    """One prompt for several claims: statement k with its own passages."""
    parts = [
        f"Statement {k}: {claim.text}\nPassages for statement {k}:\n{_passages(claim)}"
        for k, claim in enumerate(claims, start=1)
    ]
    system = f"{SYSTEM_PROMPT}\n\n{BATCH_INSTRUCTIONS}"
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def _load(content: str | None) -> dict[str, Any]:
    try:
        data = json.loads(content or "")
    except json.JSONDecodeError as err:
        raise JudgeOutputError(f"not JSON: {err.msg}") from None
    if not isinstance(data, dict):
        raise JudgeOutputError("not a JSON object")
    return data


def _answer(data: dict[str, Any]) -> JudgeAnswer:
    verdict, quote, reason = data.get("verdict"), data.get("quote", ""), data.get("reason", "")
    conflict = data.get("conflict", "") or ""
    if verdict not in {label.value for label in VerdictLabel}:
        raise JudgeOutputError(f"unknown verdict {verdict!r}")
    if not isinstance(quote, str) or not isinstance(reason, str):
        raise JudgeOutputError("quote and reason must be strings")
    if conflict not in CONFLICT_NAMES:
        raise JudgeOutputError(f"unknown conflict {conflict!r}")
    return JudgeAnswer(VerdictLabel(verdict), quote, reason, ConflictKind(conflict) if conflict else None)


def parse_output(content: str | None) -> tuple[VerdictLabel, str, str]:
    """(verdict, quote, reason) from the judge's JSON; JudgeOutputError when it is not that."""
    answer = _answer(_load(content))
    return answer.label, answer.quote, answer.reason


def parse_batch(content: str | None, count: int) -> list[JudgeAnswer]:
    """One answer per statement 1..``count`` from ``{"verdicts": [...]}``; JudgeOutputError when a
    statement is missing, repeated or unknown, or an item is out of contract."""
    items = _load(content).get("verdicts")
    if not isinstance(items, list):
        raise JudgeOutputError("'verdicts' must be a list")
    answers: dict[int, JudgeAnswer] = {}
    for item in items:
        if not isinstance(item, dict):
            raise JudgeOutputError("each verdict must be a JSON object")
        number = item.get("statement")
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= count:
            raise JudgeOutputError(f"unknown statement number {number!r}")
        if number in answers:
            raise JudgeOutputError(f"statement {number} judged twice")
        answers[number] = _answer(item)
    missing = [k for k in range(1, count + 1) if k not in answers]
    if missing:
        raise JudgeOutputError(f"no verdict for statement {missing[0]}")
    return [answers[k] for k in range(1, count + 1)]


class LLMJudgeVerifier:
    """Verifier protocol over a chat model; fails closed per claim."""

    name = VerifierMethod.JUDGE

    def __init__(self, model: ChatModel, config: JudgeConfig) -> None:
        self._model = model
        self._config = config
        self._calls = 0

    @property
    def calls(self) -> int:
        """Judge calls made so far (one per batch of claims)."""
        return self._calls

    async def verify(self, claims: Sequence[ClaimToCheck]) -> list[Verdict]:
        """One verdict per claim, in order; claims with sources are judged ``batch_size`` per call."""
        results: list[Verdict | None] = [None] * len(claims)
        pending: list[int] = []
        for index, claim in enumerate(claims):
            if claim.sources:
                pending.append(index)
            else:
                results[index] = Verdict(
                    VerdictLabel.UNSUPPORTED,
                    UNSUPPORTED_SCORE,
                    self.name,
                    VerdictCheck.NO_SOURCE,
                    "the claim cites no source",
                    decided=True,
                )
        size = self._config.batch_size
        batches = [pending[start : start + size] for start in range(0, len(pending), size)]
        limiter = anyio.CapacityLimiter(self._config.max_concurrency)

        async def one(batch: list[int]) -> None:
            async with limiter:
                verdicts = await self.judge_batch([claims[i] for i in batch])
            for index, verdict in zip(batch, verdicts, strict=True):
                results[index] = verdict

        async with anyio.create_task_group() as group:
            for batch in batches:
                group.start_soon(one, batch)
        return [r for r in results if r is not None]

    async def judge(self, claim: ClaimToCheck) -> Verdict:
        """One claim in one call."""
        [verdict] = await self.judge_batch([claim])
        return verdict

    async def judge_batch(self, claims: Sequence[ClaimToCheck]) -> list[Verdict]:
        """One judge call for ``claims`` (each with sources); a failed call fails each of them closed."""
        single = len(claims) == 1
        messages = build_messages(claims[0]) if single else build_batch_messages(claims)
        schema, schema_name = (
            (VERDICT_SCHEMA, VERDICT_SCHEMA_NAME) if single else (BATCH_SCHEMA, BATCH_SCHEMA_NAME)
        )
        self._calls += 1
        try:
            with anyio.fail_after(self._config.timeout):
                content = await self._model.complete(
                    messages, temperature=JUDGE_TEMPERATURE, schema=schema, schema_name=schema_name
                )
            answers = [_answer(_load(content))] if single else parse_batch(content, len(claims))
        except TimeoutError:
            return _all_failed(
                claims, f"the judge did not answer within {self._config.timeout:g}s", VerifierFailure.TIMEOUT
            )
        except UpstreamTimeout as err:  # the endpoint's read timeout, or the call's / request's deadline
            return _all_failed(claims, f"the judge did not answer in time: {err}", VerifierFailure.TIMEOUT)
        except UpstreamBusy as err:  # no free slot
            return _all_failed(claims, f"the judge call was not completed: {err}", VerifierFailure.ERROR)
        except MalformedDraft as err:  # an answer, but not a chat completion
            return _all_failed(claims, f"malformed judge output: {err}", VerifierFailure.INVALID_OUTPUT)
        except UpstreamError as err:
            return _all_failed(claims, f"judge API error: {type(err).__name__}: {err}", VerifierFailure.ERROR)
        except JudgeOutputError as err:
            return _all_failed(claims, f"malformed judge output: {err}", VerifierFailure.INVALID_OUTPUT)
        return [self._anchored(c, a) for c, a in zip(claims, answers, strict=True)]

    def _anchored(self, claim: ClaimToCheck, answer: JudgeAnswer) -> Verdict:
        """Attach the quote's location; a verdict whose quote is not in any cited passage is downgraded."""
        label, quote, reason = answer.label, answer.quote, answer.reason
        evidence = _locate(quote, claim.sources, self._config.quote_threshold) if quote.strip() else None
        if label is VerdictLabel.UNSUPPORTED:
            return Verdict(
                label, UNSUPPORTED_SCORE, self.name, VerdictCheck.JUDGE, reason, evidence, decided=True
            )
        if evidence is None:
            return Verdict(
                VerdictLabel.UNSUPPORTED,
                UNSUPPORTED_SCORE,
                self.name,
                VerdictCheck.JUDGE_QUOTE_NOT_FOUND,
                f"the judge said {label.value} but its quote is not in the cited source: {reason}",
            )
        if label is VerdictLabel.SUPPORTED:
            return Verdict(label, SUPPORTED_SCORE, self.name, VerdictCheck.JUDGE, reason, evidence)
        conflict = Conflict(answer.conflict or ConflictKind.STATEMENT, reason, source=evidence.text)
        return Verdict(
            label, UNSUPPORTED_SCORE, self.name, VerdictCheck.JUDGE, reason, evidence, conflict=conflict
        )


def _locate(quote: str, sources: Sequence[tuple[int, Passage]], threshold: float) -> Evidence | None:
    for number, passage in sources:
        anchor = find_quote(quote, passage.text, threshold)
        if anchor is not None:
            span = anchor.span
            return Evidence(number, passage.id, passage.text[span.start : span.end], span)
    return None


def _all_failed(claims: Sequence[ClaimToCheck], reason: str, failure: VerifierFailure) -> list[Verdict]:
    return [_failed(reason, failure) for _ in claims]


def _failed(reason: str, failure: VerifierFailure = VerifierFailure.ERROR) -> Verdict:
    """A closed failure: unsupported, check ``judge_error``, ``failure`` set (counted in metrics)."""
    return Verdict(
        VerdictLabel.UNSUPPORTED,
        UNSUPPORTED_SCORE,
        LLMJudgeVerifier.name,
        VerdictCheck.JUDGE_ERROR,
        f"judge failed, claim not verified: {reason}",
        failure=failure,
    )
