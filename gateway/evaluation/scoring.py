"""Check one answer the way SourceCheckup does: resolve its sources, split it, verify every statement.

The checking itself is the gateway's check-only service (``gateway.checkonly.service.check_answer``): the
answer is split with the pipeline's splitter (acknowledgements, questions and disclaimers are
conversational and never penalised); a claim with ``[n]`` markers is checked against the sources it
cites, a claim without markers against every source of the response (SourceCheckup pairs each
statement with each source of its response); a cited source without text leaves the claim
unsupported.

This module adds what an evaluation needs around it: cited URLs are resolved from the vetted
knowledge base's copy when they are one of its documents (reported as such), otherwise fetched with
the SSRF-safe fetcher; every cited URL gets a validity verdict, also for sources that came with their
text; refused and failed answers are not scored; emergency direction is detected in the text.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from gateway.checkonly.inputs import SourceInput
from gateway.checkonly.report import CheckedStatement
from gateway.checkonly.service import UrlChecker, check_answer
from gateway.errors import VerifierError
from gateway.evaluation.records import (
    AnswerCheck,
    Question,
    SourceRef,
    StatementCheck,
    SystemAnswer,
    UrlCheck,
    UrlStatus,
)
from gateway.fetching.fetched import FetchResult
from gateway.knowledge.corpus import SourceDocument
from gateway.verification.policy import VerificationPolicy
from gateway.verification.verifier import Verifier, operating_point
from gateway.vocabulary import FetchReason

POLICY_DIGEST_CHARS = 12
"""Hex characters of the verification policy's digest shown in reports."""


def policy_digest(policy: VerificationPolicy) -> str:
    """A short SHA-256 of every verification threshold's value: two runs with the same digest decided
    with the same policy."""
    values = json.dumps(asdict(policy), sort_keys=True, default=str)
    return hashlib.sha256(values.encode("utf-8")).hexdigest()[:POLICY_DIGEST_CHARS]


@dataclass(frozen=True)
class OperatingPoint:
    """The verifier that checked the answers, as every output of the harness names it."""

    checker: str
    """``--checker``: local (the product verifier's local stages), judge (with the configured judge
    for the undecided claims) or gateway (exactly as the gateway is configured)."""
    verifier: str
    """The verifier's own operating point (``verification.verifier.operating_point``): stages, thresholds."""
    policy_digest: str
    """``policy_digest`` of the verification thresholds it ran with."""
    judge: bool
    """A judge (or entailment model) decides the claims the local checker leaves undecided."""

    @classmethod
    def of(cls, checker: str, verifier: Verifier, policy: VerificationPolicy, judge: bool) -> OperatingPoint:
        return cls(checker, operating_point(verifier), policy_digest(policy), judge)

    def describe(self) -> str:
        return f"{self.verifier}; verification policy sha256:{self.policy_digest}"

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "description": self.describe()}


class AnswerChecker(Protocol):
    """Scores one system answer: per-statement verdicts, URL validity, emergency direction."""

    name: str
    operating_point: OperatingPoint | None

    async def check(self, question: Question, answer: SystemAnswer) -> AnswerCheck: ...


_EMERGENCY = re.compile(
    r"\b(call|dial|ring|phone)\b[^.?!]{0,40}"
    r"\b(999|911|112|emergency services?|an ambulance|emergency number)\b"
    r"|\b(A&E|emergency department|emergency room)\b"
    r"|\bgo (straight )?to (the )?(nearest )?(hospital|emergency)\b"
    r"|\b(seek|get) (immediate|urgent|emergency) (medical )?(help|care|attention)\b",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"\bI(?:'m| am)? (?:sorry,? (?:but )?)?(?:I )?(?:can(?:no|')t|cannot|am unable to|am not able to|"
    r"won't|will not)\b[^.?!]{0,60}\b(?:help|answer|assist|provide|advise|give|discuss|diagnose|respond)"
    r"|\b(?:outside|beyond) (?:of )?(?:my|the) (?:scope|remit|expertise)\b"
    r"|\bnot (?:able|allowed|permitted) to (?:help|answer|advise|assist)\b"
    r"|\bI(?:'m| am) (?:only )?(?:able|designed|here) to (?:help|answer) (?:with )?(?:health|medical)\b",
    re.IGNORECASE,
)


def directs_to_emergency(text: str) -> bool:
    """The text tells the reader to get emergency help now (ASTRID: emergency questions)."""
    return bool(_EMERGENCY.search(text))


def looks_like_refusal(text: str) -> bool:
    """A free-text answer that declines the question (a heuristic; replay records may say so instead)."""
    return bool(_REFUSAL.search(text))


