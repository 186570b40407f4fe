"""The gateway's full trust pipeline side by side with LiteLLM's proxy, on one scripted upstream.

Three processes on loopback, started here:

- one scripted OpenAI-compatible upstream (``gateway/testing/openai_server.py``) that answers at
  once with a five-claim cited answer: quoting the passages when the gateway sent some, else a fixed
  five-claim answer of the same shape (what LiteLLM passes through);
- LiteLLM's proxy (``litellm --config``, one worker, auth on via a master key), installed in its own
  virtual environment (``--venv``, created with ``pip install 'litellm[proxy]'`` when missing);
- the gateway (``trust-gateway serve``, auth on via a hashed client key; triage, hybrid retrieval over
  the bundled corpus, the verification cascade, badges and the SQLite audit all on).

Each round measures, interleaved so that background load hits every system alike:
concurrency 1: one request to the upstream directly, one through LiteLLM, one through the gateway, in
rotating order; "added" is a request's latency minus the median direct latency of the round (the
gateway also reports its own held time minus upstream time from ``Server-Timing``).
concurrency 16: the same number of requests through LiteLLM and the gateway, alternating which goes
first; requests/s and CPU milliseconds per request (read from /proc for each server process, and
for the upstream and this client together), and from them the requests/s each proxy would reach if
every core were busy: the ceiling that more worker processes could approach, no further.
The figures printed are medians over rounds; the load average is printed with each round because
the machine may be shared. A bench, never run in CI; no test asserts a timing.

Usage:
    .venv/bin/python bench/bench_vs_litellm.py [--venv /tmp/litellm-venv] [--rounds 3] [--requests 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.bench_gateway import REPEAT, five_claim_answer, next_question, percentile  # noqa: E402
from bench.load_test import CLIENT_KEY, cpu_seconds, start_gateway  # noqa: E402
from gateway.testing import (  # noqa: E402
    Reply,
    ScriptedUpstream,
    contract_answer,
    free_port,
)

MASTER_KEY = "sk-bench-litellm-master"
CORES = len(os.sched_getaffinity(0))
MODEL = "bench-model"
FIXED_SENTENCES = [
    "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours",
    "Do not take more than 4 g of paracetamol in 24 hours",
    "Ibuprofen can irritate the stomach lining",
    "Eye drops are usually used for several weeks after cataract surgery",
    "High blood pressure is often treated with lifestyle changes and medicines",
]


def any_answer(body: dict[str, Any]) -> Reply:
    """The gateway's requests carry passages to quote; a passed-through request gets a fixed answer."""
    if any(str(m.get("content", "")).startswith("Passages:") for m in body.get("messages", [])):
        return five_claim_answer(body)
    answer = " ".join(f"{s} [1]." for s in FIXED_SENTENCES)
    return Reply(content=contract_answer(answer, [(s, [1], s) for s in FIXED_SENTENCES]))


def serve_upstream(port: int) -> None:
    """Entry point of the upstream subprocess (``--serve-upstream PORT``)."""
    import uvicorn

    scripted = ScriptedUpstream()
    scripted.responder = any_answer
    scripted.requests = _Discard()  # the bench sends thousands; keep memory flat
    scripted.headers = _Discard()
    uvicorn.run(scripted.app(), host="127.0.0.1", port=port, log_level="warning", access_log=False)


class _Discard(list[Any]):
    def append(self, item: Any) -> None:
        return None


# --- processes ---------------------------------------------------------------------------------


