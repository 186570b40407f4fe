"""Metrics are recorded with the right semantics: requests run through the real pipeline
(``make_services``: fixture knowledge store, real verifier and cleanup), then the registry is read.

The guard, ``test_every_metric_is_recorded``, drives every path that records a metric through the real
app on one registry (scripted models, no network but loopback) and has no exemption list."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar
from structlog.testing import capture_logs

from gateway.domain import (
    ChatRequest,
    ClaimOutcome,
    ClaimResult,
    Conflict,
    ConflictKind,
    Message,
    Passage,
    Role,
    Span,
    Statement,
    StatementKind,
    Verdict,
    VerdictLabel,
)
from gateway.drafting.drafter import Drafter
from gateway.errors import AuditError, StoreError, UpstreamHTTPError, UpstreamTimeout, UpstreamUnavailable
from gateway.metric_labels import CLAIM_RESULTS, CLAIM_STATUSES, OTHER, bounded, method_label, tier_label
from gateway.metrics import GatewayMetrics
from gateway.models import Endpoint
from gateway.pipeline.recording import LOG_EVENT, claim_labels
from gateway.pipeline.run import answer
from gateway.retrieval.retrieve import Retriever
from gateway.settings import Secret
from gateway.testing import (
    ScriptedChatModel,
    ScriptedConnections,
    ScriptedDrafts,
    ScriptedVerifier,
    contract_answer,
    refused_port,
)
from gateway.testing.models import ToolTurn
from gateway.tool_calls import ToolCall
from gateway.verification.verify import ClaimChecker
from gateway.vocabulary import VerdictCheck, VerifierMethod
from gateway.web.app import create_app
from tests.support.audit import FailingAuditStore
from tests.support.cleanup_stack import policy_copy
from tests.support.components import with_components
from tests.support.pages import running_site
from tests.support.waiting import reached

PARACETAMOL_DOSE = "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours."
PARACETAMOL_MAX = "Do not take more than 4 g of paracetamol in 24 hours."
FABRICATED = "Paracetamol cures migraines within ten minutes."
QUESTION = "How much paracetamol can an adult take?"
EMERGENCY = "I have crushing chest pain and my left arm is numb"
NON_CLINICAL = "Who won the football match last night?"
NO_CONTEXT = "Can a pregnancy test be wrong?"


def supported_reply() -> str:
    return contract_answer(
        f"{PARACETAMOL_DOSE[:-1]} [1]. {PARACETAMOL_MAX[:-1]} [1].",
        [(PARACETAMOL_DOSE, [1], PARACETAMOL_DOSE), (PARACETAMOL_MAX, [1], PARACETAMOL_MAX)],
    )


def partly_supported_reply() -> str:
    return contract_answer(
        f"{PARACETAMOL_DOSE[:-1]} [1]. {PARACETAMOL_MAX[:-1]} [1]. {FABRICATED[:-1]} [1].",
        [
            (PARACETAMOL_DOSE, [1], PARACETAMOL_DOSE),
            (PARACETAMOL_MAX, [1], PARACETAMOL_MAX),
            (FABRICATED, [1], "paracetamol cures migraines within ten minutes"),
        ],
    )


def repeated_reply() -> str:
    """One sentence five times: over ``max_repeated_sentences`` (3), refused as malformed_output."""
    sentence = f"{PARACETAMOL_DOSE[:-1]} [1]."
    return contract_answer(" ".join([sentence] * 5), [(PARACETAMOL_DOSE, [1], PARACETAMOL_DOSE)])


class BrokenStore:
    async def search(self, query: str, k: int) -> list[Passage]:
        raise StoreError("the store is down")

    async def count(self) -> int:
        return 0


def ask(question: str = QUESTION) -> ChatRequest:
    return ChatRequest(messages=(Message(Role.USER, question),), model="clinic-bot")


def value(metrics: GatewayMetrics, name: str, **labels: str) -> float:
    found = metrics.registry.get_sample_value(name, labels)
    return 0.0 if found is None else float(found)


def total(metrics: GatewayMetrics, name: str) -> float:
    """Sum of every series of ``name`` (e.g. all verdicts of gateway_claims_total)."""
    return sum(s.value for family in metrics.registry.collect() for s in family.samples if s.name == name)


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_supported_answer(services) -> None:  # type: ignore[no-untyped-def]
    services = with_components(services, drafter=Drafter(ScriptedDrafts(supported_reply())))
    result = await answer(ask(), services.answer_parts)
    m = services.metrics
    assert not result.outcome.refused
    assert value(m, "gateway_requests_total", outcome="answered") == 1
    assert total(m, "gateway_requests_total") == 1
    assert value(m, "gateway_claims_total", verdict="supported") == 2
    assert total(m, "gateway_claims_total") == 2
    assert total(m, "gateway_claim_verdicts_total") == 2
    method = method_label(result.verdicts[0].method)
    assert method != OTHER
    assert value(m, "gateway_claim_verdicts_total", method=method, verdict="supported") == 2
    assert value(m, "gateway_statements_total", kind="claim") == 2
    assert value(m, "gateway_checked_responses_total", fully_supported="true") == 1
    assert value(m, "gateway_checked_responses_total", fully_supported="false") == 0
    assert value(m, "gateway_informative_sentences_total", grounded="true") == 2
    assert value(m, "gateway_claim_results_total", status="supported", outcome="kept") == 2
    assert total(m, "gateway_claim_results_total") == 2
    # the fixture's paracetamol leaflet is declared clinical_reference in the manifest
    assert value(m, "gateway_claim_evidence_total", tier="clinical_reference") == 2
    assert total(m, "gateway_claim_evidence_total") == 2
    assert value(m, "gateway_context_relevance_checks_total", relevant="true") == 1
    assert value(m, "gateway_context_relevance_score_count") == 1
    assert value(m, "gateway_context_relevance_score_sum") == pytest.approx(result.best_relevance)
    for histogram in ("request", "upstream", "added", "retrieval", "verification"):
        assert value(m, f"gateway_{histogram}_duration_seconds_count") == 1, histogram
    assert value(m, "gateway_refusals_total", reason="emergency") == 0
    assert total(m, "gateway_refusals_total") == 0
    assert total(m, "gateway_upstream_errors_total") == 0


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_partly_supported_answer_counts_statement_and_response_support(services) -> None:  # type: ignore[no-untyped-def]
    drafter = Drafter(ScriptedDrafts(partly_supported_reply(), supported_reply()))
    services = with_components(services, drafter=drafter)
    first = await answer(ask(), services.answer_parts)
    await answer(ask(), services.answer_parts)
    m = services.metrics
    assert not first.outcome.refused
    assert value(m, "gateway_requests_total", outcome="rewritten") == 1
    assert value(m, "gateway_requests_total", outcome="answered") == 1
    # statement-level support: 4 of 5 claims; response-level support: 1 of 2 responses
    assert value(m, "gateway_claims_total", verdict="supported") == 4
    assert total(m, "gateway_claims_total") == 5
    assert value(m, "gateway_checked_responses_total", fully_supported="true") == 1
    assert value(m, "gateway_checked_responses_total", fully_supported="false") == 1
    # conversational faithfulness: the fabricated sentence is the one ungrounded informative sentence
    assert value(m, "gateway_informative_sentences_total", grounded="false") == 1
    assert value(m, "gateway_informative_sentences_total", grounded="true") == 4
    # what happened to them: four kept as written; the fabricated quote is in no passage, so the claim
    # is unanchored and removed (there is no source sentence to rewrite it to)
    assert value(m, "gateway_claim_results_total", status="supported", outcome="kept") == 4
    assert value(m, "gateway_claim_results_total", status="unanchored", outcome="removed") == 1
    assert total(m, "gateway_claim_results_total") == 5
    # only what reached the patient counts toward the evidence tiers
    delivered = sum(1 for c in first.report.claims if c.outcome.value != "removed")
    assert total(m, "gateway_claim_evidence_total") == delivered + 2
    assert value(m, "gateway_verification_duration_seconds_count") == 2


PARAPHRASE = "Wait at least four hours between doses of paracetamol."
LEAVE = "Leave at least 4 hours between doses."


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_a_faithful_paraphrase_counts_as_rewritten_to_its_source(services) -> None:  # type: ignore[no-untyped-def]
    """Issue 35: a paraphrase quoting its source is rewritten to the source's sentence. It is counted as
    such (not as a failure of grounding): no unanchored quote, no removal."""
    reply = contract_answer(
        f"{PARACETAMOL_DOSE[:-1]} [1]. {PARAPHRASE[:-1]} [1].",
        [(PARACETAMOL_DOSE, [1], PARACETAMOL_DOSE), (PARAPHRASE, [1], LEAVE)],
    )
    services = with_components(services, drafter=Drafter(ScriptedDrafts(reply)))
    result = await answer(ask(), services.answer_parts)
    m = services.metrics
    assert not result.outcome.refused
    assert LEAVE[:-1] in result.outcome.answer  # the source's sentence, with its marker
    assert value(m, "gateway_claim_results_total", status="supported", outcome="kept") == 1
    rewritten = sum(
        value(m, "gateway_claim_results_total", status=status, outcome="rewritten_source")
        for status in ("not_verified", "contradicted", "unsupported")
    )
    assert rewritten == 1
    assert (
        sum(value(m, "gateway_claim_results_total", status="unanchored", outcome=o) for o in CLAIM_RESULTS)
        == 0
    )
    assert (
        sum(value(m, "gateway_claim_results_total", status=st, outcome="removed") for st in CLAIM_STATUSES)
        == 0
    )


def claim(verdict: Verdict, outcome: ClaimOutcome, rewrite: Verdict | None = None) -> ClaimResult:
    statement = Statement("Paracetamol is safe.", Span(0, 20), StatementKind.CLAIM, (1,), "safe", 0)
    return ClaimResult(statement, verdict, outcome, None, rewrite_verdict=rewrite)


SUPPORTED = Verdict(VerdictLabel.SUPPORTED, 0.9, "cascade", "quote_bound")
UNDECIDED = Verdict(VerdictLabel.UNSUPPORTED, 0.4, "cascade", "quote_binding")
UNANCHORED = Verdict(VerdictLabel.UNSUPPORTED, 0.4, "cascade", VerdictCheck.NO_ANCHORED_QUOTE)
CONFLICT = Conflict(ConflictKind.NUMBER, "4 g against 8 g", "8 g", "4 g")
CONTRADICTED = Verdict(VerdictLabel.CONTRADICTED, 0.1, "cascade", "quote_binding", conflict=CONFLICT)
DECIDED = Verdict(VerdictLabel.UNSUPPORTED, 0.1, "judge", "judge", decided=True)
PLANTED = Verdict(VerdictLabel.UNSUPPORTED, 0.0, "cascade", VerdictCheck.PLANTED_INSTRUCTION)
BY_SOURCE = Verdict(VerdictLabel.SUPPORTED, 1.0, VerifierMethod.SOURCE_REWRITE, "verbatim")
BY_MODEL = Verdict(VerdictLabel.SUPPORTED, 0.9, "cascade", "quote_bound")


@pytest.mark.parametrize(
    ("result", "labels"),
    [
        (claim(SUPPORTED, ClaimOutcome.VERIFIED), ("supported", "kept")),
        (claim(UNDECIDED, ClaimOutcome.REWRITTEN, BY_SOURCE), ("not_verified", "rewritten_source")),
        (claim(UNDECIDED, ClaimOutcome.REWRITTEN, BY_MODEL), ("not_verified", "rewritten_model")),
        (claim(UNANCHORED, ClaimOutcome.REMOVED), ("unanchored", "removed")),
        (claim(CONTRADICTED, ClaimOutcome.REWRITTEN, BY_SOURCE), ("contradicted", "rewritten_source")),
        (claim(DECIDED, ClaimOutcome.REMOVED), ("unsupported", "removed")),
        (claim(PLANTED, ClaimOutcome.REMOVED), ("unsupported", "removed")),
    ],
)
def test_claim_labels_say_what_happened_to_the_claim(result: ClaimResult, labels: tuple[str, str]) -> None:
    assert claim_labels(result) == labels
    assert labels[0] in CLAIM_STATUSES
    assert labels[1] in CLAIM_RESULTS


def test_every_claim_result_series_exists_at_zero() -> None:
    m = GatewayMetrics()
    for status in CLAIM_STATUSES:
        for outcome in CLAIM_RESULTS:
            assert (
                m.registry.get_sample_value(
                    "gateway_claim_results_total", {"status": status, "outcome": outcome}
                )
                == 0
            )


@pytest.mark.slow  # loads MiniLM, Chroma or the services
@pytest.mark.parametrize(
    ("question", "outcome", "reason"),
    [
        (EMERGENCY, "emergency", "emergency"),
        (NON_CLINICAL, "refused", "non_clinical"),
        (NO_CONTEXT, "refused", "no_relevant_context"),
    ],
)
async def test_refusals_by_reason_never_reach_the_upstream(services, question, outcome, reason) -> None:  # type: ignore[no-untyped-def]
    upstream = ScriptedDrafts()
    services = with_components(services, drafter=Drafter(upstream))
    result = await answer(ask(question), services.answer_parts)
    m = services.metrics
    assert result.outcome.refusal_reason is not None
    assert result.outcome.refusal_reason.value == reason
    assert upstream.calls == 0
    assert value(m, "gateway_requests_total", outcome=outcome) == 1
    assert value(m, "gateway_refusals_total", reason=reason) == 1
    assert total(m, "gateway_refusals_total") == 1
    assert total(m, "gateway_claims_total") == 0
    assert value(m, "gateway_upstream_duration_seconds_count") == 0
    assert value(m, "gateway_verification_duration_seconds_count") == 0
    assert value(m, "gateway_request_duration_seconds_count") == 1
    relevance_refused = value(m, "gateway_context_relevance_checks_total", relevant="false")
    assert relevance_refused == (1 if reason == "no_relevant_context" else 0)


@pytest.mark.slow  # loads MiniLM, Chroma or the services
@pytest.mark.parametrize(
    ("error", "error_type"),
    [
        (UpstreamTimeout("timed out"), "timeout"),
        (UpstreamUnavailable("refused"), "connection"),
        (UpstreamHTTPError("boom", status_code=502), "http_status"),
    ],
)
async def test_upstream_errors_by_type(services, error, error_type) -> None:  # type: ignore[no-untyped-def]
    services = with_components(services, drafter=Drafter(ScriptedDrafts(error)))
    result = await answer(ask(), services.answer_parts)
    m = services.metrics
    assert result.outcome.refused
    assert value(m, "gateway_requests_total", outcome="error") == 1
    assert value(m, "gateway_refusals_total", reason="upstream_error") == 1
    assert value(m, "gateway_upstream_errors_total", type=error_type) == 1
    assert total(m, "gateway_upstream_errors_total") == 1
    assert value(m, "gateway_stage_errors_total", stage="draft") == 1
    # a failed upstream call is still an upstream call: it counts toward latency and error rate
    assert value(m, "gateway_upstream_duration_seconds_count") == 1


@pytest.mark.slow  # loads MiniLM, Chroma or the services
@pytest.mark.parametrize(
    ("reply", "series", "labels"),
    [
        (UpstreamTimeout("slow"), "gateway_upstream_errors_total", {"type": "timeout"}),
        (repeated_reply(), "gateway_draft_limit_exceeded_total", {"limit": "repeated_sentences"}),
    ],
)
async def test_a_failed_draft_is_counted_even_when_its_record_fails(  # type: ignore[no-untyped-def]
    services, reply, series, labels
) -> None:
    """The draft's failure is counted where it is handled, not when the request's record is written."""
    completion_fails = FailingAuditStore(services.audit, writes_ok=1, error=OSError)  # the provisional one
    services = with_components(services, drafter=Drafter(ScriptedDrafts(reply)), audit=completion_fails)
    with pytest.raises(AuditError):
        await answer(ask(), services.answer_parts)
    m = services.metrics
    assert value(m, "gateway_audit_errors_total", operation="complete") == 1
    assert completion_fails.written == 1
    assert value(m, series, **labels) == 1
    assert value(m, "gateway_stage_errors_total", stage="draft") == 1


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_malformed_draft_is_an_upstream_error_of_type_malformed(services) -> None:  # type: ignore[no-untyped-def]
    services = with_components(services, drafter=Drafter(ScriptedDrafts('{"answer": 3}')))
    await answer(ask(), services.answer_parts)
    m = services.metrics
    assert value(m, "gateway_upstream_errors_total", type="malformed") == 1
    assert value(m, "gateway_refusals_total", reason="malformed_output") == 1


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_store_failure_is_counted_at_the_retrieve_stage(services) -> None:  # type: ignore[no-untyped-def]
    broken = Retriever(BrokenStore(), services.policy.thresholds.retrieval)
    services = with_components(services, retriever=broken, drafter=Drafter(ScriptedDrafts()))
    await answer(ask(), services.answer_parts)
    m = services.metrics
    assert value(m, "gateway_requests_total", outcome="error") == 1
    assert value(m, "gateway_stage_errors_total", stage="retrieve") == 1
    assert value(m, "gateway_refusals_total", reason="store_error") == 1
    assert total(m, "gateway_upstream_errors_total") == 0
    assert value(m, "gateway_upstream_duration_seconds_count") == 0
    assert value(m, "gateway_retrieval_duration_seconds_count") == 0


@pytest.mark.slow  # loads MiniLM, Chroma or the services
@pytest.mark.parametrize(
    ("verifier_name", "label"),
    [("judge", "judge"), ("cascade:judge", "cascade"), ("Local", "local"), ("claim 42 by Dr Who", OTHER)],
)
async def test_method_label_is_bounded(services, verifier_name, label) -> None:  # type: ignore[no-untyped-def]
    checker = ClaimChecker(ScriptedVerifier.supporting(verifier_name))
    services = with_components(services, drafter=Drafter(ScriptedDrafts(supported_reply())), checker=checker)
    await answer(ask(), services.answer_parts)
    m = services.metrics
    assert value(m, "gateway_claim_verdicts_total", method=label, verdict="supported") == 2
    assert all(
        s.labels["method"] in {"anchoring", "local", "nli", "judge", "web", "cascade", "rewrite", OTHER}
        for family in m.registry.collect()
        for s in family.samples
        if s.name == "gateway_claim_verdicts_total"
    )


def test_bounded_labels() -> None:
    assert bounded("  JUDGE ", ["judge"]) == "judge"
    assert bounded("judge-v2", ["judge"]) == "judge"
    assert bounded("", ["judge"]) == OTHER
    assert tier_label("guideline", ["guideline", "unknown"]) == "guideline"
    assert tier_label("what the patient typed", ["guideline"]) == OTHER


@pytest.mark.slow  # loads MiniLM, Chroma or the services
def test_tiers_of_the_policy_exist_at_zero(services) -> None:  # type: ignore[no-untyped-def]
    m = services.metrics
    tiers = {t.id for t in services.policy.tiers.tiers}
    exported = {
        s.labels["tier"]
        for family in m.registry.collect()
        for s in family.samples
        if s.name == "gateway_claim_evidence_total"
    }
    assert exported == tiers


def test_cited_url_validity() -> None:
    m = GatewayMetrics()
    m.record_cited_url(True)
    m.record_cited_url(False, "blocked_address")
    m.record_cited_url(False, "https://evil.example/?q=patient+name")
    assert value(m, "gateway_cited_urls_total", valid="true") == 1
    assert value(m, "gateway_cited_urls_total", valid="false") == 2
    assert value(m, "gateway_cited_url_failures_total", reason="blocked_address") == 1
    assert value(m, "gateway_cited_url_failures_total", reason=OTHER) == 1


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_audit_failure_is_counted_as_an_error_and_raised(services) -> None:  # type: ignore[no-untyped-def]
    class FailingAudit:
        async def write(self, row: Any, record: Any) -> None:
            raise OSError("disk full")

        def close(self) -> None:
            return None

    upstream = ScriptedDrafts(supported_reply())
    trail = dataclasses.replace(services.trail, store=FailingAudit())
    services = with_components(services, drafter=Drafter(upstream), trail=trail)
    with pytest.raises(AuditError, match="disk full"):
        await answer(ask(), services.answer_parts)
    m = services.metrics
    assert value(m, "gateway_requests_total", outcome="error") == 1
    assert value(m, "gateway_requests_total", outcome="answered") == 0
    assert value(m, "gateway_stage_errors_total", stage="record") == 1
    assert value(m, "gateway_audit_errors_total", operation="begin") == 1
    assert upstream.calls == 0  # refused before any work: the model was never asked


SNAKE = re.compile(r"^gateway_[a-z0-9_]+$")


def test_names_follow_prometheus_conventions() -> None:
    m = GatewayMetrics()
    for family in m.registry.collect():
        assert SNAKE.match(family.name), family.name
        assert family.documentation.strip(), family.name
        if family.type == "counter":
            assert not family.name.endswith("_total"), family.name  # the client appends _total
        if family.type == "histogram":
            assert family.name.endswith(("_seconds", "_score")), family.name
        for sample in family.samples:
            assert "id" not in sample.labels, family.name
    names = m.names()
    assert "gateway_claims_total" in names
    assert "gateway_verification_duration_seconds_bucket" in names
    assert "gateway_ready" in names


# --- the guard: every collector moves, through the real app, on one registry ----------------------

CLIENT_KEY = "client-key"
LIMITED_KEY = "limited-key"
"""A second client key: its own token bucket is emptied (429) without touching the first's."""
UPSTREAM_URL = "http://127.0.0.1:9/v1"
JUDGE_URL = "http://127.0.0.1:10/v1"
"""Never contacted: the pool connects to scripted models (``ScriptedConnections``)."""
BURST = 20
CHECKED_ANSWER = (
    "Flu symptoms come on quickly [flu]. Flu spreads by coughs [flu]. Antibiotics cure flu [evil]."
)
"""For /v1/verify: [flu] is a fetched page, [evil] a URL off the allow-list."""
JUDGED = "Flu spreads by coughs."
"""The claim the flu page neither supports nor contradicts: it goes to the judge."""
"""Each key's bucket: enough for every /v1 call of the scenario made with ``CLIENT_KEY``."""


