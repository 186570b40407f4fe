"""Check an answer someone else produced against the sources it cites: the check-only service.

``check_answer(answer, sources, verifier, fetcher)`` splits the answer into statements (the
pipeline's own splitter, with ``[id]`` markers naming sources by id), fetches sources that come as a
URL only (SSRF-safe, see ``gateway.fetching``), verifies every claim through any ``Verifier`` and
reports SourceCheckup's and ASTRID's metrics:

- ``statement_support``: share of claims supported (None without claims);
- ``response_supported``: the answer has claims and every one is supported;
- URL validity: per fetched URL, HTTP 200 with non-empty text, and the share of valid URLs;
- ``conversational_faithfulness``: share of informative sentences (sentences with at least one claim)
  whose every claim is supported.

A claim cites the sources whose ids its markers name; a claim without markers is checked against
every source that has text. A claim whose cited sources have no text (the URL could not be fetched,
or the marker names no source) is unsupported without asking the verifier.

Nothing here knows about HTTP: ``/v1/verify`` (``gateway.web.verify_api``) and the ``verify`` CLI
both parse their input with ``parse_check_input`` and render with ``report_json``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gateway.domain import (
    ClaimToCheck,
    Draft,
    DraftFormat,
    Passage,
    Span,
    Statement,
    StatementKind,
    Verdict,
    VerdictLabel,
)
from gateway.errors import RequestError, VerifierError
from gateway.fetching.result import FetchResult
from gateway.metrics import MODEL_FAILURES, MODEL_STAGES, GatewayMetrics, bounded
from gateway.pipeline.split import IdMarkers, split
from gateway.text import passage_from_text
from gateway.verification.base import Verifier

SOURCE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$")
"""Source ids: what a marker ``[id]`` may name (no spaces, commas or brackets)."""

METHOD_UNAVAILABLE = "source_unavailable"
"""``method`` of a verdict given without the verifier because no cited source has text."""


class UrlChecker(Protocol):
    """What checking needs from a fetcher (``SafeFetcher`` implements it)."""

    async def check(self, url: str) -> FetchResult: ...


@dataclass(frozen=True)
class SourceInput:
    """A source as the caller gives it: text, or a URL to fetch, or both (then the text is used)."""

    id: str
    text: str | None = None
    title: str = ""
    url: str = ""


@dataclass(frozen=True)
class CheckInput:
    answer: str
    sources: tuple[SourceInput, ...]
    id: str | None = None
    """The caller's row id (CLI), echoed in the output."""


@dataclass(frozen=True)
class CheckedEvidence:
    source_id: str
    text: str
    span: Span
    """Offsets in the source's text (the fetched text for URL sources)."""


@dataclass(frozen=True)
class CheckedStatement:
    """One statement of the answer; ``verdict`` etc. are None for conversational statements."""

    text: str
    span: Span
    kind: StatementKind
    source_ids: tuple[str, ...]
    verdict: VerdictLabel | None = None
    score: float | None = None
    method: str | None = None
    check: str | None = None
    reason: str = ""
    evidence: CheckedEvidence | None = None
    failure: str | None = None
    """Set when a judge or entailment model failed on this claim (it then failed closed)."""


@dataclass(frozen=True)
class UrlValidity:
    url: str
    source_ids: tuple[str, ...]
    valid: bool
    status: int | None
    reason: str | None
    final_url: str


