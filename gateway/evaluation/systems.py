"""The systems under test. Each turns a Question into a SystemAnswer and times itself.

- ``RawModelSystem``: the upstream model asked directly, as SourceCheckup asks: a short answer with
  inline ``[n]`` markers and the URLs of its sources. It gets no passages.
- ``InProcessGateway``: the gateway's pipeline (``pipeline.run.answer``) called in this process.
- ``HttpGateway``: a running gateway over HTTP through the official openai SDK (reads ``trust``).
- ``ReplaySystem``: answers recorded elsewhere (an existing chatbot's logs); no model is called.

A system that cannot answer at all returns a SystemAnswer with ``error`` set; only a bug escapes as an
exception (and stops the run, which can then be resumed).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import openai

from gateway.domain import ChatRequest, Message, Role
from gateway.errors import UpstreamError
from gateway.evaluation.records import Question, SourceRef, SystemAnswer
from gateway.evaluation.rows import ReplayRow, read_row
from gateway.evaluation.scoring import looks_like_refusal
from gateway.models.chat_model import ChatModel
from gateway.pipeline.run import answer as gateway_answer
from gateway.services import Services
from gateway.validation import refuse

Clock = Callable[[], float]


class System(Protocol):
    name: str

    async def ask(self, question: Question) -> SystemAnswer: ...


# ---- the raw model ---------------------------------------------------------------------------------

RAW_PROMPT = """\
You are a medical information assistant answering a patient's question. Answer in a short paragraph \
of at most five sentences, in plain language. Back up your statements with sources: after each \
statement put the number of the source that supports it in square brackets, like [1], and list \
each source as the full URL of the specific web page (from a reputable medical organisation) that \
contains the information.

Reply with JSON only, in this shape:
{"answer": "Your answer with [1] markers.", "sources": [{"id": 1, "url": "https://...", "title": "..."}]}
"""

RAW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["answer", "sources"],
    "properties": {
        "answer": {"type": "string"},
        "sources": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "url", "title"],
                "properties": {
                    "id": {"type": "integer"},
                    "url": {"type": "string"},
                    "title": {"type": "string"},
                },
            },
        },
    },
}

_URL = re.compile(r"https?://[^\s<>()\[\]\"']+[^\s<>()\[\]\"'.,;:]")
_SOURCES_HEADING = re.compile(
    r"^\s*(\*\*)?(sources|references|citations)(\*\*)?\s*:?\s*(\*\*)?\s*$", re.I | re.M
)
_NUMBERED = re.compile(r"^\s*(?:\[(\d+)\]|(\d+)[.)])\s*(.*)$")


def parse_raw_answer(raw: str) -> tuple[str, tuple[SourceRef, ...]]:
    """The answer text and its numbered sources, from the JSON asked for or from free text."""
    body = raw.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", body, re.DOTALL)
    if fenced:
        body = fenced.group(1)
    if body.startswith("{"):
        try:
            data = json.loads(body)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("answer"), str):
            return data["answer"].strip(), _json_sources(data.get("sources"))
    return _text_answer(raw.strip())


def _json_sources(items: Any) -> tuple[SourceRef, ...]:
    sources: list[SourceRef] = []
    if not isinstance(items, list):
        return ()
    for position, item in enumerate(items, start=1):
        if isinstance(item, str):
            sources.append(SourceRef(position, url=item.strip()))
        elif isinstance(item, dict) and isinstance(item.get("url"), str):
            number = item.get("id")
            sources.append(
                SourceRef(
                    number if isinstance(number, int) and not isinstance(number, bool) else position,
                    url=item["url"].strip(),
                    title=str(item.get("title") or "") or None,
                )
            )
    return tuple(sources)


def _text_answer(text: str) -> tuple[str, tuple[SourceRef, ...]]:
    """Free text: a 'Sources:' list of numbered URLs after the answer, or URLs anywhere."""
    heading = _SOURCES_HEADING.search(text)
    body, tail = (text[: heading.start()], text[heading.end() :]) if heading else (text, "")
    sources: list[SourceRef] = []
    for line in tail.splitlines():
        numbered = _NUMBERED.match(line)
        found = _URL.search(line)
        if found:
            number = int(numbered.group(1) or numbered.group(2)) if numbered else len(sources) + 1
            sources.append(SourceRef(number, url=found.group(0)))
    if not sources:
        for position, url in enumerate(dict.fromkeys(m.group(0) for m in _URL.finditer(body)), start=1):
            sources.append(SourceRef(position, url=url))
    return body.strip(), tuple(sources)


class RawModelSystem:
    """The upstream model with no gateway: asked for a short answer and the URLs backing it."""

    def __init__(self, model: ChatModel, clock: Clock = time.perf_counter, name: str = "raw") -> None:
        self._model = model
        self._clock = clock
        self.name = name

    async def ask(self, question: Question) -> SystemAnswer:
        messages = [{"role": "system", "content": RAW_PROMPT}, {"role": "user", "content": question.question}]
        started = self._clock()
        try:
            raw = await self._model.complete(
                messages, temperature=0.0, schema=RAW_SCHEMA, schema_name="answer_with_sources"
            )
        except UpstreamError as err:
            latency = self._clock() - started
            return SystemAnswer(
                self.name, question.id, "", error=f"{type(err).__name__}: {err}", latency_seconds=latency
            )
        latency = self._clock() - started
        text, sources = parse_raw_answer(raw)
        refused = looks_like_refusal(text)
        return SystemAnswer(
            system=self.name,
            question_id=question.id,
            answer=text,
            sources=sources,
            refused=refused,
            refusal_reason="detected" if refused else None,
            latency_seconds=latency,
        )


# ---- the gateway --------------------------------------------------------------------------------


class InProcessGateway:
    """The gateway's pipeline, called directly (no HTTP): the default for ``trust-gateway eval``."""

    def __init__(self, services: Services, clock: Clock = time.perf_counter, name: str = "gateway") -> None:
        self._services = services
        self._clock = clock
        self.name = name

    async def ask(self, question: Question) -> SystemAnswer:
        request = ChatRequest(
            messages=(Message(Role.USER, question.question),), model=self._services.settings.model_name
        )
        started = self._clock()
        result = await gateway_answer(request, self._services.answer_parts)
        latency = self._clock() - started
        outcome = result.outcome
        return SystemAnswer(
            system=self.name,
            question_id=question.id,
            answer=result.answer,
            sources=tuple(
                SourceRef(n, p.url, p.title, p.text, p.document_id)
                for n, p in enumerate(result.report.sources, start=1)
            ),
            refused=outcome.refused,
            refusal_reason=outcome.refusal_reason.value if outcome.refusal_reason else None,
            latency_seconds=latency,
            best_relevance=result.best_relevance,
            retrieved_documents=tuple(dict.fromkeys(p.document_id for p in result.passages)),
        )


