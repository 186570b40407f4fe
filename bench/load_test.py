"""Bounded load and soak test of the gateway on loopback.

The gateway runs as a real subprocess (``trust-gateway serve``) with a client key file, in front of a
scripted OpenAI-compatible upstream (in this process) that answers instantly with a five-claim cited
answer quoting the passages it was sent (``bench_gateway.five_claim_answer``). Clients are asyncio
tasks with httpx; a share of them ask for SSE streams.

load (default): ``--clients`` concurrent clients for ``--duration`` seconds; prints throughput,
    p50/p95/p99/p99.9/max latency, status counts, 5xx count, and checks that the audit database holds exactly
    one row per request sent (no lost audit record).
soak (``--soak``): the same load for longer, sampling the gateway's RSS (``/proc/<pid>/status``)
    every ``--sample-every`` seconds; prints the samples and the slope (MB per minute) fitted over the
    samples after the first quarter (warm-up: model, caches, allocator arenas).

replicas (``--replicas N``, N >= 2): the replicated deployment on loopback: a Chroma server, a
    PostgreSQL audit trail and Redis rate limits (real servers, started as the tests start them),
    and N ``trust-gateway serve`` processes sharing them. The load runs first against one replica
    (the baseline, over the same shared services), then spread round-robin over all N; prints both
    side by side with the throughput ratio, and checks the shared audit trail lost nothing.

Usage:
    .venv/bin/python bench/load_test.py                       # 64 clients x 60 s
    .venv/bin/python bench/load_test.py --clients 16 --duration 10
    .venv/bin/python bench/load_test.py --soak --duration 600 --sample-every 10
    .venv/bin/python bench/load_test.py --replicas 2 --clients 16 --duration 20
Exit status 1 when a 5xx was seen or an audit record is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

QUESTIONS = [
    "How much paracetamol can an adult take?",
    "What are the side effects of ibuprofen?",
    "How should I use eye drops after cataract surgery?",
    "What helps with hay fever symptoms?",
    "Who should not take amoxicillin?",
]
CLIENT_KEY = "load-test-client-key"


@dataclass
class LoadResult:
    sent: int = 0
    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    refused: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 500)

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _one(client: httpx.AsyncClient, url: str, index: int, stream: bool, result: LoadResult) -> None:
    body = {
        "model": "load",
        "stream": stream,
        "messages": [{"role": "user", "content": QUESTIONS[index % len(QUESTIONS)]}],
    }
    started = time.perf_counter()
    result.sent += 1
    try:
        if stream:
            async with client.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
                trust: dict[str, Any] = {}
                async for line in response.aiter_lines():
                    if line.startswith("data: {"):
                        trust = json.loads(line[6:]).get("trust", trust)
                status = response.status_code
        else:
            response = await client.post(f"{url}/v1/chat/completions", json=body)
            status = response.status_code
            trust = response.json().get("trust", {}) if status == 200 else {}
    except httpx.HTTPError as err:
        result.errors[type(err).__name__] += 1
        return
    result.latencies.append(time.perf_counter() - started)
    result.statuses[status] += 1
    if trust.get("summary", {}).get("refused"):
        result.refused += 1
        result.reasons[str(trust["summary"].get("reason"))] += 1


async def run_load(
    url: str | list[str], clients: int, duration: float, key: str | None = None, stream_share: float = 0.25
) -> LoadResult:
    """``clients`` workers posting chat requests back to back for ``duration`` seconds (spread
    round-robin when ``url`` lists several replicas)."""
    urls = [url] if isinstance(url, str) else url
    result = LoadResult()
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    stream_every = round(1 / stream_share) if stream_share > 0 else 0
    async with httpx.AsyncClient(timeout=120, headers=headers, limits=limits) as client:
        deadline = time.perf_counter() + duration
        counter = iter(range(10**9))

        async def worker() -> None:
            while time.perf_counter() < deadline:
                index = next(counter)
                target = urls[index % len(urls)]
                await _one(client, target, index, bool(stream_every) and index % stream_every == 0, result)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        result.seconds = time.perf_counter() - started
    return result


def audit_rows(path: Path) -> int:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return int(db.execute("SELECT COUNT(*) FROM requests").fetchone()[0])


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its descendants (LiteLLM may run its server in a child)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for proc in [pid, *_descendants(pid)]:
        try:
            fields = Path(f"/proc/{proc}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def _descendants(pid: int) -> list[int]:
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    found = [int(c) for c in children]
    for child in list(found):
        found += _descendants(child)
    return found


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def slope_mb_per_min(samples: list[tuple[float, float]]) -> float:
    """Least-squares slope of RSS over time, in MB per minute."""
    if len(samples) < 2:
        return 0.0
    xs = [t for t, _ in samples]
    ys = [m for _, m in samples]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return 60 * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_gateway(
    data: Path, upstream_url: str, knowledge: Path, log: Path
) -> tuple[subprocess.Popen[bytes], str]:
    from gateway.web.client_keys import hash_key

    keys = data / "api-keys.txt"
    keys.write_text(f"load-test:{hash_key(CLIENT_KEY)}\n", encoding="utf-8")
    port = _free_port()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "GATEWAY_DATA_DIR": str(data),
        "GATEWAY_KNOWLEDGE_DIR": str(knowledge),
        "GATEWAY_UPSTREAM_BASE_URL": upstream_url,
        "GATEWAY_UPSTREAM_RETRIES": "0",
        "GATEWAY_API_KEYS_FILE": str(keys),
        "GATEWAY_RATE_LIMIT_PER_MINUTE": "1000000",
        "GATEWAY_RATE_LIMIT_BURST": "100000",
    }
    command = [str(Path(sys.executable).parent / "trust-gateway"), "serve", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the gateway exited ({process.returncode}); see {log}")
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    process.kill()
    raise RuntimeError("the gateway did not become ready")


def print_result(label: str, result: LoadResult, clients: int) -> None:
    ok = result.statuses.get(200, 0)
    print(f"\n{label}: {clients} clients, {result.seconds:.1f} s, {result.sent} requests sent")
    print(f"  throughput         {ok / result.seconds:8.1f} answered requests/s")
    print(
        f"  latency ms         p50 {result.percentile(0.5) * 1000:7.1f}   p95 "
        f"{result.percentile(0.95) * 1000:7.1f}   p99 {result.percentile(0.99) * 1000:7.1f}   p99.9 "
        f"{result.percentile(0.999) * 1000:7.1f}   max {result.percentile(1.0) * 1000:7.1f}"
    )
    print(
        f"  statuses           {dict(sorted(result.statuses.items()))}   client errors {dict(result.errors)}"
    )
    print(f"  refusals           {result.refused} (safe refusals) by reason {dict(result.reasons)}")
    print(f"  5xx                {result.server_errors}")


def replicated(args: argparse.Namespace) -> int:
    """One replica, then ``args.replicas``, over one Chroma server, PostgreSQL and Redis."""
    import psycopg

    from bench.bench_gateway import five_claim_answer
    from gateway.testing import running_upstream
    from gateway.web.client_keys import hash_key
    from tests.support.ports import stop_process
    from tests.support.replicas import running_chroma, start_replica, wait_ready
    from tests.support.services import running_postgres, running_redis

    with (
        tempfile.TemporaryDirectory() as tmp,
        running_postgres() as postgres,
        running_redis() as redis_server,
        running_chroma(Path(tmp)) as chroma,
        running_upstream() as (scripted, upstream_url),
    ):
        scripted.responder = five_claim_answer
        data = Path(tmp)
        keys = data / "api-keys.txt"
        keys.write_text(f"load-test:{hash_key(CLIENT_KEY)}\n", encoding="utf-8")
        common = {
            "GATEWAY_CHROMA_URL": chroma.url,
            "GATEWAY_AUDIT_URL": postgres.url(),
            "GATEWAY_REDIS_URL": redis_server.url,
            "GATEWAY_UPSTREAM_BASE_URL": upstream_url,
            "GATEWAY_UPSTREAM_RETRIES": "0",
            "GATEWAY_API_KEYS_FILE": str(keys),
            "GATEWAY_RATE_LIMIT_PER_MINUTE": "1000000",
            "GATEWAY_RATE_LIMIT_BURST": "100000",
            "GATEWAY_KNOWLEDGE_DIR": str(args.knowledge),
        }
        processes = []
        try:
            for n in range(args.replicas):
                env = {**common, "GATEWAY_DATA_DIR": str(data / f"replica{n}")}
                if n:
                    env["GATEWAY_BUILD_INDEX_IF_MISSING"] = "false"
                print(f"starting replica {n} ...", flush=True)
                processes.append((*start_replica(env, data / f"replica{n}.log"), data / f"replica{n}.log"))
                if n == 0:  # the first replica ingests; the others start once the store is filled
                    wait_ready(*processes[0])
            for process, url, log in processes[1:]:
                wait_ready(process, url, log)
            urls = [url for _, url, _ in processes]

            def audit_count() -> int:
                with psycopg.connect(postgres.url()) as conn:
                    row = conn.execute("SELECT COUNT(*) FROM audit_requests").fetchone()
                return int(row[0]) if row else 0

            asyncio.run(run_load(urls, 4, 3.0, CLIENT_KEY, args.stream_share))  # warm-up, every replica
            before = audit_count()
            one = asyncio.run(run_load(urls[:1], args.clients, args.duration, CLIENT_KEY, args.stream_share))
            many = asyncio.run(run_load(urls, args.clients, args.duration, CLIENT_KEY, args.stream_share))
            rows = audit_count() - before
        finally:
            for process, _, _ in processes:
                stop_process(process)
    print_result("baseline: 1 replica (shared Chroma, PostgreSQL, Redis)", one, args.clients)
    print_result(f"{args.replicas} replicas (same services, round-robin)", many, args.clients)
    rps_one = one.statuses.get(200, 0) / one.seconds
    rps_many = many.statuses.get(200, 0) / many.seconds
    print(f"\n  throughput ratio   {rps_many / rps_one:.2f}x ({args.replicas} replicas / 1 replica)")
    print(
        f"  p50 ms             {one.percentile(0.5) * 1000:.1f} -> {many.percentile(0.5) * 1000:.1f}   "
        f"p95 ms {one.percentile(0.95) * 1000:.1f} -> {many.percentile(0.95) * 1000:.1f}"
    )
    sent = one.sent + many.sent
    verdict = "ok" if rows == sent else "LOST"
    print(f"  audit rows         {rows} in PostgreSQL for {sent} requests sent ({verdict})")
    print(f"  load average       {os.getloadavg()}")
    summary = {
        "replicas": args.replicas,
        "clients": args.clients,
        "rps_1": round(rps_one, 1),
        f"rps_{args.replicas}": round(rps_many, 1),
        "ratio": round(rps_many / rps_one, 2),
        "p95_ms_1": round(one.percentile(0.95) * 1000, 1),
        f"p95_ms_{args.replicas}": round(many.percentile(0.95) * 1000, 1),
        "server_errors": one.server_errors + many.server_errors,
        "audit_rows": rows,
        "sent": sent,
    }
    print(json.dumps(summary))
    failed = one.server_errors + many.server_errors or one.errors or many.errors
    return 0 if not failed and rows == sent else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load (soak: total)")
    parser.add_argument("--soak", action="store_true", help="sample the gateway's RSS over the run")
    parser.add_argument("--sample-every", type=float, default=10.0, help="soak: seconds between samples")
    parser.add_argument("--stream-share", type=float, default=0.25, help="share of streamed requests")
    parser.add_argument(
        "--knowledge",
        type=Path,
        default=REPO / "tests" / "fixtures" / "kb",
        help="corpus to index (default: the 5-document test corpus; the bundled one is knowledge/)",
    )
    parser.add_argument(
        "--index",
        type=Path,
        help="a data directory with an index built elsewhere (e.g. bench_patient_questions.py --subset "
        "2000 --data-dir DIR), copied and served with --knowledge added to it",
    )
    parser.add_argument(
        "--replicas", type=int, default=1, help="N >= 2: N gateways over shared Chroma/PostgreSQL/Redis"
    )
    args = parser.parse_args()
    if args.replicas > 1:
        return replicated(args)

    from bench.bench_gateway import five_claim_answer
    from gateway.logs import configure_logging
    from gateway.testing import running_upstream

    configure_logging("WARNING")
    with tempfile.TemporaryDirectory() as tmp, running_upstream() as (scripted, upstream_url):
        scripted.responder = five_claim_answer
        data = Path(tmp)
        if args.index:
            shutil.copytree(args.index, data, dirs_exist_ok=True)
        print(f"starting trust-gateway serve over {args.knowledge} ...", flush=True)
        process, url = start_gateway(data, upstream_url, args.knowledge, data / "gateway.log")
        try:
            # warm-up, not counted in the audit check below
            asyncio.run(run_load(url, 4, 3.0, CLIENT_KEY, args.stream_share))
            warm_rows = audit_rows(data / "audit.sqlite3")
            rss_start = rss_mb(process.pid)
            cpu_start = cpu_seconds(process.pid)
            samples: list[tuple[float, float]] = []
            total = LoadResult()
            started = time.perf_counter()
            window = args.sample_every if args.soak else args.duration
            while time.perf_counter() - started < args.duration - 1e-6:
                chunk = min(window, args.duration - (time.perf_counter() - started))
                part = asyncio.run(run_load(url, args.clients, chunk, CLIENT_KEY, args.stream_share))
                total.sent += part.sent
                total.latencies += part.latencies
                total.statuses.update(part.statuses)
                total.errors.update(part.errors)
                total.refused += part.refused
                total.reasons.update(part.reasons)
                total.seconds += part.seconds
                samples.append((time.perf_counter() - started, rss_mb(process.pid)))
                if args.soak:
                    print(
                        f"  t={samples[-1][0]:7.1f}s  rss={samples[-1][1]:8.1f} MB  sent={total.sent}",
                        flush=True,
                    )
            rows = audit_rows(data / "audit.sqlite3") - warm_rows
            cpu_ms = (cpu_seconds(process.pid) - cpu_start) * 1000 / max(1, total.sent)
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
    print_result("soak" if args.soak else "load", total, args.clients)
    verdict = "ok" if rows == total.sent else "LOST"
    print(f"  audit rows         {rows} for {total.sent} requests sent ({verdict})")
    print(f"  gateway RSS        start {rss_start:.1f} MB, end {samples[-1][1]:.1f} MB")
    print(f"  gateway CPU        {cpu_ms:.1f} ms per request")
    summary: dict[str, Any] = {
        "clients": args.clients,
        "seconds": round(total.seconds, 1),
        "sent": total.sent,
        "rps": round(total.statuses.get(200, 0) / total.seconds, 1),
        "p50_ms": round(total.percentile(0.5) * 1000, 1),
        "p95_ms": round(total.percentile(0.95) * 1000, 1),
        "p99_ms": round(total.percentile(0.99) * 1000, 1),
        "p999_ms": round(total.percentile(0.999) * 1000, 1),
        "max_ms": round(total.percentile(1.0) * 1000, 1),
        "server_errors": total.server_errors,
        "audit_rows": rows,
        "rss_start_mb": round(rss_start, 1),
        "rss_end_mb": round(samples[-1][1], 1),
        "cpu_ms_per_request": round(cpu_ms, 1),
    }
    if args.soak:
        steady = samples[len(samples) // 4 :]
        summary["rss_slope_mb_per_min"] = round(slope_mb_per_min(steady), 3)
        print(
            f"  RSS slope          {summary['rss_slope_mb_per_min']:+.3f} MB/min over the last 3/4 of samples"
        )
    print(json.dumps(summary))
    return 0 if total.server_errors == 0 and rows == total.sent and not total.errors else 1


if __name__ == "__main__":
    sys.exit(main())