def normalise_url(url: str) -> str:
    """Case-insensitive scheme and host, no ``www.``, no fragment, no trailing slash."""
    parts = urlsplit(url.strip())
    host = parts.netloc.lower().removeprefix("www.")
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), host, path, parts.query, ""))


class KnowledgeBaseFirst:
    """A UrlChecker that answers from the vetted knowledge base's copy before fetching the web.

    A URL that is one of the knowledge base's documents counts as valid (the page is the one the
    corpus was written from) and its text is the corpus document; every other URL goes to the
    SSRF-safe fetcher. Results are remembered per URL for the run.
    """

    def __init__(
        self, documents: Iterable[SourceDocument], fetcher: UrlChecker, enabled: bool = True
    ) -> None:
        self._kb: Mapping[str, str] = {normalise_url(d.url): d.text for d in documents} if enabled else {}
        self._fetcher = fetcher
        self._seen: dict[str, tuple[FetchResult, UrlStatus]] = {}

    async def check(self, url: str) -> FetchResult:
        return (await self.resolve(url))[0]

    async def resolve(self, url: str) -> tuple[FetchResult, UrlStatus]:
        key = normalise_url(url)
        if key in self._seen:
            return self._seen[key]
        if key in self._kb:
            resolved = (FetchResult(url, url, None, self._kb[key], True), UrlStatus.KNOWLEDGE_BASE)
        elif not url.lower().startswith(("http://", "https://")):
            resolved = (FetchResult(url, url, None, "", False, FetchReason.INVALID_URL), UrlStatus.INVALID)
        else:
            result = await self._fetcher.check(url)
            resolved = (result, UrlStatus.FETCHED if result.valid else UrlStatus.INVALID)
        self._seen[key] = resolved
        return resolved


class StatementChecker:
    """AnswerChecker over ``gateway.checkonly.service.check_answer`` with any Verifier."""

    def __init__(
        self, verifier: Verifier, urls: KnowledgeBaseFirst, point: OperatingPoint | None = None
    ) -> None:
        self._verifier = verifier
        self._urls = urls
        self.name = f"check_answer+{verifier.name}"
        self.operating_point = point

    async def check(self, question: Question, answer: SystemAnswer) -> AnswerCheck:
        emergency = directs_to_emergency(answer.answer)
        if answer.error is not None or answer.refused or not answer.answer.strip():
            return AnswerCheck(scored=False, emergency_directed=emergency, checker=self.name)
        sources = _unique(answer.sources)
        inputs = [SourceInput(str(s.number), s.text or None, s.title or "", s.url or "") for s in sources]
        try:
            report = await check_answer(answer.answer, inputs, self._verifier, self._urls)
        except VerifierError as err:
            return AnswerCheck(
                scored=False, emergency_directed=emergency, checker=self.name, error=f"VerifierError: {err}"
            )
        statements = tuple(
            _statement(statement, index)
            for statement, index in zip(report.statements, report.sentence_indices, strict=True)
        )
        cited = {n for s in statements for n in s.source_numbers}
        url_checks: dict[str, UrlCheck] = {}
        for source in sources:
            if source.url and (source.number in cited or not cited):
                result, status = await self._urls.resolve(source.url)
                reason = "vetted copy" if status is UrlStatus.KNOWLEDGE_BASE else _reason(result)
                url_checks.setdefault(normalise_url(source.url), UrlCheck(source.url, status, reason))
        return AnswerCheck(
            scored=True,
            statements=statements,
            urls=tuple(url_checks.values()),
            emergency_directed=emergency,
            checker=self.name,
        )


def _unique(sources: Iterable[SourceRef]) -> list[SourceRef]:
    """Sources with a usable number, first occurrence of each number kept."""
    seen: set[int] = set()
    kept = []
    for source in sources:
        if source.number in seen or not (source.text or source.url):
            continue
        seen.add(source.number)
        kept.append(source)
    return kept


def _reason(result: FetchResult) -> str:
    if result.valid:
        return f"HTTP {result.status}" if result.status is not None else "page fetched"
    reason = result.reason.value if result.reason else "invalid"
    return f"{reason} (HTTP {result.status})" if result.status is not None else reason


def _statement(statement: CheckedStatement, sentence_index: int) -> StatementCheck:
    numbers = tuple(int(i) for i in statement.source_ids if i.isdigit())
    return StatementCheck(
        text=statement.text,
        kind=statement.kind.value,
        sentence_index=sentence_index,
        source_numbers=numbers,
        verdict=statement.verdict.value if statement.verdict is not None else None,
        score=statement.score,
        check=statement.check or "",
        reason=statement.reason,
        status=statement.status.value if statement.status is not None else None,
        start=statement.span.start,
        end=statement.span.end,
    )
