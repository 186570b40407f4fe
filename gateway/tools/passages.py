"""Tool calls through the pipeline (docs/integrator.md, "Tools"; ``run`` wires these).

- ``ToolPassages``: the tool steps of a request as a component, built once at start-up with what they
  read (the tool policy, the quote threshold, the clock, the metrics); the pipeline holds it as
  ``Services.tools``.
- ``ToolPassages.lift``: when the client offers tools (and the upstream is a model that can call them),
  a request triage found not to be a health question reaches the model (which may call a tool) instead
  of being refused; an emergency is never lifted (``lifted``).
- ``tool_passages``: the results of the tools ``policies/tools.yaml`` trusts, as passages numbered after
  the knowledge base's; any other tool result stays conversation context, never a source.
- ``ToolCalls``: the tool calls of the model's reply as they stream in, fragments kept in order (to hand
  on unchanged) and assembled whole (for the non-streamed reply, the audit record and the metrics);
  its ``attributed`` names, in a failing claim's reason, the untrusted tool result the claim restates.
- ``returned``: whether the calls go to the client: not when the request ended as an emergency (the
  model's own read) or a failure; they are released after the verified text, once the reply is complete.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

from rapidfuzz import fuzz

from gateway.domain import (
    ChatRequest,
    ClaimResult,
    Outcome,
    Passage,
    RefusalReason,
    Retrieval,
    Role,
    Scope,
    Triage,
)
from gateway.errors import StageError
from gateway.metrics import GatewayMetrics
from gateway.text import normalise
from gateway.tool_calls import ToolCall, ToolCallDelta
from gateway.tools.policy import ToolPolicy
from gateway.vocabulary import ToolCallOutcome

LIFTED = "to the model: the client offers tools"
"""Appended to the reason of a question triage found not to be a health question, when lifted."""

TOOL_RESULT = "tool_result"
"""The ``doc_type`` of a trusted tool's result as a passage."""


@dataclass(frozen=True)
class ToolPassages:
    """The tool steps of a request, built once at start-up (``bootstrap``): which triage a request
    offering tools gets (``lift``), which passages the model is offered (``offered``), the request's
    tool calls with its untrusted results (``calls``), and the count of the calls made (``count``).

    ``calls_tools``: the drafter reaches a model that can call tools (known at start-up); a request
    that offers tools reaches one only then (``to_model``)."""

    policy: ToolPolicy
    quote_threshold: float
    """How close a claim must be to an untrusted result to be said to rest on it
    (``verification.quote_fuzzy_threshold``)."""
    today: Callable[[], dt.date]
    """The clock that dates a trusted tool's result (the process's one clock)."""
    metrics: GatewayMetrics
    calls_tools: bool
    """The drafter's upstream can offer the client's tools to a model (``Drafter.calls_tools``)."""

    def to_model(self, request: ChatRequest) -> bool:
        """The request offers tools that a model may call."""
        return request.offers_tools and self.calls_tools

    def lift(self, triage: Triage, request: ChatRequest) -> Triage:
        """``triage`` with its non-clinical questions in scope when the request offers tools to a model
        that can call them (and the policy lets them through); an emergency, and a question out of this
        service's scope, are left as they are."""
        if self.policy.non_clinical_to_model and self.to_model(request):
            return lifted(triage)
        return triage

    def offered(self, retrieval: Retrieval, request: ChatRequest) -> tuple[Passage, ...] | None:
        """The passages the model is offered: the relevant vetted ones, then the trusted tools' results;
        None to refuse (nothing relevant, and no tool to call or trusted result). When tools are offered,
        a request with no relevant passage reaches the model with only the trusted results, maybe none."""
        trusted = tool_passages(request, self.policy, self.today)
        if retrieval.relevant:
            return tuple(retrieval.passages) + trusted
        if trusted or (self.policy.without_passages_to_model and self.to_model(request)):
            return trusted
        return None

    def calls(self, request: ChatRequest) -> ToolCalls:
        """The request's tool calls, to fill in as the reply streams, with its untrusted tool results."""
        return ToolCalls(ToolResults.untrusted(request, self.policy, self.quote_threshold))

    def count(self, calls: ToolCalls) -> None:
        """``gateway_tool_calls_total{outcome}``: each call the model made, returned or withheld."""
        if made := calls.calls:
            outcome = ToolCallOutcome.RETURNED if calls.returned else ToolCallOutcome.WITHHELD
            self.metrics.tool_calls.labels(outcome=outcome).inc(len(made))


def lifted(triage: Triage) -> Triage:
    """``triage`` as a request offering tools gets it: its non-clinical questions in scope (an
    emergency is never lifted)."""
    if triage.scope is Scope.EMERGENCY:
        return triage
    questions = tuple(
        replace(q, scope=Scope.IN_SCOPE, reason=f"{q.reason}; {LIFTED}")
        if q.scope is Scope.NON_CLINICAL
        else q
        for q in triage.questions
    )
    result = replace(triage, questions=questions)
    if triage.scope is Scope.NON_CLINICAL:
        return replace(result, scope=Scope.IN_SCOPE, reason=f"{triage.reason}; {LIFTED}")
    return result