class Observed:
    """The metric families seen with a non-zero sample at any look at the registry, so a gauge that is
    back at 0 at rest (``gateway_upstream_in_flight``) counts when it was seen set during the run."""

    def __init__(self, metrics: GatewayMetrics) -> None:
        self.metrics = metrics
        self.moved: set[str] = set()

    def look(self) -> None:
        for family in self.metrics.registry.collect():
            if any(s.value for s in family.samples if not s.name.endswith("_created")):
                self.moved.add(family.name)

    def never_moved(self) -> list[str]:
        return sorted({family.name for family in self.metrics.registry.collect()} - self.moved)


BOOKING = ToolCall("call_1", "book_appointment", '{"when": "tomorrow"}')
BOOKING_TOOL = {"type": "function", "function": {"name": "book_appointment"}}


def chat(question: str = QUESTION, *, stream: bool = False) -> dict[str, Any]:
    return {"model": "clinic-bot", "messages": [{"role": "user", "content": question}], "stream": stream}


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def exported(text: str, series: str) -> float:
    """The value of ``series`` in a /metrics scrape."""
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{series} not exported")


def upstream_gauges(metrics: GatewayMetrics) -> tuple[float, float]:
    """(calls in flight, calls waiting for a slot) as the gauges say now."""
    return value(metrics, "gateway_upstream_in_flight"), value(metrics, "gateway_upstream_waiting")


