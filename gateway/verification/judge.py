"""LLM judge: asks a chat model whether the cited passages entail a claim.

The judge is the expensive, optional last step of the cascade. It is asked for strict JSON
(``verdict``, ``quote``, ``reason``) at temperature 0, through a ``ChatModel`` (``gateway.models``: in
the gateway, the judge endpoint's model behind the process's limits and metrics). Every failure for
one claim (timeout, HTTP error, no free slot, malformed JSON, unknown verdict) fails closed: the claim
is ``unsupported`` with check ``judge_error``; ``verify`` never raises for a single claim. A
"supported" verdict must carry a quote that really occurs in a cited passage
(``anchoring.find_quote``), otherwise it is downgraded: a judge that cannot point at its evidence is
not trusted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from gateway.domain import ClaimToCheck, Evidence, Passage, Verdict, VerdictLabel
from gateway.errors import JudgeOutputError, MalformedDraft, UpstreamBusy, UpstreamError, UpstreamTimeout
from gateway.models.base import ChatModel, Messages
from gateway.verification.anchoring import find_quote

JUDGE_ERROR = "judge_error"
TIMEOUT = "timeout"
ERROR = "error"
INVALID_OUTPUT = "invalid_output"
FAILURE_KINDS = (TIMEOUT, ERROR, INVALID_OUTPUT)
"""``Verdict.failure`` values of a model stage (judge, entailment model) that failed on a claim."""
JUDGE_CHECK = "judge"
QUOTE_NOT_FOUND = "judge_quote_not_found"
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
passage that decides the verdict (empty when unsupported). "reason" is one short sentence."""

JUDGE_TEMPERATURE = 0.0
"""Judging is a decision, not writing: no sampling."""
VERDICT_SCHEMA_NAME = "claim_verdict"
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": [label.value for label in VerdictLabel]},
        "quote": {"type": "string"},
        "reason": {"type": "string"},
    },
    "required": ["verdict", "quote", "reason"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class JudgeConfig:
    timeout: float
    """Seconds one claim's judge call may take, waiting for a slot included (``GATEWAY_JUDGE_TIMEOUT``)."""
    quote_threshold: float = 0.85
    """Fuzzy threshold (0..1) at which the judge's quote counts as found in a passage."""
    max_concurrency: int = 4
    """Judge calls of one verify() in flight at once."""


def build_messages(claim: ClaimToCheck) -> Messages:
    passages = "\n\n".join(f"[{number}] {passage.text}" for number, passage in claim.sources)
    user = f"Passages:\n{passages}\n\nStatement: {claim.text}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def parse_output(content: str | None) -> tuple[VerdictLabel, str, str]:
    """(verdict, quote, reason) from the judge's JSON; JudgeOutputError when it is not that."""
    try:
        data = json.loads(content or "")
    except json.JSONDecodeError as err:
        raise JudgeOutputError(f"not JSON: {err.msg}") from None
    if not isinstance(data, dict):
        raise JudgeOutputError("not a JSON object")
    verdict, quote, reason = data.get("verdict"), data.get("quote", ""), data.get("reason", "")
    if verdict not in {label.value for label in VerdictLabel}:
        raise JudgeOutputError(f"unknown verdict {verdict!r}")
    if not isinstance(quote, str) or not isinstance(reason, str):
        raise JudgeOutputError("quote and reason must be strings")
    return VerdictLabel(verdict), quote, reason


class LLMJudgeVerifier:
    """Verifier protocol over a chat model; fails closed per claim."""

    name = "judge"

    def __init__(self, model: ChatModel, config: JudgeConfig) -> None:
        self._model = model
        self._config = config

    async def verify(self, claims: Sequence[ClaimToCheck]) -> list[Verdict]:
        results: list[Verdict | None] = [None] * len(claims)
        limiter = anyio.CapacityLimiter(self._config.max_concurrency)

        async def one(index: int, claim: ClaimToCheck) -> None:
            async with limiter:
                results[index] = await self.judge(claim)

        async with anyio.create_task_group() as group:
            for index, claim in enumerate(claims):
                group.start_soon(one, index, claim)
        return [r for r in results if r is not None]

    async def judge(self, claim: ClaimToCheck) -> Verdict:
        if not claim.sources:
            return Verdict(
                VerdictLabel.UNSUPPORTED,
                UNSUPPORTED_SCORE,
                self.name,
                "no_source",
                "the claim cites no source",
            )
        try:
            with anyio.fail_after(self._config.timeout):
                content = await self._model.complete(
                    build_messages(claim),
                    temperature=JUDGE_TEMPERATURE,
                    schema=VERDICT_SCHEMA,
                    schema_name=VERDICT_SCHEMA_NAME,
                )
            label, quote, reason = parse_output(content)
        except TimeoutError:
            return _failed(f"the judge did not answer within {self._config.timeout:g}s", TIMEOUT)
        except UpstreamTimeout as err:  # the endpoint's read timeout, or the call's / request's deadline
            return _failed(f"the judge did not answer in time: {err}", TIMEOUT)
        except UpstreamBusy as err:  # no free slot
            return _failed(f"the judge call was not completed: {err}", ERROR)
        except MalformedDraft as err:  # an answer, but not a chat completion
            return _failed(f"malformed judge output: {err}", INVALID_OUTPUT)
        except UpstreamError as err:
            return _failed(f"judge API error: {type(err).__name__}: {err}", ERROR)
        except JudgeOutputError as err:
            return _failed(f"malformed judge output: {err}", INVALID_OUTPUT)
        return self._anchored(claim, label, quote, reason)

    def _anchored(self, claim: ClaimToCheck, label: VerdictLabel, quote: str, reason: str) -> Verdict:
        """Attach the quote's location; a verdict whose quote is not in any cited passage is downgraded."""
        evidence = _locate(quote, claim.sources, self._config.quote_threshold) if quote.strip() else None
        if label is VerdictLabel.UNSUPPORTED:
            return Verdict(label, UNSUPPORTED_SCORE, self.name, JUDGE_CHECK, reason, evidence)
        if evidence is None:
            return Verdict(
                VerdictLabel.UNSUPPORTED,
                UNSUPPORTED_SCORE,
                self.name,
                QUOTE_NOT_FOUND,
                f"the judge said {label.value} but its quote is not in the cited source: {reason}",
            )
        score = SUPPORTED_SCORE if label is VerdictLabel.SUPPORTED else UNSUPPORTED_SCORE
        return Verdict(label, score, self.name, JUDGE_CHECK, reason, evidence)


def _locate(quote: str, sources: Sequence[tuple[int, Passage]], threshold: float) -> Evidence | None:
    for number, passage in sources:
        anchor = find_quote(quote, passage.text, threshold)
        if anchor is not None:
            span = anchor.span
            return Evidence(number, passage.id, passage.text[span.start : span.end], span)
    return None


def _failed(reason: str, failure: str = ERROR) -> Verdict:
    """A closed failure: unsupported, check ``judge_error``, ``failure`` set (counted in metrics)."""
    return Verdict(
        VerdictLabel.UNSUPPORTED,
        UNSUPPORTED_SCORE,
        LLMJudgeVerifier.name,
        JUDGE_ERROR,
        f"judge failed, claim not verified: {reason}",
        failure=failure,
    )