def ensure_litellm(venv: Path) -> Path:
    executable = venv / "bin" / "litellm"
    if not executable.exists():
        print(f"installing litellm[proxy] into {venv} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "litellm[proxy]"], check=True)
    version = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import importlib.metadata as m; print(m.version('litellm'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    print(f"litellm {version} from {venv}", flush=True)
    return executable


def wait_ready(url: str, process: subprocess.Popen[bytes], log: Path, headers: dict[str, str]) -> None:
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url} exited ({process.returncode}); see {log}")
        try:
            if httpx.get(url, timeout=2, headers=headers).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not become ready; see {log}")


def start_upstream(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    log = tmp / "upstream.log"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, str(Path(__file__).resolve()), "--serve-upstream", str(port)]
    process = subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    wait_ready(f"http://127.0.0.1:{port}/", process, log, {})
    return process, url


def start_litellm(executable: Path, tmp: Path, upstream_url: str) -> tuple[subprocess.Popen[bytes], str]:
    config = tmp / "litellm.yaml"
    config.write_text(
        "model_list:\n"
        f"  - model_name: {MODEL}\n"
        "    litellm_params:\n"
        f"      model: openai/{MODEL}\n"
        f"      api_base: {upstream_url}\n"
        "      api_key: not-needed\n"
        "litellm_settings:\n"
        "  telemetry: false\n"
        "  drop_params: true\n"
        "general_settings:\n"
        f"  master_key: {MASTER_KEY}\n",
        encoding="utf-8",
    )
    port = free_port()
    log = tmp / "litellm.log"
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_LOG": "ERROR",
        "LITELLM_TELEMETRY": "False",
        "PYTHONPATH": "",
    }
    command = [str(executable), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    command += ["--num_workers", "1"]
    process = subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_ready(f"{url}/health/liveliness", process, log, {})
    return process, url


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# --- measurement -------------------------------------------------------------------------------


@dataclass
class Target:
    name: str
    url: str
    headers: dict[str, str]
    pid: int | None = None
    totals: list[float] = field(default_factory=list)
    held_added: list[float] = field(default_factory=list)
    stages: dict[str, list[float]] = field(default_factory=dict)
    """Server-Timing entries at concurrency 1, by name (the gateway only)."""
    rps16: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    around_cpu_ms: list[float] = field(default_factory=list)
    """CPU ms per request, at concurrency 16, of the rest of the bench: the upstream and this client."""
    added: list[float] = field(default_factory=list)


def body_for(question: str) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": question}]}


def timed_post(client: httpx.Client, target: Target, question: str) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    response = client.post(target.url, json=body_for(question), headers=target.headers)
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise RuntimeError(f"{target.name}: HTTP {response.status_code}: {response.text[:300]}")
    return elapsed, response


def server_ms(header: str, name: str) -> float:
    match = re.search(rf"{name};dur=([\d.]+)", header)
    return float(match.group(1)) if match else 0.0


def sequential_round(client: httpx.Client, direct: Target, targets: list[Target], n: int) -> None:
    """Concurrency 1, interleaved: direct, LiteLLM and gateway take turns, in rotating order."""
    everyone = [direct, *targets]
    round_totals: dict[str, list[float]] = {t.name: [] for t in everyone}
    for i in range(n):
        question = next_question()  # the same question to each system in this turn
        for k in range(len(everyone)):
            target = everyone[(i + k) % len(everyone)]
            elapsed, response = timed_post(client, target, question)
            round_totals[target.name].append(elapsed)
            header = response.headers.get("server-timing")
            if header:
                target.held_added.append(server_ms(header, "total") - server_ms(header, "upstream"))
                for name, dur in re.findall(r"(\w+);dur=([\d.]+)", header):
                    target.stages.setdefault(name, []).append(float(dur))
    base = statistics.median(round_totals[direct.name])
    direct.totals += round_totals[direct.name]
    for target in targets:
        target.totals += round_totals[target.name]
        target.added += [t - base for t in round_totals[target.name]]


async def concurrent_run(target: Target, concurrency: int, n: int) -> float:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=120, headers=target.headers, limits=limits) as client:
        pending = [next_question() for _ in range(n)]

        async def worker() -> None:
            while pending:
                i = pending.pop()
                response = await client.post(target.url, json=body_for(i))
                if response.status_code != 200:
                    raise RuntimeError(f"{target.name}: HTTP {response.status_code}: {response.text[:300]}")

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return n / (time.perf_counter() - started)


def throughput_round(targets: list[Target], concurrency: int, n: int, first: int, upstream_pid: int) -> None:
    for k in range(len(targets)):
        target = targets[(first + k) % len(targets)]
        cpu_before = cpu_seconds(target.pid) if target.pid else 0.0
        around_before = cpu_seconds(upstream_pid) + time.process_time()
        target.rps16.append(asyncio.run(concurrent_run(target, concurrency, n)))
        if target.pid:
            target.cpu_ms.append((cpu_seconds(target.pid) - cpu_before) * 1000 / n)
        target.around_cpu_ms.append(
            (cpu_seconds(upstream_pid) + time.process_time() - around_before) * 1000 / n
        )


def report(
    direct: Target, litellm: Target, gateway: Target, concurrency: int, loads: list[str]
) -> dict[str, Any]:
    def med(values: list[float]) -> float:
        return statistics.median(values) if values else float("nan")

    def ceiling(t: Target) -> float:
        """The most requests/s this machine's cores could give with every one of them busy."""
        return CORES * 1000 / (med(t.cpu_ms) + med(t.around_cpu_ms))

    rows: list[tuple[str, Callable[[Target], str]]] = [
        ("added median ms (c=1)", lambda t: f"{med(t.added):.1f}"),
        ("added p95 ms (c=1)", lambda t: f"{percentile(t.added, 0.95):.1f}"),
        ("total median ms (c=1)", lambda t: f"{med(t.totals):.1f}"),
        (f"requests/s (c={concurrency})", lambda t: f"{med(t.rps16):.1f}"),
        (f"CPU ms per request (c={concurrency})", lambda t: f"{med(t.cpu_ms):.1f}"),
        (f"  + upstream and client (c={concurrency})", lambda t: f"{med(t.around_cpu_ms):.1f}"),
        (f"  req/s if {CORES} cores were all busy", lambda t: f"{ceiling(t):.1f}"),
    ]
    print(
        f"\nupstream direct: median {med(direct.totals):.1f} ms, p95 {percentile(direct.totals, 0.95):.1f} ms"
    )
    print(f"load average per round: {'; '.join(loads)}")
    print(f"{'measure':34} {'LiteLLM':>10} {'gateway':>10} {'gateway/LiteLLM':>16}")
    for label, cell in rows:
        a, b = cell(litellm), cell(gateway)
        ratio = float(b) / float(a) if float(a) else float("nan")
        print(f"{label:34} {a:>10} {b:>10} {ratio:>15.2f}x")
    if gateway.held_added:
        print(
            f"gateway Server-Timing total - upstream (c=1): median {med(gateway.held_added):.1f} ms, "
            f"p95 {percentile(gateway.held_added, 0.95):.1f} ms"
        )
    if gateway.stages:
        medians = ", ".join(f"{name} {med(values):.1f}" for name, values in gateway.stages.items())
        print(f"gateway Server-Timing medians ms (c=1): {medians}")
    per_round = ", ".join(f"{a:.1f}/{b:.1f}" for a, b in zip(litellm.rps16, gateway.rps16, strict=True))
    print(f"requests/s per round (LiteLLM/gateway): {per_round}")
    added_ratio = med(gateway.added) / med(litellm.added)
    rps_ratio = med(gateway.rps16) / med(litellm.rps16)
    print(
        f"targets: gateway-added median <= 1.5x LiteLLM's: {'met' if added_ratio <= 1.5 else 'NOT met'} "
        f"({added_ratio:.2f}x); more requests/s than LiteLLM at c={concurrency}: "
        f"{'met' if rps_ratio > 1 else 'NOT met'} ({rps_ratio:.2f}x)"
    )
    return {
        "litellm_added_median_ms": med(litellm.added),
        "gateway_added_median_ms": med(gateway.added),
        "litellm_added_p95_ms": percentile(litellm.added, 0.95),
        "gateway_added_p95_ms": percentile(gateway.added, 0.95),
        "litellm_rps": med(litellm.rps16),
        "gateway_rps": med(gateway.rps16),
        "litellm_cpu_ms": med(litellm.cpu_ms),
        "gateway_cpu_ms": med(gateway.cpu_ms),
        "litellm_around_cpu_ms": med(litellm.around_cpu_ms),
        "gateway_around_cpu_ms": med(gateway.around_cpu_ms),
        "cores": CORES,
        "loads": loads,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=Path("/tmp/litellm-venv"), help="LiteLLM's own venv")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=100, help="per system per round at concurrency 1")
    parser.add_argument("--throughput-requests", type=int, default=320, help="per system per round")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--knowledge", type=Path, default=REPO / "knowledge")
    parser.add_argument("--env", action="append", default=[], help="GATEWAY_X=value for the gateway")
    parser.add_argument("--repeat-questions", action="store_true", help="cycle 5 questions (cache hits)")
    parser.add_argument("--serve-upstream", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream is not None:
        serve_upstream(args.serve_upstream)
        return 0

    REPEAT["questions"] = args.repeat_questions
    for item in args.env:
        key, _, value = item.partition("=")
        if not key.startswith("GATEWAY_"):
            parser.error(f"--env {item!r}: only GATEWAY_* variables")
        os.environ[key] = value
    executable = ensure_litellm(args.venv)
    processes: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        try:
            upstream, upstream_url = start_upstream(tmp)
            processes.append(upstream)
            print(f"upstream {upstream_url}; starting LiteLLM and the gateway ...", flush=True)
            proxy, proxy_url = start_litellm(executable, tmp, upstream_url)
            processes.append(proxy)
            (tmp / "gateway").mkdir()
            gateway_process, gateway_url = start_gateway(
                tmp / "gateway", upstream_url, args.knowledge, tmp / "gateway.log"
            )
            processes.append(gateway_process)
            direct = Target("direct", f"{upstream_url}/chat/completions", {})
            litellm = Target(
                "LiteLLM",
                f"{proxy_url}/v1/chat/completions",
                {"Authorization": f"Bearer {MASTER_KEY}"},
                proxy.pid,
            )
            gateway = Target(
                "gateway",
                f"{gateway_url}/v1/chat/completions",
                {"Authorization": f"Bearer {CLIENT_KEY}"},
                gateway_process.pid,
            )
            with httpx.Client(timeout=120) as client:
                for _ in range(20):  # warm-up: models, connections
                    question = next_question()
                    for target in (direct, litellm, gateway):
                        timed_post(client, target, question)
                summary = gateway_answer_summary(client, gateway, next_question())
                print(f"gateway answers: {summary}", flush=True)
                loads: list[str] = []
                for r in range(args.rounds):
                    start_load = loadavg()
                    sequential_round(client, direct, [litellm, gateway], args.requests)
                    throughput_round(
                        [litellm, gateway], args.concurrency, args.throughput_requests, r, upstream.pid
                    )
                    loads.append(f"{start_load} -> {loadavg()}")
                    print(
                        f"round {r + 1}: c16 req/s LiteLLM {litellm.rps16[-1]:.1f}, gateway "
                        f"{gateway.rps16[-1]:.1f}; load {loads[-1]}",
                        flush=True,
                    )
            print(json.dumps(report(direct, litellm, gateway, args.concurrency, loads)))
        finally:
            for process in reversed(processes):
                stop(process)
    return 0


def gateway_answer_summary(client: httpx.Client, gateway: Target, question: str) -> str:
    """Proof that the full pipeline ran: claims verified, badges attached, not refused."""
    _, response = timed_post(client, gateway, question)
    trust = response.json().get("trust", {})
    summary = trust.get("summary", {})
    badges = sum(1 for claim in trust.get("claims", []) if claim.get("badge"))
    return (
        f"{summary.get('claims')} claims, {summary.get('supported')} supported, {badges} badged, "
        f"refused={summary.get('refused')}; Server-Timing: {response.headers.get('server-timing')}"
    )


if __name__ == "__main__":
    sys.exit(main())
