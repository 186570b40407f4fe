"""Gateway overhead benchmark: what the gateway adds on top of the model, and its throughput.

Runs a scripted OpenAI-compatible upstream on loopback that answers instantly with a five-claim cited
answer (quoting the passages it was sent), then measures over real HTTP with the openai SDK:

- baseline: the same request straight to the upstream (no gateway);
- gateway: total latency; gateway-added latency as the gateway reports it (``Server-Timing`` total,
  the whole time it held the request, minus upstream) and as the client sees it (client total minus
  the upstream time from ``Server-Timing``: adds the socket and HTTP work around the handler);
- requests per second at concurrency 1 and 16.

Usage: .venv/bin/python bench/bench_gateway.py [--requests 100] [--knowledge DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.bootstrap import build_services
from gateway.logs import configure_logging
from gateway.resources import bundled
from gateway.settings import Settings
from gateway.testing import Reply, contract_answer, running_upstream
from gateway.text import split_sentences
from tests.support.stack import running_gateway

QUESTIONS = [
    "How much paracetamol can an adult take?",
    "What are the symptoms of type 2 diabetes?",
    "How should I use eye drops after cataract surgery?",
    "What are the side effects of ibuprofen?",
    "How is high blood pressure treated?",
]
CLAIMS = 5
_INDEX = itertools.count()
REPEAT = {"questions": False}
"""``--repeat-questions``: cycle the five questions (the embedding cache then serves them)."""


def next_question() -> str:
    """A question never asked before in this run (unless ``--repeat-questions``): no cache hits."""
    i = next(_INDEX)
    base = QUESTIONS[i % len(QUESTIONS)]
    if REPEAT["questions"]:
        return base
    return f"I am {18 + i % 70} years old and weigh {45 + (i // 70) % 60} kg. {base}"


_PASSAGE = re.compile(r"^\[(\d+)\] .*?\n(.*?)(?=\n\n\[\d+\] |\Z)", re.MULTILINE | re.DOTALL)


def five_claim_answer(body: dict[str, Any]) -> Reply:
    """Quote the first sentences of the passages the gateway sent, five claims in all."""
    passages = next(m["content"] for m in body["messages"] if m["content"].startswith("Passages:"))
    sentences: list[tuple[int, str]] = []
    for match in _PASSAGE.finditer(passages):
        for sentence in split_sentences(match.group(2))[:2]:
            sentences.append((int(match.group(1)), sentence))
    chosen = sentences[:CLAIMS]
    answer = " ".join(f"{s.rstrip('.')} [{n}]." for n, s in chosen)
    return Reply(content=contract_answer(answer, [(s, [n], s) for n, s in chosen]))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timing_ms(header: str, name: str) -> float:
    match = re.search(rf"\b{name};dur=([\d.]+)", header)
    return float(match.group(1)) if match else 0.0


def upstream_ms(header: str) -> float:
    return timing_ms(header, "upstream")


def chat_body(question: str) -> dict[str, Any]:
    return {"model": "bench", "messages": [{"role": "user", "content": question}]}


def sequential(client: httpx.Client, url: str, n: int) -> tuple[list[float], list[float], list[float], int]:
    totals, added, held, claims = [], [], [], 0
    for _ in range(n):
        started = time.perf_counter()
        response = client.post(url, json=chat_body(next_question()))
        total = (time.perf_counter() - started) * 1000
        response.raise_for_status()
        totals.append(total)
        header = response.headers.get("server-timing", "")
        added.append(total - upstream_ms(header))
        held.append(timing_ms(header, "total") - upstream_ms(header))
        claims = max(claims, response.json().get("trust", {}).get("summary", {}).get("claims", 0))
    return totals, added, held, claims


async def throughput(url: str, concurrency: int, n: int) -> float:
    async with httpx.AsyncClient(timeout=120) as client:
        queue = list(range(n))

        async def worker() -> None:
            while queue:
                queue.pop()
                response = await client.post(url, json=chat_body(next_question()))
                response.raise_for_status()

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return n / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--knowledge", type=Path, default=None)
    parser.add_argument("--repeat-questions", action="store_true", help="cycle 5 questions (cache hits)")
    args = parser.parse_args()
    REPEAT["questions"] = args.repeat_questions
    configure_logging("WARNING")
    with tempfile.TemporaryDirectory() as data, running_upstream() as (scripted, upstream_url):
        scripted.responder = five_claim_answer
        settings = Settings(
            data_dir=Path(data),
            knowledge_dir=args.knowledge or bundled("knowledge"),
            upstream_base_url=upstream_url,
            upstream_retries=0,
        )
        print(f"building services over {settings.knowledge_dir} ...", flush=True)
        services = build_services(settings)
        with running_gateway(services) as gateway_url, httpx.Client(timeout=60) as client:
            direct = f"{upstream_url}/chat/completions"
            gated = f"{gateway_url}/v1/chat/completions"
            for _ in range(5):  # warm-up: model, caches, connections
                client.post(gated, json=chat_body(next_question())).raise_for_status()
            base = []
            for i in range(args.requests):
                started = time.perf_counter()
                client.post(
                    direct,
                    json={
                        **chat_body(QUESTIONS[i % 5]),
                        "messages": [
                            {"role": "system", "content": "Passages:\n\n[1] T (O)\nA sentence here."},
                            {"role": "user", "content": QUESTIONS[i % 5]},
                        ],
                    },
                ).raise_for_status()
                base.append((time.perf_counter() - started) * 1000)
            totals, added, held, claims = sequential(client, gated, args.requests)
            rps1 = asyncio.run(throughput(gated, 1, args.requests))
            rps16 = asyncio.run(throughput(gated, 16, args.requests))
    rows = {
        "upstream direct (baseline) ms": (statistics.median(base), percentile(base, 0.95)),
        "gateway total ms": (statistics.median(totals), percentile(totals, 0.95)),
        "gateway-added ms (Server-Timing)": (statistics.median(held), percentile(held, 0.95)),
        "gateway-added ms (client total - upstream)": (statistics.median(added), percentile(added, 0.95)),
    }
    print(
        f"\n{args.requests} requests, {claims}-claim answers, upstream={services.drafter.name}, "
        f"verifier={services.verifier.name}"
    )
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'measure':44} {'median':>9} {'p95':>9}")
    for name, (median, p95) in rows.items():
        print(f"{name:44} {median:9.1f} {p95:9.1f}")
    ratio = statistics.median(totals) / statistics.median(base)
    print(f"{'ratio gateway/direct (median)':44} {ratio:9.1f}x")
    print(f"{'requests/s at concurrency 1':44} {rps1:9.1f}")
    print(f"{'requests/s at concurrency 16':44} {rps16:9.1f}")
    print(
        json.dumps(
            {
                "added_median_ms": rows["gateway-added ms (Server-Timing)"][0],
                "added_p95_ms": rows["gateway-added ms (Server-Timing)"][1],
                "client_added_median_ms": rows["gateway-added ms (client total - upstream)"][0],
                "rps_c1": rps1,
                "rps_c16": rps16,
            }
        )
    )


if __name__ == "__main__":
    main()
