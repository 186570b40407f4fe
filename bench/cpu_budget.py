"""CPU budget of one request, per stage, measured on a serving gateway under load.

The gateway runs as ``trust-gateway serve`` (auth on, bundled corpus, full pipeline) in front of the
scripted upstream of ``bench_vs_litellm.py`` (its own process, answering at once with a five-claim
cited answer). While ``--concurrency`` clients send distinct questions for ``--duration`` seconds,
py-spy samples every thread of the gateway (idle threads are not sampled) and /proc gives the
process's CPU time. Each sampled stack is assigned to one stage by the innermost code it is running
(the rules in ``STAGES``); a stage's CPU per request is its share of the samples times the measured
CPU per request.

Usage (py-spy is a dev tool: ``.venv/bin/pip install py-spy``):
    .venv/bin/python bench/cpu_budget.py [--concurrency 16] [--duration 30] [--env GATEWAY_X=y ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.bench_gateway import next_question  # noqa: E402
from bench.bench_vs_litellm import (  # noqa: E402
    Target,
    concurrent_run,
    loadavg,
    start_upstream,
    stop,
    timed_post,
)
from bench.load_test import (  # noqa: E402
    CLIENT_KEY,
    cpu_seconds,
    start_gateway,
)

STAGES: list[tuple[str, tuple[str, ...]]] = [
    # (stage, substrings of a stack); the first rule with a match in the stack decides, so the more
    # specific code comes first (query encoding runs inside store.py; BM25 inside store.py too).
    (
        "triage",
        (
            "triage/decision.py",
            "triage/planning.py",
            "triage/emergency.py",
            "triage/rule_layer.py",
            "triage/policy.py",
        ),
    ),
    ("query encoding (MiniLM)", ("models/embedding.py",)),
    ("BM25", ("knowledge/lexical.py",)),
    ("Chroma / dense search", ("chromadb/", "_dense (")),
    (
        "retrieval (other)",
        (
            "knowledge/store.py",
            "knowledge/chroma_",
            "knowledge/records.py",
            "retrieval/retrieve.py",
            "knowledge/relevance",
        ),
    ),
    ("drafting I/O (openai SDK, httpx)", ("openai/", "gateway/models/", "drafting/model_upstream.py")),
    ("drafting (prompt, contract parse)", ("drafting/contract.py",)),
    ("splitting", ("claims/split.py",)),
    ("verification", ("verification/", "verification/verify.py", "gateway/checkonly/")),
    ("cleanup", ("cleanup/stage.py", "gateway/cleanup/")),
    ("badge", ("trust/badge.py", "gateway/trust/tiers.py")),
    ("audit + metrics + log", ("pipeline/recording.py", "gateway/audit/", "prometheus_client", "structlog")),
    ("JSON (response)", ("web/serializers.py", "encode_json", "msgspec")),
    (
        "request parsing + auth",
        ("web/chat_schema.py", "web/auth.py", "web/client_keys.py", "web/rate_limits.py"),
    ),
    ("HTTP + framework (uvicorn, litestar)", ("uvicorn/", "h11/", "httptools", "litestar/", "starlette/")),
    ("event loop (asyncio, threads)", ("asyncio/", "anyio/", "threading.py", "concurrent/futures")),
]


LOOP_IN_C = "event loop in C (uvloop, httptools) or waiting for a core"
"""Samples of the event-loop thread showing no Python frame above ``Runner.run``: C code of uvloop and
httptools, or a runnable thread that the kernel has not scheduled (py-spy counts it as active)."""


PARKED = "parked threads (waiting for work or a lock: no CPU)"
"""Samples whose innermost frame waits: a worker thread in ``Condition.wait`` or blocked on its work
queue (``_worker``). py-spy reports them as active (the wait is a C call it cannot tell from work), so
they are counted apart and left out of the CPU split; stop 26's budget had them in its event-loop row."""
PARKED_FRAMES = ("Condition.wait (", "Event.wait (", "_worker (")


