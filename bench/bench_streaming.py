"""Verified streaming at the model's pace: the raw model against the gateway, side by side (issue #30).

A scripted OpenAI-compatible upstream on loopback plays a model that writes at 40, 80 and 150 tokens/s
after 0.4 s to its first token (``gateway.testing``: ``Reply.tokens_per_second``; a token is a word, up
to three digits or up to three other characters: the same rule for both sides). For each question:

- gateway: the openai SDK streams from the gateway, which streams from the upstream under the citation
  contract (``contract_reply``: the urgency line, then one line per sentence; each sentence a passage
  sentence the gateway sent, so every claim verifies); measured: the first verified sentence on the
  client, and the complete answer (the final chunk, with ``trust``);
- raw: the openai SDK streams the same answer straight from the upstream, written as a model without
  the gateway writes it (the plain answer: the same sentences with their ``[n]`` markers, as the
  patient reads them); measured: first token, first sentence, complete.

Also: the characters the model writes (contract / plain; and against the plain answer without
markers), a ten-claim answer at 80 tokens/s, a five-claim answer two of whose claims the model words
beyond their quotes (each is rewritten to its source at once, with the default ``cleanup.rewriter:
extractive``, so it must not hold the stream), and the built-in extractive responder (no model). Median
and p95 over ``--runs`` questions per row. Targets: first verified sentence <= raw first sentence + 0.3
s; complete <= 1.2x raw complete; characters <= 1.5x.

Usage: .venv/bin/python bench/bench_streaming.py [--runs 5] [--extractive-runs 40] [--knowledge DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.bootstrap import build_services
from gateway.drafting.contract import SYSTEM_PROMPT, with_markers
from gateway.drafting.drafter import Drafter
from gateway.drafting.extractive import ExtractiveResponder
from gateway.knowledge.store import ChromaStore
from gateway.logs import configure_logging
from gateway.resources import bundled
from gateway.settings import Settings
from gateway.testing import Reply, contract_reply, passages_sent, running_upstream
from gateway.text import split_sentences
from tests.support.components import with_components
from tests.support.stack import running_gateway

RATES = (40.0, 80.0, 150.0)
FIRST_TOKEN_SECONDS = 0.4
QUESTIONS = [
    "How much paracetamol can an adult take?",
    "What are the side effects of ibuprofen?",
    "How is high blood pressure treated?",
    "What are the symptoms of type 2 diabetes?",
    "How should I use eye drops after cataract surgery?",
]
FIRST_SENTENCE_TARGET = 0.3
COMPLETE_TARGET = 1.2
CHARS_TARGET = 1.5


@dataclass
class Script:
    """What the scripted model writes for the current row: its rate and how many claims."""

    rate: float = 80.0
    claims: int = 5
    paraphrased: int = 0
    """How many of the claims the model words beyond their quote (each fails and is rewritten)."""
    plain: str = ""
    """The last contract answer as plain text with markers (what the raw side streams)."""
    contract_chars: list[int] = field(default_factory=list)
    plain_chars: list[int] = field(default_factory=list)
    prose_chars: list[int] = field(default_factory=list)


def answer_claims(body: dict[str, Any], count: int) -> list[tuple[str, int, str]]:
    """Sentences of the passages sent, in passage order (at most two per passage first), ``count`` in all."""
    by_passage = [split_sentences(text) for text in passages_sent(body)]
    chosen: list[tuple[str, int, str]] = []
    for depth in range(0, 50, 2):
        for number, sentences in enumerate(by_passage, start=1):
            for sentence in sentences[depth : depth + 2]:
                if len(chosen) < count and len(sentence.split()) >= 5:
                    chosen.append((sentence, number, sentence))
        if len(chosen) >= count:
            break
    return chosen


def paraphrase(sentence: str) -> str | None:
    """The sentence with a qualifier its source does not hold, inside it (after its first comma), so
    the model writes the quote's anchor: the claim fails verification and is rewritten to the source
    sentence holding the anchor. None for a sentence without a comma (it is left as written)."""
    head, comma, tail = sentence.partition(", ")
    return f"{head}, in most cases, {tail}" if comma else None


def reworded(claims: list[tuple[str, int, str]], count: int) -> list[tuple[str, int, str]]:
    """``claims`` with the first ``count`` that ``paraphrase`` can reword reworded."""
    out = []
    for sentence, number, quote in claims:
        changed = paraphrase(sentence) if count else None
        count -= changed is not None
        out.append((changed or sentence, number, quote))
    return out


def responder(script: Script) -> Any:
    def reply(body: dict[str, Any]) -> Reply:
        contract = any(m["content"] == SYSTEM_PROMPT for m in body["messages"])
        if contract:
            claims = reworded(answer_claims(body, script.claims), script.paraphrased)
            content = contract_reply(body, claims)
            script.plain = " ".join(with_markers(s, (n,)) for s, n, _ in claims)
            script.contract_chars.append(len(content))
            script.plain_chars.append(len(script.plain))
            script.prose_chars.append(len(" ".join(s for s, _, _ in claims)))
        else:
            content = script.plain
        return Reply(content=content, tokens_per_second=script.rate, first_token_delay=FIRST_TOKEN_SECONDS)

    return reply


NOT_SHOWN: list[str] = []
"""Why a claim of a bench answer was not shown (outcome and reason), printed after the tables."""


def gateway_run(client: openai.OpenAI, question: str) -> tuple[float, float, int]:
    """(first verified sentence, complete, claims shown: verified or rewritten) through the gateway."""
    started = time.perf_counter()
    first = None
    shown = -1
    stream = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": question}], stream=True
    )
    for chunk in stream:
        choice = chunk.choices[0]
        if choice.delta.content and first is None:
            first = time.perf_counter() - started
        if choice.finish_reason:
            trust = (chunk.model_extra or {}).get("trust", {})
            summary = trust.get("summary", {})
            shown = summary.get("supported", 0) + summary.get("rewritten", 0)
            NOT_SHOWN.extend(
                f"{question}: {c['outcome']} ({(c.get('reason') or '')[:160]})"
                for c in trust.get("claims", [])
                if c["outcome"] not in ("verified", "rewritten")
            )
    complete = time.perf_counter() - started
    return first if first is not None else complete, complete, shown


def raw_run(client: openai.OpenAI, plain: str) -> tuple[float, float, float]:
    """(first token, first sentence, complete) of the plain answer streamed straight from the model."""
    first_sentence_chars = len(split_sentences(plain)[0])
    started = time.perf_counter()
    first_token = first_sentence = None
    text = ""
    stream = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "plain answer"}], stream=True
    )
    for chunk in stream:
        piece = chunk.choices[0].delta.content if chunk.choices else None
        if not piece:
            continue
        now = time.perf_counter() - started
        first_token = now if first_token is None else first_token
        text += piece
        if first_sentence is None and len(text) >= first_sentence_chars:
            first_sentence = now
    complete = time.perf_counter() - started
    return first_token or complete, first_sentence or complete, complete


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def cell(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f} / {p95(values):5.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="questions per row (median and p95)")
    parser.add_argument("--knowledge", type=Path, default=None)
    parser.add_argument(
        "--extractive-runs",
        type=int,
        default=None,
        help="questions for the no-model row (default --runs): the gateway's own cost, audit writes included",
    )
    args = parser.parse_args()
    configure_logging("WARNING")
    script = Script()
    rows: list[str] = []
    verdicts: list[str] = []
    with tempfile.TemporaryDirectory() as data, running_upstream() as (scripted, upstream_url):
        scripted.responder = responder(script)
        settings = Settings(
            data_dir=Path(data),
            knowledge_dir=args.knowledge or bundled("knowledge"),
            upstream_base_url=upstream_url,
            upstream_retries=0,
            upstream_deadline=60.0,
        )
        print(f"building services over {settings.knowledge_dir} ...", flush=True)
        services = build_services(settings)
        with running_gateway(services) as gateway_url:
            gateway = openai.OpenAI(base_url=f"{gateway_url}/v1", api_key="k", max_retries=0, timeout=120)
            raw = openai.OpenAI(base_url=upstream_url, api_key="k", max_retries=0, timeout=120)
            script.rate, script.claims = 1000.0, 5
            for question in QUESTIONS[:3]:  # warm-up: model, caches, connections
                gateway_run(gateway, question)
            header = (
                f"{'row':32} {'raw 1st token':>15} {'raw 1st sent.':>15} {'raw complete':>15} "
                f"{'gw 1st verified':>15} {'gw complete':>15} {'chars x':>8} {'shown':>9}"
            )
            for rate, claims, paraphrased in [(r, 5, 0) for r in RATES] + [(80.0, 10, 0), (80.0, 5, 2)]:
                script.rate, script.claims, script.paraphrased = rate, claims, paraphrased
                script.contract_chars.clear()
                script.plain_chars.clear()
                script.prose_chars.clear()
                samples: dict[str, list[float]] = {k: [] for k in ("tok", "sent", "raw", "first", "gw")}
                ok = []
                for i in range(args.runs):
                    question = QUESTIONS[i % len(QUESTIONS)]
                    first, complete, supported = gateway_run(gateway, question)
                    token, sentence, whole = raw_run(raw, script.plain)
                    for key, value in zip(samples, (token, sentence, whole, first, complete), strict=True):
                        samples[key].append(value)
                    ok.append(supported == claims)
                chars = [c / p for c, p in zip(script.contract_chars, script.plain_chars, strict=True)]
                prose = [c / p for c, p in zip(script.contract_chars, script.prose_chars, strict=True)]
                name = f"{claims} claims{f' ({paraphrased} reworded)' if paraphrased else ''}, {rate:g} tok/s"
                rows.append(
                    f"{name:32} {cell(samples['tok']):>15} {cell(samples['sent']):>15} "
                    f"{cell(samples['raw']):>15} "
                    f"{cell(samples['first']):>15} {cell(samples['gw']):>15} {statistics.median(chars):8.2f} "
                    f"{sum(ok):>4}/{len(ok)}"
                )
                extra = statistics.median(samples["first"]) - statistics.median(samples["sent"])
                ratio = statistics.median(samples["gw"]) / statistics.median(samples["raw"])
                verdicts.append(
                    f"{name:32} first verified - raw first sentence {extra:+.2f} s "
                    f"({'ok' if extra <= FIRST_SENTENCE_TARGET else 'MISSED'} <= +{FIRST_SENTENCE_TARGET}); "
                    f"complete {ratio:.2f}x "
                    f"({'ok' if ratio <= COMPLETE_TARGET else 'MISSED'} <= {COMPLETE_TARGET}x); "
                    f"chars {statistics.median(chars):.2f}x "
                    f"({'ok' if statistics.median(chars) <= CHARS_TARGET else 'MISSED'} <= {CHARS_TARGET}x; "
                    f"{statistics.median(prose):.2f}x the answer without markers)"
                )
        # the same services with the extractive drafter, built through the constructor (a second gateway)
        extractive_drafter = Drafter(
            ExtractiveResponder(services.embedder, services.policy.thresholds.retrieval.min_relevance)
        )
        assert isinstance(services.store, ChromaStore)
        rebuilt = build_services(settings, embedder=services.embedder, store=services.store)
        with running_gateway(with_components(rebuilt, drafter=extractive_drafter)) as gateway_url:
            gateway = openai.OpenAI(base_url=f"{gateway_url}/v1", api_key="k", max_retries=0, timeout=120)
            extractive: dict[str, list[float]] = {"first": [], "gw": []}
            for i in range(args.extractive_runs or args.runs):
                first, complete, _ = gateway_run(gateway, QUESTIONS[i % len(QUESTIONS)])
                extractive["first"].append(first)
                extractive["gw"].append(complete)
            rows.append(
                f"{'extractive (no model)':32} {'-':>15} {'-':>15} {'-':>15} "
                f"{cell(extractive['first']):>15} {cell(extractive['gw']):>15} {'-':>8} {'-':>9}"
            )
    extractive_runs = args.extractive_runs or args.runs
    print(
        f"\nseconds, median / p95 over {args.runs} per row ({extractive_runs} for the extractive row); "
        f"first token at {FIRST_TOKEN_SECONDS} s"
    )
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(header)
    for row in rows:
        print(row)
    print()
    for verdict in verdicts:
        print(verdict)
    for line in NOT_SHOWN:
        print("not shown:", line)


if __name__ == "__main__":
    main()
