"""The upstream client alone: what one chat-completion call costs the gateway, old client against new.

One scripted OpenAI-compatible upstream runs in its own process (``bench_vs_litellm.py
--serve-upstream``, so its CPU is not counted here) and answers at once with the five-claim cited
answer it builds from the passages it was sent. In this process, on one event loop, each client makes
the same realistic draft request (the citation contract's system prompt, five retrieved passages of
the bundled paracetamol leaflet, the user's question and the strict JSON schema: about 6 kB) and
returns the reply's text. Per call, wall time (``time.perf_counter``) and CPU time
(``time.process_time``, this process only) are recorded; rounds interleave the clients in rotating
order so that background load hits each alike. A bench, never run in CI; no test asserts a timing.

Clients:
- ``old``: the openai SDK's ``chat.completions.create`` (typed request transform, pydantic
  ``ChatCompletion``): how ``OpenAIChatModel.complete`` called the upstream until the SDK's generic
  ``post`` replaced it (kept here, without the error translation, as the baseline);
- ``new``: ``OpenAIChatModel.complete``, the gateway's client as it is now;
- with ``--candidates``, the options weighed before choosing: ``raw`` (``with_raw_response.create``
  then msgspec), ``post`` (the SDK's generic ``post`` with a msgspec-encoded body, raw response, then
  msgspec) and ``httpx`` (a plain ``httpx.AsyncClient`` POST, msgspec both ways).

With ``--gateway BLOCKS`` it measures the draft stage inside a serving gateway instead: the gateway
(bundled corpus, full pipeline) runs in a thread of this process, its upstream model switches between
the old and the new client every 40 requests (BLOCKS blocks each), and a client asks new questions
at concurrency 1; printed: ``Server-Timing`` ``upstream`` (the draft stage) and ``total`` of the
requests that were drafted (a question refused for want of a relevant passage has no draft).

Usage:
    .venv/bin/python bench/bench_upstream_client.py [--calls 300] [--rounds 5] [--candidates]
    .venv/bin/python bench/bench_upstream_client.py --gateway 6
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import httpx2
import msgspec
import openai

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.bench_gateway import chat_body, next_question, percentile, timing_ms  # noqa: E402
from bench.bench_vs_litellm import start_upstream  # noqa: E402
from gateway.bootstrap import build_services  # noqa: E402
from gateway.cleanup.model_rewriter import REWRITE_SCHEMA as DRAFT_SCHEMA  # noqa: E402
from gateway.domain import ChatRequest, Message, Role  # noqa: E402
from gateway.drafting.contract import build_messages  # noqa: E402
from gateway.logs import configure_logging  # noqa: E402
from gateway.models import Messages, OpenAIChatModel  # noqa: E402
from gateway.models.openai_compatible import _COMPLETION  # noqa: E402
from gateway.resources import bundled  # noqa: E402
from gateway.settings import Settings  # noqa: E402
from gateway.text import passage_from_text  # noqa: E402

LEAFLET = REPO / "knowledge" / "docs" / "paracetamol-adults.md"
QUESTION = "How much paracetamol can an adult take, and how often?"
KEY = "sk-bench-upstream"


_DECODER = _COMPLETION  # the gateway's own reading of a completion: the fields it uses
_ENCODER = msgspec.json.Encoder()


def draft_messages() -> list[dict[str, str]]:
    """The gateway's draft conversation over the leaflet's first five sections."""
    sections = re.split(r"^## .*$", LEAFLET.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:6]
    passages = [
        passage_from_text(
            s.strip(), f"p{i}", title="Paracetamol for adults", url="u", org="NHS", tier="nhs", score=0.9
        )
        for i, s in enumerate(sections)
    ]
    request = ChatRequest(messages=(Message(Role.USER, QUESTION),), model="bench")
    return build_messages(request, passages)


def request_body(messages: list[dict[str, str]]) -> dict[str, Any]:
    # the draft itself asks for no schema since it streams JSON Lines (docs/contract.md): a schema'd
    # call (the rewriter's) keeps the client comparison as it was measured
    schema = {"name": "cited_answer", "strict": True, "schema": DRAFT_SCHEMA}
    return {
        "model": "bench",
        "messages": messages,
        "response_format": {"type": "json_schema", "json_schema": schema},
    }


Call = Callable[[], Awaitable[str]]


async def sdk_create(client: openai.AsyncOpenAI, body: dict[str, Any]) -> str:
    """The old client's call: the SDK's typed ``create``, its pydantic ``ChatCompletion`` read."""
    completion = await client.chat.completions.create(**body)
    return completion.choices[0].message.content or ""


def clients(
    base_url: str, messages: list[dict[str, str]], candidates: bool
) -> tuple[dict[str, Call], list[Any]]:
    """The clients to compare, each a no-argument call returning the reply's text, and what to close."""
    body = request_body(messages)
    sdk = openai.AsyncOpenAI(base_url=base_url, api_key=KEY, timeout=30.0, max_retries=2)
    model = OpenAIChatModel(base_url=base_url, api_key=KEY, model="bench", timeout=30.0, retries=2)

    async def old() -> str:
        return await sdk_create(sdk, body)

    async def new() -> str:
        return await model.complete(messages, schema=DRAFT_SCHEMA, schema_name="cited_answer")

    calls: dict[str, Call] = {"old": old, "new": new}
    closing: list[Any] = [sdk, model]
    if not candidates:
        return calls, closing

    plain = httpx.AsyncClient(base_url=base_url, timeout=30.0, headers={"Authorization": f"Bearer {KEY}"})
    json_headers = {"Content-Type": "application/json"}

    async def raw() -> str:
        response = await sdk.chat.completions.with_raw_response.create(**body)
        return _DECODER.decode(response.content).choices[0].message.content or ""

    def sdk_post(client: openai.AsyncOpenAI) -> Call:
        """The SDK's generic ``post`` of a msgspec-encoded body, the raw response read with msgspec."""

        async def call() -> str:
            response = await client.post(
                "/chat/completions",
                cast_to=httpx2.Response,
                content=_ENCODER.encode(body),
                options={"headers": json_headers},
            )
            return _DECODER.decode(response.content).choices[0].message.content or ""

        return call

    async def plain_httpx() -> str:
        response = await plain.post("/chat/completions", content=_ENCODER.encode(body), headers=json_headers)
        response.raise_for_status()
        return _DECODER.decode(response.content).choices[0].message.content or ""

    aio_sdk = openai.AsyncOpenAI(
        base_url=base_url,
        api_key=KEY,
        timeout=30.0,
        max_retries=2,
        http_client=openai.DefaultAioHttpClient(),  # the SDK's aiohttp transport (LiteLLM's)
    )
    post, post_aiohttp = sdk_post(sdk), sdk_post(aio_sdk)

    calls |= {"raw": raw, "post": post, "httpx": plain_httpx, "post+aiohttp": post_aiohttp}
    closing += [plain, aio_sdk]
    return calls, closing