@dataclass(frozen=True)
class CheckReport:
    statements: tuple[CheckedStatement, ...]
    """Every statement of the answer in order, conversational ones included."""
    urls: tuple[UrlValidity, ...]
    """Every URL that was fetched (sources given as URL without text), once each."""
    sentence_indices: tuple[int, ...]
    """Per statement, the index of the answer sentence it belongs to."""

    @property
    def claims(self) -> tuple[CheckedStatement, ...]:
        return tuple(s for s in self.statements if s.kind is StatementKind.CLAIM)

    @property
    def statement_support(self) -> float | None:
        claims = self.claims
        if not claims:
            return None
        return round(sum(c.verdict is VerdictLabel.SUPPORTED for c in claims) / len(claims), 4)

    @property
    def response_supported(self) -> bool:
        claims = self.claims
        return bool(claims) and all(c.verdict is VerdictLabel.SUPPORTED for c in claims)

    @property
    def url_validity_share(self) -> float | None:
        if not self.urls:
            return None
        return round(sum(u.valid for u in self.urls) / len(self.urls), 4)

    @property
    def conversational_faithfulness(self) -> float | None:
        """Share of informative sentences whose every claim is supported (None without any)."""
        grounded: dict[int, bool] = {}
        for index, statement in zip(self.sentence_indices, self.statements, strict=True):
            if statement.kind is StatementKind.CLAIM:
                supported = statement.verdict is VerdictLabel.SUPPORTED
                grounded[index] = grounded.get(index, True) and supported
        if not grounded:
            return None
        return round(sum(grounded.values()) / len(grounded), 4)


# --- input ------------------------------------------------------------------------------------


def parse_check_input(data: Any, *, max_sources: int) -> CheckInput:
    """Validate ``{"answer": str, "sources": [{"id", "text"?, "title"?, "url"?}], "id"?}``.

    Raises RequestError naming the offending field (``sources[2].url``).
    """
    if not isinstance(data, dict):
        raise RequestError("The body must be a JSON object.", code="invalid_json")
    answer = data.get("answer")
    if answer is None:
        raise RequestError("'answer' is required.", param="answer", code="missing_required_parameter")
    if not isinstance(answer, str):
        raise RequestError("'answer' must be a string.", param="answer", code="invalid_type")
    if not answer.strip():
        raise RequestError("'answer' must not be empty.", param="answer", code="invalid_value")
    row_id = data.get("id")
    if row_id is not None and (isinstance(row_id, bool) or not isinstance(row_id, str | int)):
        raise RequestError("'id' must be a string or an integer.", param="id", code="invalid_type")
    raw_sources = data.get("sources")
    if raw_sources is None:
        raise RequestError("'sources' is required.", param="sources", code="missing_required_parameter")
    if not isinstance(raw_sources, list):
        raise RequestError("'sources' must be an array.", param="sources", code="invalid_type")
    if not raw_sources:
        raise RequestError("'sources' must contain at least one source.", param="sources", code="empty_array")
    if len(raw_sources) > max_sources:
        raise RequestError(
            f"'sources' may contain at most {max_sources} sources.", param="sources", code="too_many_sources"
        )
    sources: list[SourceInput] = []
    seen: set[str] = set()
    for index, item in enumerate(raw_sources):
        source = _source(item, f"sources[{index}]")
        if source.id in seen:
            raise RequestError(
                f"'sources[{index}].id' repeats the id {source.id!r}.",
                param=f"sources[{index}].id",
                code="duplicate_id",
            )
        seen.add(source.id)
        sources.append(source)
    return CheckInput(answer, tuple(sources), None if row_id is None else str(row_id))


def _source(item: Any, param: str) -> SourceInput:
    if not isinstance(item, dict):
        raise RequestError(f"'{param}' must be an object.", param=param, code="invalid_type")
    raw_id = item.get("id")
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        raw_id = str(raw_id)
    if raw_id is None:
        raise RequestError(
            f"'{param}.id' is required.", param=f"{param}.id", code="missing_required_parameter"
        )
    if not isinstance(raw_id, str) or not SOURCE_ID.match(raw_id):
        raise RequestError(
            f"'{param}.id' must be 1-64 letters, digits or . _ : / - (starting with a letter or digit).",
            param=f"{param}.id",
            code="invalid_value",
        )
    fields: dict[str, str | None] = {}
    for name in ("text", "title", "url"):
        value = item.get(name)
        if value is not None and not isinstance(value, str):
            raise RequestError(
                f"'{param}.{name}' must be a string.", param=f"{param}.{name}", code="invalid_type"
            )
        fields[name] = value
    text, url = fields["text"], (fields["url"] or "").strip()
    if text is not None and not text.strip():
        text = None
    if text is None and not url:
        raise RequestError(
            f"'{param}' needs 'text' or 'url'.", param=f"{param}.text", code="missing_required_parameter"
        )
    if url and not url.lower().startswith(("http://", "https://")):
        raise RequestError(
            f"'{param}.url' must be an http(s) URL.", param=f"{param}.url", code="invalid_value"
        )
    return SourceInput(raw_id, text, fields["title"] or "", url)


