"""What the optional query rewrite (GATEWAY_QUERY_REWRITE) adds to a chat request's retrieval stage.

The rewrite is one short call to the upstream model before retrieval (gateway/knowledge/rewrite.py).
Here the upstream is the scripted OpenAI-compatible server over real HTTP on loopback
(``gateway.testing.running_upstream``), answering each call after a set model time; the call goes
through the gateway's real client and limits (``ModelPool``: ``OpenAIChatModel`` in ``LimitedModel``).
Prints, per scripted model time, the rewrite's wall time (median, p95) and the share of calls that came
back in time, with the deadline it runs under: a model slower than the deadline costs exactly the
deadline, then the message is searched as it is (fails open). No index or MiniLM is needed: add the
search's own latency (bench_patient_questions.py) for the stage.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_query_rewrite.py [--calls 40] [--deadline 2.0]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MESSAGES = (
    "me and my wife havent been intimate in months because i cant get hard. what causes this",
    "My grandad coughs every morning and gets winded walking to the mailbox. Is it emphysema?",
    "stubbed my big toe on the bedframe last nite, its purple and swolen. could it be broken?",
    "Our baby was born with a hole in her heart. What causes these holes in the heart?",
)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(url: str, deadline: float, calls: int) -> tuple[list[float], int]:
    from gateway.bootstrap import build_query_rewriter
    from gateway.metrics import GatewayMetrics
    from gateway.models import ModelPool
    from gateway.settings import Settings

    settings = Settings(upstream_base_url=url, query_rewrite=True, query_rewrite_deadline=deadline)
    models = ModelPool(settings, GatewayMetrics())
    rewriter = build_query_rewriter(settings, models)
    assert rewriter is not None
    times: list[float] = []
    rewritten = 0
    try:
        for n in range(calls):
            started = time.perf_counter()
            result = await rewriter.rewrite(MESSAGES[n % len(MESSAGES)])
            times.append((time.perf_counter() - started) * 1000)
            rewritten += result.outcome == "rewritten"
    finally:
        await models.aclose()
    return times, rewritten


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=40, help="rewrite calls per model time")
    parser.add_argument("--deadline", type=float, default=2.0, help="GATEWAY_QUERY_REWRITE_DEADLINE")
    parser.add_argument(
        "--model-ms", type=float, nargs="*", default=[0.0, 150.0, 600.0, 3000.0], help="scripted model times"
    )
    args = parser.parse_args()

    from gateway.testing.openai_server import Reply, running_upstream

    logging.disable(logging.INFO)  # the timeouts past the deadline are expected here

    print(
        "query rewrite through the real client and limits, scripted upstream on loopback; "
        f"deadline {args.deadline:g} s"
    )
    print(f"{'model ms':>9}{'calls':>7}{'median ms':>11}{'p95 ms':>9}{'rewritten':>11}{'overhead p50':>14}")
    with running_upstream() as (upstream, url):
        for model_ms in args.model_ms:

            def reply(_: dict[str, Any], delay: float = model_ms / 1000) -> Reply:
                return Reply(content="What causes erectile dysfunction?", delay=delay)

            upstream.reset()
            upstream.responder = reply
            asyncio.run(measure(url, args.deadline, 2))  # warm-up: connection, imports
            times, rewritten = asyncio.run(measure(url, args.deadline, args.calls))
            median = statistics.median(times)
            print(
                f"{model_ms:>9.0f}{len(times):>7}{median:>11.1f}{percentile(times, 0.95):>9.1f}"
                f"{rewritten / len(times):>11.2f}{median - min(model_ms, args.deadline * 1000):>14.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