def tool_passages(
    request: ChatRequest, policy: ToolPolicy, today: Callable[[], dt.date]
) -> tuple[Passage, ...]:
    """The results of trusted tools in the conversation, as passages (in the order they came), each
    reviewed ``today()`` (asked only when there is one)."""
    if not policy.trusted:
        return ()
    names = {call.id: call.name for message in request.messages for call in message.tool_calls}
    passages: list[Passage] = []
    for message in request.messages:
        if message.role is not Role.TOOL or not message.content.strip():
            continue
        tool = policy.trusted_tool(names.get(message.tool_call_id or "", ""))
        if tool is None:
            continue
        passages.append(
            Passage(
                id=f"tool:{message.tool_call_id}",
                document_id=f"tool:{tool.name}",
                text=message.content,
                title=tool.title or f"Result of {tool.name}",
                url="",
                org=tool.org,
                tier=tool.tier,
                reviewed_on=today(),
                score=1.0,
                doc_type=TOOL_RESULT,
            )
        )
    return tuple(passages)


@dataclass(frozen=True)
class ToolResults:
    """The results of untrusted tools in the conversation (tool name, normalised text), and how close a
    claim must be to one to be said to rest on it (``verification.quote_fuzzy_threshold``)."""

    results: tuple[tuple[str, str], ...] = ()
    threshold: float = 1.0

    @classmethod
    def untrusted(cls, request: ChatRequest, policy: ToolPolicy, threshold: float) -> ToolResults:
        names = {call.id: call.name for message in request.messages for call in message.tool_calls}
        results = tuple(
            (names.get(m.tool_call_id or "", ""), normalise(m.content))
            for m in request.messages
            if m.role is Role.TOOL and m.content.strip()
        )
        trusted = {tool.name for tool in policy.trusted}
        kept = tuple((name, text) for name, text in results if name not in trusted)
        return cls(kept, threshold)

    def source_of(self, claim: str) -> str | None:
        """The tool whose result the claim restates, or None: the claim found in the result (fuzzily), or
        as a whole like a result shorter than itself (so a short result, "Done.", names no claim)."""
        text = normalise(claim).rstrip(". ")
        for name, result in self.results:
            close = fuzz.partial_ratio if len(text) <= len(result) else fuzz.ratio
            if text and close(text, result.rstrip(". ")) >= self.threshold * 100:
                return name
        return None


class ToolCalls:
    """The tool calls of one reply as they stream in (``ToolCallDelta`` fragments, OpenAI's shape), and
    the conversation's untrusted tool results (``attributed``)."""

    def __init__(self, results: ToolResults | None = None) -> None:
        self.results = results or ToolResults()
        self.deltas: list[ToolCallDelta] = []
        """Every fragment, in the order the model sent them: what the client is handed, unchanged."""
        self.returned = False
        """The calls were handed to the client (``hand_over``)."""

    def attributed(self, judged: Sequence[ClaimResult]) -> list[ClaimResult]:
        """``judged`` with each failing claim that restates an untrusted tool result saying so first in
        its reason: a tool result is conversation context, never a vetted source."""
        attributed = []
        for result in judged:
            tool = None if result.verdict.supported else self.results.source_of(result.statement.text)
            if tool is not None:
                why = f"rests only on the result of the tool {tool!r}, which is not a vetted source"
                result = replace(result, reason=f"{why}; {result.reason}" if result.reason else why)
            attributed.append(result)
        return attributed

    def add(self, delta: ToolCallDelta) -> None:
        self.deltas.append(delta)

    def __bool__(self) -> bool:
        return bool(self.deltas)

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """The calls, whole, by index: the first id and name given, the arguments concatenated."""
        ids: dict[int, str] = {}
        names: dict[int, str] = {}
        arguments: dict[int, str] = {}
        for delta in self.deltas:
            if delta.id and delta.index not in ids:
                ids[delta.index] = delta.id
            if delta.name and delta.index not in names:
                names[delta.index] = delta.name
            arguments[delta.index] = arguments.get(delta.index, "") + delta.arguments
        return tuple(
            ToolCall(ids.get(index, ""), names.get(index, ""), arguments[index])
            for index in sorted(arguments)
        )

    def hand_over(self, allowed: bool) -> None:
        """Mark the calls returned when ``allowed`` (``returned``): the record says so before they are
        sent (``send``)."""
        self.returned = bool(self.deltas) and allowed

    async def send(self, sink: Callable[[ToolCallDelta], Awaitable[None]] | None) -> None:
        """Hand a streaming client every fragment of the returned calls, in order."""
        if self.returned and sink is not None:
            for delta in self.deltas:
                await sink(delta)


def no_vetted_passage(outcome: Outcome, triage: Triage) -> Outcome:
    """The outcome of a request that reached the model with no passage (for a tool call) and made no
    call: refused as it would have been without tools (``non_clinical`` when triage's refusal was
    lifted, else ``no_relevant_context``); its claims keep their removal reasons."""
    if LIFTED in triage.reason:
        reason, detail = RefusalReason.NON_CLINICAL, f"{triage.reason}; the model called no tool"
    else:
        reason = RefusalReason.NO_RELEVANT_CONTEXT
        detail = "no vetted passage is relevant enough, and the model called no tool"
    return replace(outcome, refused=True, refusal_reason=reason, refusal_detail=detail)


def returned(outcome: Outcome, error: StageError | None) -> bool:
    """Whether the model's tool calls go to the client: never with an emergency, nor after a failure (a
    call may be incomplete). A text refusal for other reasons does not withhold them: a call's arguments
    are not medical claims."""
    return error is None and outcome.refusal_reason is not RefusalReason.EMERGENCY
