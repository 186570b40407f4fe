"""What OpenTelemetry tracing costs per pipeline stage: ``StageRunner`` with tracing off and on.

One trivial stage (returns a fixed ``Triage``: the runner's own cost, nothing else) is run through
``StageRunner`` ``--calls`` times in each mode, in rounds of 100 calls; the per-call time of each round is
one sample. Modes:

* ``bare``: ``await stage.run(...)`` without the runner (the floor);
* ``no hook``: the runner's body without the tracing hook (``StageRunner._run``: the runner before
  tracing existed);
* ``off``: the runner with tracing off (the default: no provider, one context-variable read);
* ``on (batch)``: tracing on, spans to a ``BatchSpanProcessor`` whose exporter discards them (what a
  serving process pays on the request path; export itself runs on the processor's thread);
* ``on (capture)``: the same with ``GATEWAY_OTEL_CAPTURE_CONTENT`` on.

Prints median and p95 microseconds per stage call and each mode's median against ``off``.

    .venv/bin/python bench/bench_tracing.py [--calls 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult  # noqa: E402

from gateway.domain import Scope, Triage, TriageLayer  # noqa: E402
from gateway.metrics import GatewayMetrics  # noqa: E402
from gateway.pipeline.stages import Stage, StageRunner  # noqa: E402
from gateway.settings import Settings  # noqa: E402
from gateway.telemetry import tracing  # noqa: E402
from gateway.vocabulary import StageName  # noqa: E402

ROUND = 100
DECIDED = Triage(Scope.IN_SCOPE, "health question", layer=TriageLayer.CLASSIFIER)


class Discard(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


async def decide(question: str) -> Triage:
    return DECIDED


STAGE = Stage(StageName.TRIAGE, decide)


async def samples(calls: int, runner: StageRunner | None, hook: bool = True) -> list[float]:
    """Microseconds per call, one sample per round of ROUND calls."""
    out = []
    for _ in range(calls // ROUND):
        started = time.perf_counter()
        for _ in range(ROUND):
            if runner is None:
                await STAGE.run("q")
            elif not hook:
                await runner._run(STAGE, "q")
            else:
                await runner(STAGE, "q")
        out.append((time.perf_counter() - started) / ROUND * 1e6)
    return out


async def traced(calls: int, capture: bool) -> list[float]:
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Discard()))
    handle = tracing.tracing_for(provider, Settings(otel_capture_content=capture))
    token = tracing.CURRENT.set(handle)
    try:
        return await samples(calls, StageRunner(GatewayMetrics()))
    finally:
        tracing.CURRENT.reset(token)
        provider.shutdown()


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


async def main(calls: int) -> None:
    results = {
        "bare": await samples(calls, None),
        "no hook": await samples(calls, StageRunner(GatewayMetrics()), hook=False),
        "off": await samples(calls, StageRunner(GatewayMetrics())),
        "on (batch)": await traced(calls, capture=False),
        "on (capture)": await traced(calls, capture=True),
    }
    off = statistics.median(results["off"])
    print(f"{calls} stage calls per mode, {ROUND} per sample")
    print(f"{'mode':14}{'median us':>11}{'p95 us':>9}{'vs off':>8}")
    for name, values in results.items():
        median = statistics.median(values)
        print(f"{name:14}{median:11.2f}{p95(values):9.2f}{median / off:7.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    asyncio.run(main(parser.parse_args().calls))