class HttpGateway:
    """A running gateway over HTTP, through the official openai SDK; reads the ``trust`` object."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str = "trust-gateway",
        timeout: float = 120.0,
        clock: Clock = time.perf_counter,
        name: str = "gateway",
    ) -> None:
        root = base_url.rstrip("/")
        self._client = openai.AsyncOpenAI(
            base_url=root if root.endswith("/v1") else f"{root}/v1",
            api_key=api_key or "not-needed",
            timeout=timeout,
            max_retries=0,
        )
        self._model = model
        self._clock = clock
        self.name = name

    async def ask(self, question: Question) -> SystemAnswer:
        started = self._clock()
        try:
            completion = await self._client.chat.completions.create(
                model=self._model, messages=[{"role": "user", "content": question.question}]
            )
        except openai.OpenAIError as err:
            return SystemAnswer(
                self.name,
                question.id,
                "",
                error=f"{type(err).__name__}: {err}",
                latency_seconds=self._clock() - started,
            )
        latency = self._clock() - started
        text = (completion.choices[0].message.content or "") if completion.choices else ""
        trust = (completion.model_extra or {}).get("trust")
        if not isinstance(trust, dict):
            return SystemAnswer(
                self.name,
                question.id,
                text,
                error="the response carries no 'trust' object",
                latency_seconds=latency,
            )
        text = without_disclosure(text, trust)
        summary = trust.get("summary") or {}
        sources_json = [s for s in trust.get("sources") or [] if isinstance(s, dict)]
        relevances = [
            float(s["relevance"]) for s in sources_json if isinstance(s.get("relevance"), int | float)
        ]
        return SystemAnswer(
            system=self.name,
            question_id=question.id,
            answer=text,
            sources=tuple(
                SourceRef(
                    int(s.get("id", n)), s.get("url"), s.get("title"), s.get("text"), s.get("document_id")
                )
                for n, s in enumerate(sources_json, start=1)
            ),
            refused=bool(summary.get("refused")),
            refusal_reason=summary.get("reason"),
            latency_seconds=latency,
            best_relevance=max(relevances) if relevances else None,
            retrieved_documents=tuple(dict.fromkeys(str(s.get("document_id")) for s in sources_json)),
        )

    async def aclose(self) -> None:
        await self._client.close()


# ---- replay ---------------------------------------------------------------------------------------


class ReplaySystem:
    """Recorded answers, looked up by question id: audits an existing chatbot's logs."""

    def __init__(self, answers: Mapping[str, SystemAnswer], name: str = "replay") -> None:
        self._answers = answers
        self.name = name

    async def ask(self, question: Question) -> SystemAnswer:
        return self._answers[question.id]


def load_replay(path: Path, name: str = "replay") -> tuple[list[Question], ReplaySystem]:
    """Read recorded answers (JSONL, ``rows.ReplayRow``). Each line: question, answer, sources;
    optional id, scope, refused (bool), latency_seconds, human_labels (per-claim support labels a person
    gave, for measuring the harness). A source is a URL string, a text string, or an object with
    url/title/text (and optionally its number as ``id``)."""
    if not path.is_file():
        refuse(str(path), "-", "replay file not found")
    questions: list[Question] = []
    answers: dict[str, SystemAnswer] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            refuse(str(path), f"line {number}", f"not JSON: {err.msg}")
        row = read_row(ReplayRow, data, str(path), number)
        question = row.to_question()
        if question.id in answers:
            refuse(str(path), f"line {number}.id", f"duplicate id {question.id!r}")
        detected = looks_like_refusal(row.answer) if row.refused is None else row.refused
        questions.append(question)
        answers[question.id] = SystemAnswer(
            system=name,
            question_id=question.id,
            answer=row.answer,
            sources=row.source_refs(),
            refused=detected,
            refusal_reason=("recorded" if row.refused is not None else "detected") if detected else None,
            latency_seconds=row.latency_seconds,
            human_labels=row.labels(),
        )
    if not questions:
        refuse(str(path), "-", "the replay file is empty")
    return questions, ReplaySystem(answers, name)


def system_names(systems: Sequence[System]) -> list[str]:
    return [s.name for s in systems]


def without_disclosure(text: str, trust: dict[str, Any]) -> str:
    """The answer without the AI disclosure that ends it (``trust.ai_disclosure``): the notice is
    the gateway's, not a statement of the answer, and is not scored."""
    disclosure = trust.get("ai_disclosure")
    notice = disclosure.get("notice") if isinstance(disclosure, dict) and disclosure.get("shown") else None
    if isinstance(notice, str) and notice and text.endswith(notice):
        return text.removesuffix(notice).rstrip()
    return text
