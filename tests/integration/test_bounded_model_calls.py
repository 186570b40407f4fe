"""Every model call bounded, bounded work, a free loop (issue 19, items 2 and 3).

Rewrite calls share the draft's ``LimitedModel`` (slots, queue, per-request deadline, error
metrics) and a per-request cap; a trickling rewrite is cut at the request's deadline; the model's reply
is bounded in size and repetition (refused as ``malformed_output``, counted); and ``/healthz`` stays
responsive while a 1 MB draft is split and verified off the event loop.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx
import pytest

from gateway.audit import AuditFilter
from gateway.models import Endpoint
from gateway.testing import Reply
from gateway.web.heap import frozen_heap
from tests.support import cleanup_scenarios as s
from tests.support.cleanup_stack import pin_chat_verifier, policy_copy
from tests.support.fault_server import running_fault_server
from tests.support.stack import running_gateway
from tests.support.waiting import DEADLINE_SECONDS, changed_until

MIN_PROBES_DURING_DRAFT = 3
"""Liveness probes that must come back while the 1 MB draft is still being processed."""
PROBE_INTERVAL_SECONDS = 0.05
"""Between two probes, so that probing does not starve the request it probes alongside."""


def fabricated_answer(count: int) -> str:
    """A supported sentence, then ``count`` claims whose quotes are in no source (each to rewrite)."""
    fabricated = [f"Paracetamol also cures headache type {i} within ten minutes." for i in range(count)]
    text = " ".join([s.m(s.DOSE, 1), *(s.m(f, 1) for f in fabricated)])
    claims = [(s.DOSE, [1], s.DOSE)]
    claims += [(f, [1], f"cures headache type {i}") for i, f in enumerate(fabricated)]
    return s.contract_answer(text, claims)


@pytest.fixture
def build(upstream, make_services, tmp_path):  # type: ignore[no-untyped-def]
    scripted, base_url = upstream
    scripted.reset()

    def make(base: str | None = None, **overrides: Any) -> Any:
        policy_dir = policy_copy(tmp_path / f"p{time.monotonic_ns()}", rewriter="upstream")
        settings = {"upstream_base_url": base or base_url, "upstream_retries": 0, "policy_dir": policy_dir}
        return pin_chat_verifier(make_services(**{**settings, **overrides}))

    return scripted, make


def ask(url: str, timeout: float = 60.0) -> dict[str, Any]:
    body = {"model": "m", "messages": [{"role": "user", "content": s.PARACETAMOL_Q}]}
    response = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=timeout)
    assert response.status_code == 200, response.text
    return dict(response.json())


def metric(url: str, series: str) -> float:
    for line in httpx.get(f"{url}/metrics").text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{series} not exported")


def test_rewrites_wait_for_the_drafts_concurrency_slots(build) -> None:  # type: ignore[no-untyped-def]
    scripted, make = build
    services = make(upstream_max_concurrency=1, max_rewrites_per_request=8)
    release = threading.Event()
    scripted.queue(fabricated_answer(5), Reply(content="{}", hold_until=release))
    scripted.default = Reply(content="{}")
    result: dict[str, Any] = {}
    with running_gateway(services) as url:
        caller = threading.Thread(target=lambda: result.update(ask(url)))
        caller.start()
        # the draft, then one rewrite holding the single slot while the four others queue for it; the
        # held rewrite takes its slot before its request reaches the upstream, so wait for both
        scripted.wait_for_requests(2)
        limits = services.models.limits(Endpoint.upstream(services.settings))
        assert limits is not None
        changed_until(
            limits.changes,
            lambda: limits.waiting == 4,
            "four rewrites waiting for the slot the held rewrite has",
        )
        waiting = metric(url, "gateway_upstream_waiting")
        arrived_while_held = len(scripted.requests)
        release.set()
        caller.join(timeout=60)
        rewrite_calls = metric(url, 'gateway_model_calls_total{purpose="rewrite",result="ok"}')
    assert arrived_while_held == 2  # the draft, then one rewrite: the other four waited for the slot
    assert waiting == 4
    assert rewrite_calls == 5
    assert len(scripted.requests) == 6


def test_rewrite_calls_are_capped_per_request(build) -> None:  # type: ignore[no-untyped-def]
    scripted, make = build
    services = make(max_rewrites_per_request=2)
    scripted.queue(fabricated_answer(6))
    scripted.default = Reply(content="not the JSON asked for")
    with running_gateway(services) as url:
        trust = ask(url)["trust"]
        skipped = metric(url, 'gateway_rewrites_skipped_total{reason="cap"}')
    assert len(scripted.requests) == 1 + 2
    assert skipped == 4
    assert trust["summary"]["removed"] == 6
    (row,) = services.audit.list(AuditFilter())
    reasons = [c["reason"] for c in services.audit.get(row.id)["cleanup"] if c["outcome"] == "removed"]
    assert sum("per-request cap" in r for r in reasons) == 4


def test_claims_past_the_cap_still_get_the_rewrite_to_their_source(build) -> None:  # type: ignore[no-untyped-def]
    """The cap bounds model calls, not information: a claim past it that quotes its source is rewritten
    to the quoted sentence (no model call), so the patient keeps what the source says."""
    scripted, make = build
    services = make(max_rewrites_per_request=1)
    paraphrases = [
        ("Grown-ups can have paracetamol in regular doses through the day.", "every 4 to 6 hours"),
        ("Never go over the daily paracetamol limit.", "more than 4 g of paracetamol in 24 hours"),
        ("Space the doses apart.", "at least 4 hours between doses"),
    ]
    text = " ".join(s.m(claim, 1) for claim, _ in paraphrases)
    scripted.queue(s.contract_answer(text, [(claim, [1], quote) for claim, quote in paraphrases]))
    scripted.default = Reply(content="not the JSON asked for")
    with running_gateway(services) as url:
        trust = ask(url)["trust"]
        skipped = metric(url, 'gateway_rewrites_skipped_total{reason="cap"}')
    assert len(scripted.requests) == 1 + 1  # the draft and one model rewrite: the cap held
    assert skipped == 2
    assert [c["outcome"] for c in trust["claims"]] == ["rewritten"] * 3
    assert [c["method"] for c in trust["claims"]] == ["source_rewrite"] * 3
    (row,) = services.audit.list(AuditFilter())
    reasons = [c["reason"] for c in services.audit.get(row.id)["cleanup"]]
    assert sum("per-request cap" in r for r in reasons) == 2


def test_a_trickling_rewrite_is_cut_at_the_request_deadline_and_counted(build) -> None:  # type: ignore[no-untyped-def]
    """The draft comes at once; the rewrite drips a byte every 1 s (each read well inside the 30 s
    read timeout, ~5 min in all): only the 20 s request deadline can stop it. The deadline runs from
    the draft's start through the checks, so it is long enough for a slow machine to reach the
    rewrite (2 s was not: a draft and checks slower than 2 s left no rewrite to cut)."""
    _scripted, make = build
    rewrite = json.dumps({"rewrite": "Paracetamol is a painkiller.", "quote": "painkiller"})
    with running_fault_server(
        "drip", rewrite, interval=1.0, normal_first=1, normal_content=fabricated_answer(1)
    ) as (fault, base_url):
        services = make(base=base_url, upstream_timeout=30.0, upstream_deadline=20.0)
        with running_gateway(services) as url:
            trust = ask(url, timeout=120.0)["trust"]
            timeouts = metric(url, 'gateway_upstream_errors_total{type="timeout"}')
            failed = metric(url, 'gateway_model_calls_total{purpose="rewrite",result="error"}')
        assert fault.connections == 2
    assert [c["outcome"] for c in trust["claims"]] == ["verified", "removed"]
    assert timeouts == 1  # the failed rewrite is in the upstream error metrics
    assert failed == 1


def test_an_oversized_reply_is_refused_as_malformed_and_counted(build) -> None:  # type: ignore[no-untyped-def]
    scripted, make = build
    services = make(upstream_max_reply_chars=5000)
    long_text = " ".join(f"Leave at least {i} hours between doses [1]." for i in range(300))
    scripted.queue(s.contract_answer(long_text, []))
    with running_gateway(services) as url:
        trust = ask(url)["trust"]
        limited = metric(url, 'gateway_draft_limit_exceeded_total{limit="reply_chars"}')
        malformed = metric(url, 'gateway_upstream_errors_total{type="malformed"}')
    assert trust["summary"]["reason"] == "malformed_output"
    assert (limited, malformed) == (1, 1)


def test_one_sentence_repeated_ends_the_answer_at_the_bound(build) -> None:  # type: ignore[no-untyped-def]
    """Sentences are released as they are verified (docs/safety.md, section 5), so the repeats up to
    ``max_repeated_sentences`` were already sent; the next one stops the model and ends the answer."""
    scripted, make = build
    services = make()
    sentence = s.m(s.DOSE, 1)
    scripted.queue(s.contract_answer(" ".join([sentence] * 50), [(s.DOSE, [1], s.DOSE)]))
    with running_gateway(services) as url:
        reply = ask(url)
        limited = metric(url, 'gateway_draft_limit_exceeded_total{limit="repeated_sentences"}')
    summary = reply["trust"]["summary"]
    assert (summary["reason"], summary["ended_early"]) == ("malformed_output", True)
    content = reply["choices"][0]["message"]["content"]
    assert content.count(sentence) == services.settings.max_repeated_sentences
    assert "I have stopped this answer here" in content
    assert limited == 1


def test_healthz_answers_while_a_1mb_draft_is_processed(build) -> None:  # type: ignore[no-untyped-def]
    scripted, make = build
    services = make(upstream_max_reply_chars=2_000_000)
    text = " ".join(f"Leave at least {i} hours between doses of medicine {i * 7} [1]." for i in range(17_000))
    assert len(text) > 1_000_000
    scripted.queue(s.contract_answer(text, []))
    done = threading.Event()
    result: dict[str, Any] = {}

    def call(url: str) -> None:
        result.update(ask(url, timeout=300))
        done.set()

    # The test process's heap stands for the serving process's start-up heap, frozen as serve freezes
    # it: a full collection over the whole test suite's objects holds the GIL for over half a second.
    with frozen_heap(), running_gateway(services) as url, httpx.Client(timeout=DEADLINE_SECONDS) as client:
        client.get(f"{url}/healthz")  # warm the connection
        caller = threading.Thread(target=call, args=(url,))
        caller.start()
        scripted.wait_for_requests(1)  # the gateway asked for the draft
        answered_during_draft = 0
        while not done.is_set():
            # a probe may wait (a slow machine); only whether it came back before the answer counts
            assert client.get(f"{url}/healthz").status_code == 200
            answered_during_draft += not done.is_set()  # came back while the draft was still processed
            done.wait(PROBE_INTERVAL_SECONDS)  # a probe rate, not a wait for something: ends with the request
        caller.join()
    # 17 000 statements: split off the loop, then refused by the statement bound before verifying
    assert result["trust"]["summary"]["reason"] == "malformed_output"
    # a loop blocked by the split or the checks would answer no probe until the request had ended
    assert answered_during_draft >= MIN_PROBES_DURING_DRAFT
