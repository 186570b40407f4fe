"""The JSON of a check report: the ``/v1/verify`` response body and each line of ``trust-gateway verify``."""

from __future__ import annotations

from typing import Any

from gateway.checkonly.report import CheckedStatement, CheckReport
from gateway.domain import Conflict, Span


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
        "status": statement.status.value if statement.status else None,
        "contradiction": conflict_json(statement.conflict) if statement.conflict else None,
    }


def conflict_json(conflict: Conflict) -> dict[str, str | None]:
    return {
        "kind": conflict.kind.value,
        "claim": conflict.claim or None,
        "source": conflict.source or None,
        "detail": conflict.detail,
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
        "claims_by_status": {status.value: n for status, n in report.status_counts().items()},
        "statement_support_range": (
            {"low": support.low, "high": support.high, "undecided": support.undecided}
            if (support := report.support_range)
            else None
        ),
        "response_support_possible": report.response_support_possible,
        "operating_point": report.operating_point,
    }
