"""A real scrape: Prometheus scrapes a running gateway, evaluates the recording rules, and the
grounding rate and the shares the grounding alerts watch, read back through its HTTP API, equal what the
scripted upstream's answers earned."""

from __future__ import annotations

import pytest

from gateway.testing import Reply, contract_answer, running_upstream
from tests.support.prometheus import GATEWAY_JOB, running_prometheus
from tests.support.stack import openai_client, running_gateway
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.prometheus, pytest.mark.timeout(90)]

DOSE = "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours."
MAXIMUM = "Do not take more than 4 g of paracetamol in 24 hours."
FABRICATED = "Paracetamol cures migraines within ten minutes."
QUESTION = "How much paracetamol can an adult take?"
JOB = f'job="{GATEWAY_JOB}"'


def supported() -> str:
    return contract_answer(
        f"{DOSE[:-1]} [1]. {MAXIMUM[:-1]} [1].", [(DOSE, [1], DOSE), (MAXIMUM, [1], MAXIMUM)]
    )


def partly_supported() -> str:
    return contract_answer(
        f"{DOSE[:-1]} [1]. {MAXIMUM[:-1]} [1]. {FABRICATED[:-1]} [1].",
        [(DOSE, [1], DOSE), (MAXIMUM, [1], MAXIMUM), (FABRICATED, [1], FABRICATED.lower())],
    )


def test_grounding_rate_recorded_by_prometheus(make_services, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with running_upstream() as (scripted, base_url):
        services = make_services(upstream_base_url=base_url, upstream_retries=0, upstream_timeout=5.0)
        with (
            running_gateway(services) as url,
            running_prometheus(tmp_path, [url.removeprefix("http://")]) as prom,
        ):
            # the zero-valued series must be in the TSDB before any traffic, so rates start from zero
            prom.wait_for(f"up{{{JOB}}}", lambda v: v == 1)
            prom.wait_for(f"count(gateway_claims_total{{{JOB}}})", lambda v: v == 3)

            # one draft per request; any further upstream call (a SourceCleanup rewrite) gets an error,
            # which removes the claim but leaves the first verdicts, which the grounding rate counts
            scripted.default = Reply(status=500, content="no rewrite in this test")
            client = openai_client(url)
            trusts = []
            for reply in (supported(), partly_supported(), supported()):
                scripted.queue(reply)
                completion = client.chat.completions.create(
                    model="clinic-bot", messages=[{"role": "user", "content": QUESTION}]
                )
                trusts.append(completion.model_extra["trust"]["summary"])
            client.chat.completions.create(
                model="clinic-bot",
                messages=[{"role": "user", "content": "I have crushing chest pain and my left arm is numb"}],
            )

            sent_claims = sum(t["claims"] for t in trusts)
            sent_supported = sum(t["supported"] for t in trusts)
            sent_responses_supported = sum(1 for t in trusts if t["response_supported"])
            assert (sent_claims, sent_supported, sent_responses_supported) == (7, 6, 2)

            prom.wait_for(f"sum(gateway_requests_total{{{JOB}}})", lambda v: v == 4)
            assert prom.scalar(f'gateway_requests_total{{{JOB},outcome="emergency"}}') == 1
            assert prom.scalar(f'gateway_requests_total{{{JOB},outcome="rewritten"}}') == 1
            assert prom.scalar(f'sum(gateway_claims_total{{{JOB},verdict="supported"}})') == sent_supported
            assert prom.scalar(f"sum(gateway_claims_total{{{JOB}}})") == sent_claims

            # the recording rules, evaluated every second over the scraped counters
            expected = sent_supported / sent_claims
            grounding = prom.wait_for(
                f"gateway:grounding_rate:ratio_rate5m{{{JOB}}}", lambda v: v == pytest.approx(expected)
            )
            assert grounding == pytest.approx(6 / 7)
            response_support = prom.wait_for(
                f"gateway:response_support:ratio_rate5m{{{JOB}}}", lambda v: v == pytest.approx(2 / 3)
            )
            assert response_support == pytest.approx(sent_responses_supported / len(trusts))
            assert prom.wait_for(
                f"gateway:grounding_rate:ratio_rate1h{{{JOB}}}", lambda v: v == pytest.approx(expected)
            ) == pytest.approx(6 / 7)

            # what happened to the claims: the fabricated quote is in no passage, so that claim is
            # unanchored and removed (its model rewrite failed; there is no source sentence to use)
            results = f"gateway_claim_results_total{{{JOB}"
            assert prom.scalar(f'sum({results},status="supported",outcome="kept"}})') == sent_supported
            assert prom.scalar(f'sum({results},status="unanchored",outcome="removed"}})') == 1
            assert prom.scalar(f"sum({results}}})") == sent_claims
            for share in ("claims_unanchored", "claims_removed"):
                assert prom.wait_for(
                    f"gateway:{share}:ratio_rate15m{{{JOB}}}", lambda v: v == pytest.approx(1 / 7)
                ) == pytest.approx(1 / 7)
            assert prom.wait_for(f"gateway:claims_contradicted:ratio_rate15m{{{JOB}}}", lambda v: v == 0) == 0

            rules = prom.get("/api/v1/rules")["data"]["groups"]
            assert {g["name"] for g in rules} == {"gateway-recording", "gateway-alerts"}
            assert all(r["health"] == "ok" for g in rules for r in g["rules"]), rules

            # the gateway is up and answering, so the down and no-traffic alerts clear: no-traffic is
            # pending from start-up until the alert group's first evaluation after traffic was scraped,
            # which may come an evaluation later than the recording group's (both every second)
            def down_or_idle() -> list[str]:
                alerts = prom.get("/api/v1/alerts")["data"]["alerts"]
                names = (a["labels"]["alertname"] for a in alerts)
                return [name for name in names if name in {"GatewayDown", "GatewayNoTraffic"}]

            wait_until(
                lambda: not down_or_idle(),
                lambda: (
                    f"the down and no-traffic alerts clear while the gateway answers (still {down_or_idle()})"
                ),
            )