async def measure(calls: dict[str, Call], n: int, rounds: int) -> dict[str, tuple[list[float], list[float]]]:
    """Per client, wall and CPU milliseconds of every call; clients take turns in rotating order."""
    names = list(calls)
    for name in names:  # warm-up: connections, the SDK's platform headers, lazy imports
        for _ in range(20):
            await calls[name]()
    results: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in names}
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            walls, cpus = results[name]
            call = calls[name]
            for _ in range(n):
                wall, cpu = time.perf_counter(), time.process_time()
                text = await call()
                cpus.append((time.process_time() - cpu) * 1000)
                walls.append((time.perf_counter() - wall) * 1000)
                if not text:
                    raise RuntimeError(f"{name}: empty reply")
        print(f"  round {r + 1}/{rounds} done, load average {os.getloadavg()[0]:.2f}", flush=True)
    return results


def report(results: dict[str, tuple[list[float], list[float]]]) -> None:
    base_wall = statistics.median(results["old"][0])
    base_cpu = statistics.mean(results["old"][1])
    print(
        f"\n{'client':<8} {'median':>8} {'p95':>8} {'CPU/call':>9}   {'median ÷ old':>12} {'CPU ÷ old':>10}"
    )
    for name, (walls, cpus) in results.items():
        median, p95, cpu = statistics.median(walls), percentile(walls, 0.95), statistics.mean(cpus)
        print(
            f"{name:<8} {median:>6.2f}ms {p95:>6.2f}ms {cpu:>7.2f}ms   "
            f"{median / base_wall:>11.2f}× {cpu / base_cpu:>9.2f}×"
        )
    print("(wall: median and p95 per call; CPU: mean process CPU per call, the upstream's not counted)")