# --- checking ---------------------------------------------------------------------------------


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
    return CheckReport(checked, urls, tuple(s.sentence_index for s in statements))


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
    if not statement.source_numbers:
        return Verdict(VerdictLabel.UNSUPPORTED, 0.0, METHOD_UNAVAILABLE, "no_source", "no source has text")
    if all(n == IdMarkers.UNKNOWN for n in statement.source_numbers):
        return Verdict(
            VerdictLabel.UNSUPPORTED, 0.0, METHOD_UNAVAILABLE, "unknown_source", "the marker names no source"
        )
    cited = {ids[n - 1] for n in statement.source_numbers if n != IdMarkers.UNKNOWN}
    reasons = sorted({u.reason or "invalid" for u in urls if cited & set(u.source_ids)})
    detail = f"the cited source could not be fetched ({', '.join(reasons)})" if reasons else "no cited text"
    return Verdict(VerdictLabel.UNSUPPORTED, 0.0, METHOD_UNAVAILABLE, "source_not_fetched", detail)


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
    )


# --- output -----------------------------------------------------------------------------------


def count_report(report: CheckReport, metrics: GatewayMetrics) -> None:
    """``gateway_cited_urls_total{valid}``: one count per fetched URL; and
    ``gateway_verifier_failures_total``: one count per claim a judge or entailment model failed on."""
    for url in report.urls:
        metrics.cited_urls.labels(valid=str(url.valid).lower()).inc()
    for statement in report.claims:
        if statement.failure is not None:
            metrics.verifier_failures.labels(
                stage=bounded(statement.method or "", MODEL_STAGES),
                kind=bounded(statement.failure, MODEL_FAILURES),
            ).inc()


def _span(span: Span) -> dict[str, int]:
    return {"start": span.start, "end": span.end}


def statement_json(statement: CheckedStatement) -> dict[str, Any]:
    evidence = statement.evidence
    return {
        "text": statement.text,
        "span": _span(statement.span),
        "kind": statement.kind.value,
        "verdict": statement.verdict.value if statement.verdict else None,
        "score": statement.score,
        "evidence": (
            {"source_id": evidence.source_id, "text": evidence.text, "span": _span(evidence.span)}
            if evidence
            else None
        ),
        "method": statement.method,
        "source_ids": list(statement.source_ids),
        "check": statement.check,
        "reason": statement.reason or None,
    }


def report_json(report: CheckReport) -> dict[str, Any]:
    """The ``/v1/verify`` response body (field names are a public contract: docs/verify-api.md)."""
    return {
        "claims": [statement_json(s) for s in report.statements],
        "statement_support": report.statement_support,
        "response_supported": report.response_supported,
        "url_validity": {
            "urls": [
                {
                    "url": u.url,
                    "source_ids": list(u.source_ids),
                    "valid": u.valid,
                    "status": u.status,
                    "reason": u.reason,
                    "final_url": u.final_url,
                }
                for u in report.urls
            ],
            "valid": sum(u.valid for u in report.urls),
            "total": len(report.urls),
            "share": report.url_validity_share,
        },
        "conversational_faithfulness": report.conversational_faithfulness,
    }
