"""``POST /v1/verify``: check an answer against the sources it cites, without generating anything.

The handler only translates HTTP to ``gateway.checkonly`` and back (contract: docs/verify-api.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import MediaType, Request, Response, post

from gateway.checkonly.inputs import PublishedCheckBody, parse_check_input
from gateway.checkonly.rendering import report_json
from gateway.checkonly.service import check_answer, count_report
from gateway.fetching.fetcher import SafeFetcher
from gateway.metrics import GatewayMetrics
from gateway.pipeline.stages import Stage, StageRunner
from gateway.verification.verifier import Verifier
from gateway.vocabulary import StageName
from gateway.web.chat_schema import parse_json_object
from gateway.web.openapi_bodies import with_body

CHECK = Stage(StageName.VERIFY, check_answer)
"""The check-only use case as one stage: split, fetch, verify (never a partial verdict list)."""


@dataclass(frozen=True)
class Verification:
    """What ``POST /v1/verify`` uses (handed through ``gateway.web.parts``): the verifier, the process's
    web fetcher, the metrics, and the most sources one request may cite (``GATEWAY_VERIFY_MAX_SOURCES``)."""

    verifier: Verifier
    fetcher: SafeFetcher
    metrics: GatewayMetrics
    max_sources: int


@post(
    "/v1/verify",
    status_code=200,
    summary="Verify an answer's claims against its cited sources",
    operation_class=with_body(PublishedCheckBody, "An answer with [n] markers and the sources it cites."),
)
async def verify_answer(request: Request[Any, Any, Any], verification: Verification) -> Response[Any]:
    data = parse_json_object(await request.body())
    checked = parse_check_input(data, max_sources=verification.max_sources)
    run = StageRunner(verification.metrics)  # a failure: counted, then a 503 verifier_error (web/errors.py)
    report = await run(CHECK, checked.answer, checked.sources, verification.verifier, verification.fetcher)
    count_report(report, verification.metrics)
    return Response(report_json(report), media_type=MediaType.JSON)
