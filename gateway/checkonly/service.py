"""The check-only service: ``check_answer`` splits an answer, fetches URL-only sources, verifies every
claim and returns a ``CheckReport``; ``count_report`` counts it in the gateway's metrics.

Nothing here knows about HTTP (see the package docstring).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

from gateway.checkonly.inputs import SourceInput
from gateway.checkonly.report import CheckedEvidence, CheckedStatement, CheckReport, UrlValidity
from gateway.claims.split import IdMarkers, split
from gateway.domain import (
    ClaimToCheck,
    Draft,
    DraftFormat,
    Passage,
    Statement,
    Verdict,
    VerdictLabel,
)
from gateway.errors import VerifierError
from gateway.fetching.fetched import FetchResult
from gateway.metric_labels import MODEL_FAILURES, MODEL_STAGES, bounded
from gateway.metrics import GatewayMetrics
from gateway.text import passage_from_text
from gateway.verification.verifier import Verifier, operating_point
from gateway.vocabulary import VerdictCheck, VerifierMethod


class UrlChecker(Protocol):
    """What checking needs from a fetcher (``SafeFetcher`` implements it)."""

    async def check(self, url: str) -> FetchResult: ...


async def check_answer(
    answer: str, sources: Sequence[SourceInput], verifier: Verifier, fetcher: UrlChecker
) -> CheckReport:
    """Split, fetch, verify and score one answer. Raises VerifierError when the verifier cannot decide."""
    ids = [s.id for s in sources]
    texts, urls = await _resolve(sources, fetcher)
    passages = {
        number: _passage(source, texts[source.id])
        for number, source in enumerate(sources, start=1)
        if texts.get(source.id)
    }
    draft = Draft(answer, (), DraftFormat.INLINE, answer)
    statements = split(draft, IdMarkers(ids))
    checks: list[ClaimToCheck] = []
    pending: list[int] = []
    verdicts: dict[int, Verdict] = {}
    for position, statement in enumerate(statements):
        if not statement.is_claim:
            continue
        cited = _cited(statement, passages)
        if cited:
            checks.append(ClaimToCheck(text=statement.text, quote=None, sources=cited, quote_bound=False))
            pending.append(position)
        else:
            verdicts[position] = _unavailable(statement, ids, urls)
    if checks:
        decided = await verifier.verify(checks)
        if len(decided) != len(checks):
            raise VerifierError(f"{verifier.name} returned {len(decided)} verdicts for {len(checks)} claims")
        verdicts.update(zip(pending, decided, strict=True))
    checked = tuple(
        _checked(statement, verdicts.get(position), ids) for position, statement in enumerate(statements)
    )
    return CheckReport(checked, urls, tuple(s.sentence_index for s in statements), operating_point(verifier))


async def _resolve(
    sources: Sequence[SourceInput], fetcher: UrlChecker
) -> tuple[dict[str, str], tuple[UrlValidity, ...]]:
    """Text per source id (given, or fetched), and the validity of every fetched URL."""
    texts = {s.id: s.text for s in sources if s.text}
    wanted: dict[str, list[str]] = {}
    for source in sources:
        if not source.text and source.url:
            wanted.setdefault(source.url, []).append(source.id)
    results = await asyncio.gather(*(fetcher.check(url) for url in wanted))
    validity = []
    for (url, source_ids), result in zip(wanted.items(), results, strict=True):
        if result.valid:
            texts.update(dict.fromkeys(source_ids, result.text))
        reason = result.reason.value if result.reason else None
        validity.append(
            UrlValidity(url, tuple(source_ids), result.valid, result.status, reason, result.final_url)
        )
    return texts, tuple(validity)


def _passage(source: SourceInput, text: str) -> Passage:
    return passage_from_text(
        text, f"source:{source.id}", document_id=source.id, title=source.title, url=source.url
    )


def _cited(statement: Statement, passages: dict[int, Passage]) -> tuple[tuple[int, Passage], ...]:
    if not statement.source_numbers:
        return tuple(sorted(passages.items()))
    return tuple((n, passages[n]) for n in statement.source_numbers if n in passages)


def _unavailable(statement: Statement, ids: Sequence[str], urls: Sequence[UrlValidity]) -> Verdict:
    """No source to check against is a decided ``unsupported``; a cited source that could not be
    fetched leaves the claim ``not_verified`` (it might support the claim)."""
    if not statement.source_numbers:
        return Verdict(
            VerdictLabel.UNSUPPORTED,
            0.0,
            VerifierMethod.SOURCE_UNAVAILABLE,
            VerdictCheck.NO_SOURCE,
            "no source has text",
            decided=True,
        )
    if all(n == IdMarkers.UNKNOWN for n in statement.source_numbers):
        return Verdict(
            VerdictLabel.UNSUPPORTED,
            0.0,
            VerifierMethod.SOURCE_UNAVAILABLE,
            VerdictCheck.UNKNOWN_SOURCE,
            "the marker names no source",
            decided=True,
        )
    cited = {ids[n - 1] for n in statement.source_numbers if n != IdMarkers.UNKNOWN}
    reasons = sorted({u.reason or "invalid" for u in urls if cited & set(u.source_ids)})
    detail = f"the cited source could not be fetched ({', '.join(reasons)})" if reasons else "no cited text"
    return Verdict(
        VerdictLabel.UNSUPPORTED,
        0.0,
        VerifierMethod.SOURCE_UNAVAILABLE,
        VerdictCheck.SOURCE_NOT_FETCHED,
        detail,
    )


def _checked(statement: Statement, verdict: Verdict | None, ids: Sequence[str]) -> CheckedStatement:
    source_ids = tuple(ids[n - 1] for n in statement.source_numbers if 1 <= n <= len(ids))
    if verdict is None:
        return CheckedStatement(statement.text, statement.span, statement.kind, source_ids)
    evidence = None
    if verdict.evidence is not None and 1 <= verdict.evidence.source_number <= len(ids):
        e = verdict.evidence
        evidence = CheckedEvidence(ids[e.source_number - 1], e.text, e.span)
    return CheckedStatement(
        statement.text,
        statement.span,
        statement.kind,
        source_ids,
        verdict.label,
        round(verdict.score, 4),
        verdict.method,
        verdict.check,
        verdict.reason,
        evidence,
        verdict.failure,
        verdict.status,
        verdict.conflict,
    )


def count_report(report: CheckReport, metrics: GatewayMetrics) -> None:
    """``gateway_cited_urls_total{valid}``: one count per fetched URL, with its reason in
    ``gateway_cited_url_failures_total{reason}`` when it was not valid; and
    ``gateway_verifier_failures_total``: one count per claim a judge or entailment model failed on."""
    for url in report.urls:
        metrics.record_cited_url(url.valid, url.reason or "")
    for statement in report.claims:
        if statement.failure is not None:
            metrics.verifier_failures.labels(
                stage=bounded(statement.method or "", MODEL_STAGES),
                kind=bounded(statement.failure, MODEL_FAILURES),
            ).inc()