async def run(base_url: str, calls_per_round: int, rounds: int, candidates: bool) -> None:
    messages = draft_messages()
    size = len(_ENCODER.encode(request_body(messages)))
    print(f"request body {size} bytes; {calls_per_round} calls per client per round, {rounds} rounds")
    calls, closing = clients(base_url, messages, candidates)
    try:
        report(await measure(calls, calls_per_round, rounds))
    finally:
        for client in closing:
            await (client.aclose() if hasattr(client, "aclose") else client.close())


class SwitchedModel(OpenAIChatModel):
    """The gateway's client, or the old SDK call in its place while ``old`` is set (``--gateway``)."""

    old = False

    async def complete(
        self,
        messages: Messages,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        user: str | None = None,
        schema: dict[str, Any] | None = None,
        schema_name: str = "response",
    ) -> str:
        if not SwitchedModel.old:
            return await super().complete(
                messages,
                temperature=temperature,
                max_tokens=max_tokens,
                user=user,
                schema=schema,
                schema_name=schema_name,
            )
        body: dict[str, Any] = {"model": self._model, "messages": messages}
        if temperature is not None:
            body["temperature"] = temperature
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if user:
            body["user"] = user
        response_format = self._format(schema, schema_name)
        if response_format is not None:
            body["response_format"] = response_format
        return await sdk_create(self._client, body)


def in_gateway(base_url: str, data: Path, blocks: int) -> None:
    """Server-Timing ``upstream`` and ``total`` per request, old and new client in alternate blocks."""
    from tests.support.stack import running_gateway

    settings = Settings(
        data_dir=data, knowledge_dir=bundled("knowledge"), upstream_base_url=base_url, upstream_retries=1
    )
    print("building services over the bundled corpus ...", flush=True)
    services = build_services(settings, connect=SwitchedModel.from_endpoint)
    timings: dict[bool, tuple[list[float], list[float]]] = {True: ([], []), False: ([], [])}
    with running_gateway(services) as url, httpx.Client(timeout=60) as client:
        gated = f"{url}/v1/chat/completions"
        for old in (True, False):  # warm-up: the model, caches, connections
            SwitchedModel.old = old
            for _ in range(10):
                client.post(gated, json=chat_body(next_question())).raise_for_status()
        for block in range(blocks):
            for old in (True, False) if block % 2 == 0 else (False, True):
                SwitchedModel.old = old
                upstream, total = timings[old]
                for _ in range(40):
                    response = client.post(gated, json=chat_body(next_question()))
                    response.raise_for_status()
                    drafted = timing_ms(response.headers["server-timing"], "upstream")
                    if drafted > 0:  # a question refused before the draft (no relevant passage) has none
                        upstream.append(drafted)
                        total.append(timing_ms(response.headers["server-timing"], "total"))
            print(f"  block {block + 1}/{blocks} done, load average {os.getloadavg()[0]:.2f}", flush=True)
    print(f"\n{'client':<8} {'upstream median':>15} {'p95':>8} {'total median':>13} {'p95':>8}")
    for old, (upstream, total) in timings.items():
        name, p95 = "old" if old else "new", percentile(upstream, 0.95)
        print(
            f"{name:<8} {statistics.median(upstream):>13.2f}ms {p95:>6.2f}ms "
            f"{statistics.median(total):>11.1f}ms {percentile(total, 0.95):>6.1f}ms"
        )
    counts = f"{len(timings[True][0])} / {len(timings[False][0])}"
    print(f"({counts} drafted requests; Server-Timing, ms as the gateway reports them)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=300, help="calls per client per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--candidates", action="store_true", help="also the raw, post and plain httpx clients"
    )
    parser.add_argument(
        "--gateway", type=int, default=0, metavar="BLOCKS", help="measure inside a serving gateway instead"
    )
    args = parser.parse_args()
    configure_logging("WARNING" if args.gateway else "INFO")  # either way the SDK's per-call line is off
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        process, base_url = start_upstream(Path(tmp))
        try:
            if args.gateway:
                in_gateway(base_url, Path(tmp) / "data", args.gateway)
            else:
                asyncio.run(run(base_url, args.calls, args.rounds, args.candidates))
        finally:
            process.terminate()
            process.wait(timeout=10)
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