@asynccontextmanager
async def serving(app: Litestar, address: str = "127.0.0.1") -> AsyncIterator[httpx.AsyncClient]:
    """``app`` in this event loop (its lifespan run), called from client ``address``."""
    transport = httpx.ASGITransport(app=app, client=(address, 50000))
    async with app.lifespan(), httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
        yield client


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_every_metric_is_recorded(make_services, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """One scenario through the real app (``create_app`` over one ``Services``, hence one registry)
    drives every path that records a metric; every collector of that registry must have moved. No
    exemption: a metric this scenario cannot move is a metric to drive here, or to delete."""
    draft_model = ScriptedChatModel(
        partly_supported_reply(),  # held in flight, then rewritten (the rewrite cap is 0)
        supported_reply(),  # held waiting for the slot
        ToolTurn(supported_reply(), (BOOKING,)),  # streamed, with a tool call
        UpstreamTimeout("slow"),
        repeated_reply(),
        held=True,
    )
    judge_model = ScriptedChatModel(default=UpstreamHTTPError("the judge is down", status_code=500))
    connections = ScriptedConnections(models={UPSTREAM_URL: draft_model, JUDGE_URL: judge_model})
    policy = policy_copy(
        tmp_path,
        verification={
            "uncertain_band": [0.0, 1.0],  # every claim not decided locally goes to the (failing) judge
            "url_allowed_domains": ["127.0.0.1"],
        },
        rewriter="upstream",
    )
    overrides: dict[str, Any] = {
        "policy_dir": policy,
        "allow_loopback_fetch": True,
        "upstream_base_url": UPSTREAM_URL,
        "judge_base_url": JUDGE_URL,
        "judge_api_key": Secret("judge-key"),
        "upstream_max_concurrency": 1,
        "upstream_queue_size": 1,
        "max_rewrites_per_request": 0,
        "api_keys": (Secret(CLIENT_KEY), Secret(LIMITED_KEY)),
        "rate_limit_per_minute": 1.0,
        "rate_limit_burst": BURST,
        "auth_failures_per_minute": 1.0,
        "auth_failures_burst": 2,
    }
    services = make_services(connect=connections, **overrides)
    observed = Observed(services.metrics)
    client_key = bearer(CLIENT_KEY)

    with running_site() as (_site, site_url):
        async with serving(create_app(services.settings, services=services)) as gateway:
            # two chat requests at once against one upstream slot: one in flight, one waiting
            first = asyncio.create_task(gateway.post("/v1/chat/completions", json=chat(), headers=client_key))
            second = asyncio.create_task(
                gateway.post("/v1/chat/completions", json=chat(), headers=client_key)
            )
            await draft_model.wait_for_calls(1)  # the first request holds the slot: it is in the model
            limits = services.models.limits(Endpoint.upstream(services.settings))
            assert limits is not None
            await reached(
                limits.changes,
                lambda: upstream_gauges(services.metrics) == (1, 1),
                "one request holds the upstream slot and the other waits",
            )
            assert draft_model.calls == 1
            held = (await gateway.get("/metrics")).text
            observed.look()
            draft_model.release()
            for task in (first, second):
                assert (await task).status_code == 200
            assert exported(held, "gateway_upstream_in_flight") == 1
            assert exported(held, "gateway_upstream_waiting") == 1
            assert value(services.metrics, "gateway_upstream_in_flight") == 0  # back at rest

            body = {**chat(stream=True), "tools": [BOOKING_TOOL]}
            streamed = await gateway.post("/v1/chat/completions", json=body, headers=client_key)
            assert streamed.status_code == 200
            assert streamed.text.rstrip().endswith("data: [DONE]")
            assert '"finish_reason": "tool_calls"' in streamed.text
            # the draft times out; the draft repeats a sentence; no draft: emergency, no relevant context
            for question in (QUESTION, QUESTION, EMERGENCY, NO_CONTEXT):
                response = await gateway.post("/v1/chat/completions", json=chat(question), headers=client_key)
                assert response.status_code == 200
            verified = await gateway.post(
                "/v1/verify",
                json={
                    "answer": CHECKED_ANSWER,
                    "sources": [
                        {"id": "flu", "url": f"{site_url}/page/flu"},
                        {"id": "evil", "url": "https://evil.example/flu"},
                    ],
                },
                headers=client_key,
            )
            assert verified.status_code == 200
            report = verified.json()
            assert (report["url_validity"]["valid"], report["url_validity"]["total"]) == (1, 2)
            judged = next(c for c in report["claims"] if c["text"] == JUDGED)
            assert (judged["method"], judged["verdict"]) == ("judge", "unsupported")  # failed closed
            rejected = await gateway.post("/v1/chat/completions", json={"messages": "hi"}, headers=client_key)
            assert rejected.status_code == 400
            assert (await gateway.get("/readyz")).status_code == 200
            limited = [
                (await gateway.get("/v1/models", headers=bearer(LIMITED_KEY))) for _ in range(BURST + 1)
            ]
            assert [r.status_code for r in limited] == [200] * BURST + [429]
            observed.look()

        # the audit store fails: begin (a 503), check (not ready); the same services but for their audit
        audit_down = with_components(services, audit=FailingAuditStore(services.audit))
        async with serving(create_app(services.settings, services=audit_down)) as gateway:
            refused = await gateway.post("/v1/chat/completions", json=chat(), headers=client_key)
            assert refused.status_code == 503
            assert (await gateway.get("/readyz")).status_code == 503
            observed.look()

        async with serving(create_app(services.settings, services=services), "192.0.2.7") as gateway:
            statuses = [
                (await gateway.get("/v1/models", headers=bearer("wrong"))).status_code for _ in range(3)
            ]
            assert statuses == [401, 401, 429]  # the third failure finds the address's bucket (2) empty

        with refused_port() as port:
            nothing_listens = Secret(f"redis://127.0.0.1:{port}/0")
            redis_down = services.settings.model_copy(update={"redis_url": nothing_listens})
            async with serving(create_app(redis_down, services=services)) as gateway:
                assert (await gateway.get("/v1/models", headers=client_key)).status_code == 503

    observed.look()
    assert draft_model.calls == 5
    m = services.metrics
    assert value(m, "gateway_verifier_failures_total", stage="judge", kind="error") >= 1
    assert value(m, "gateway_rate_limited_total") == 1
    assert value(m, "gateway_auth_throttled_total") == 1
    assert value(m, "gateway_rate_limiter_errors_total") == 1
    assert observed.never_moved() == []


def test_every_metric_is_documented_in_the_operations_guide() -> None:
    """docs/operations.md has a row for every metric the gateway exports (counters with ``_total``)."""
    guide = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")
    undocumented = []
    for family in GatewayMetrics().registry.collect():
        exported = f"{family.name}_total" if family.type == "counter" else family.name
        if f"`{exported}`" not in guide:
            undocumented.append(exported)
    assert undocumented == []


@pytest.mark.slow  # loads MiniLM, Chroma or the services
async def test_the_record_and_log_name_the_drafter_that_served_the_request(services) -> None:  # type: ignore[no-untyped-def]
    drafts = ScriptedDrafts(supported_reply())
    drafts.scripted.name = "swapped-in"
    services = with_components(services, drafter=Drafter(drafts))
    with capture_logs() as logs:
        result = await answer(ask(), services.answer_parts)
    record = services.audit.get(result.request_id)
    assert record is not None
    assert record["upstream"] == "swapped-in"
    assert [e["upstream"] for e in logs if e["event"] == LOG_EVENT] == ["swapped-in"]