def stage_of(stack: str) -> str:
    innermost = stack.rsplit(";", 1)[-1]
    if innermost.startswith(PARKED_FRAMES):
        return PARKED
    if innermost.startswith("Runner.run ("):
        return LOOP_IN_C
    for stage, needles in STAGES:
        if any(needle in stack for needle in needles):
            return stage
    return "other"


def read_samples(raw: Path) -> Counter[str]:
    """py-spy's raw (collapsed) output: ``frame;frame;... count`` per line, root first."""
    counts: Counter[str] = Counter()
    for line in raw.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, number = line.rpartition(" ")
        if stack and number.isdigit():
            counts[stage_of(stack)] += int(number)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of sampled load")
    parser.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    parser.add_argument("--knowledge", type=Path, default=REPO / "knowledge")
    parser.add_argument("--env", action="append", default=[], help="GATEWAY_X=value for the gateway")
    parser.add_argument(
        "--py-spy", default=shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    )
    parser.add_argument("--from-raw", type=Path, default=None, help="only classify this kept profile")
    parser.add_argument("--keep", type=Path, default=None, help="copy py-spy's raw stacks here")
    args = parser.parse_args()
    if args.from_raw:
        counts = read_samples(args.from_raw)
        total = sum(counts.values())
        for stage, n in counts.most_common():
            print(f"{stage:58} {n:8d} {n / total:7.1%}")
        return 0
    for item in args.env:
        key, _, value = item.partition("=")
        os.environ[key] = value

    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        upstream, upstream_url = start_upstream(tmp)
        (tmp / "gateway").mkdir()
        try:
            process, url = start_gateway(tmp / "gateway", upstream_url, args.knowledge, tmp / "gateway.log")
        except Exception:
            stop(upstream)
            raise
        try:
            gateway = Target(
                "gateway",
                f"{url}/v1/chat/completions",
                {"Authorization": f"Bearer {CLIENT_KEY}"},
                process.pid,
            )
            with httpx.Client(timeout=120) as client:
                for _ in range(20):
                    timed_post(client, gateway, next_question())
            raw = tmp / "profile.txt"
            load_before = loadavg()
            command = [args.py_spy, "record", "--pid", str(process.pid), "--rate", str(args.rate)]
            command += ["--format", "raw", "--nonblocking", "--duration", str(int(args.duration) + 2)]
            spy = subprocess.Popen(
                [*command, "--output", str(raw)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            time.sleep(1.0)  # py-spy attached
            cpu_before = cpu_seconds(process.pid)
            started = time.perf_counter()
            sent = 0
            while time.perf_counter() - started < args.duration:
                batch = args.concurrency * 8
                asyncio.run(concurrent_run(gateway, args.concurrency, batch))
                sent += batch
            seconds = time.perf_counter() - started
            cpu_ms = (cpu_seconds(process.pid) - cpu_before) * 1000 / sent
            _, err = spy.communicate(timeout=120)
            if spy.returncode != 0 or not raw.exists():
                raise RuntimeError(f"py-spy failed: {err.decode(errors='replace')[-500:]}")
            load_after = loadavg()
        finally:
            stop(process)
            stop(upstream)
        counts = read_samples(raw)
        if args.keep:
            shutil.copy(raw, args.keep)
    parked = counts.pop(PARKED, 0)
    total = sum(counts.values())
    print(
        f"\n{sent} requests at concurrency {args.concurrency} in {seconds:.1f} s: "
        f"{sent / seconds:.1f} req/s; "
        f"gateway CPU {cpu_ms:.1f} ms per request (/proc); {total} working samples ({parked} parked, left "
        f"out); "
        f"load {load_before} -> {load_after}"
    )
    print(f"{'stage':58} {'samples':>8} {'share':>7} {'CPU ms/request':>15}")
    for stage, _ in [*STAGES, (LOOP_IN_C, ()), ("other", ())]:
        n = counts.get(stage, 0)
        print(f"{stage:58} {n:8d} {n / total:7.1%} {cpu_ms * n / total:15.2f}")
    print(
        json.dumps(
            {
                "rps": round(sent / seconds, 1),
                "cpu_ms_per_request": round(cpu_ms, 2),
                "stages_ms": {s: round(cpu_ms * n / total, 2) for s, n in counts.most_common()},
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
