"""The heavy, long-lived parts a request needs, built once and injected (no module globals)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

from gateway.audit import AuditStore
from gateway.audit.trail import AuditTrail
from gateway.claims.splitter import Splitter
from gateway.cleanup.cleaner import SentenceCleaner
from gateway.drafting.drafter import Drafter
from gateway.fetching.fetcher import SafeFetcher
from gateway.knowledge.rewrite import QueryRewriter
from gateway.knowledge.store import KnowledgeStore
from gateway.messages import Messages, ReplyNotes
from gateway.metrics import GatewayMetrics
from gateway.models.embedding import Embedder
from gateway.models.pool import ModelPool
from gateway.policies import Policy
from gateway.retrieval.retrieve import Retriever
from gateway.settings import Settings
from gateway.tools.passages import ToolPassages
from gateway.triage.triager import Triager
from gateway.trust.badge import Badger
from gateway.verification.verifier import Verifier
from gateway.verification.verify import ClaimChecker


def utc_today() -> dt.date:
    """The process's clock: today's date in UTC."""
    return dt.datetime.now(dt.UTC).date()


@dataclass(frozen=True)
class DraftParts:
    """What the draft and its checks (``pipeline.draft_check.draft_and_check``) use, and nothing more of
    the ``Services``: the draft stage's drafter and the split, verify and cleanup components."""

    drafter: Drafter
    splitter: Splitter
    checker: ClaimChecker
    cleaner: SentenceCleaner


@dataclass(frozen=True)
class EndingParts:
    """What a run's ending (``pipeline.ending.Ending``: refuse, fail, finish, interrupted) uses, and
    nothing more of the ``Services``: the badge stage, the notes and messages an answer ends with, and
    the record side. ``pipeline.run.answer`` reads its tool steps, messages, metrics and trail too
    (``AnswerParts.ending``): each is held here only."""

    badger: Badger
    notes: ReplyNotes
    messages: Messages
    """The refusal messages and the notes an answer ends with (the refusal of an answer its cleanup
    refused among them)."""
    metrics: GatewayMetrics
    """What the request's stage runner and its sink count into; a failed draft is counted by its type
    (``metrics.count_draft_failure``)."""
    tools: ToolPassages
    """The tool steps: the calls a request asks for, triage lifted for them, the passages offered; counts
    the request's tool calls when it is recorded."""
    trail: AuditTrail
    """The record side: the provisional row is written with it (``record_start``), and the record."""


@dataclass(frozen=True)
class AnswerParts:
    """What ``pipeline.run.answer`` uses, and nothing more of the ``Services``: the two stages before the
    draft, the request's model deadline, and the parts it hands the draft (``DraftParts``) and the
    ending (``EndingParts``). Built once, with the ``Services`` that hold them
    (``Services.answer_parts``)."""

    triager: Triager
    retriever: Retriever
    deadline: float
    """Seconds within which every model call of one request must end (``GATEWAY_UPSTREAM_DEADLINE``)."""
    draft: DraftParts
    """What the draft read as it streams, and checked sentence by sentence, is handed."""
    ending: EndingParts
    """What the run's ending (badge, hand over, record) is handed; ``answer`` reads the tool steps, the
    messages, the metrics and the audit trail from it too (each held once)."""


@dataclass(frozen=True)
class Services:
    """Built once at start-up (``bootstrap.build_services``) and never changed: a test that wants another
    component builds other Services with it (``dataclasses.replace``; ``tests.support.components``)."""

    settings: Settings
    policy: Policy
    embedder: Embedder
    store: KnowledgeStore
    models: ModelPool
    """The chat models of the process (``bootstrap.build_models``): the upstream, rewriter and judge
    models come from it; closing it closes every model client once."""
    drafter: Drafter
    """The draft stage (``Drafter``: the upstream behind the citation contract, built at start-up)."""
    verifier: Verifier
    messages: Messages
    metrics: GatewayMetrics
    audit: AuditStore
    triager: Triager
    """The triage stage (``bootstrap.build_triager``: the exemplar banks encoded once, at start-up)."""
    retriever: Retriever
    """The retrieve stage (``store``, the retrieval policy and ``query_rewriter``, built at start-up)."""
    splitter: Splitter
    """The split stage (``claims.splitter.SentenceSplitter``: the reply's bounds, built at start-up)."""
    checker: ClaimChecker
    """The verify stage (``verifier``, built at start-up)."""
    cleaner: SentenceCleaner
    """The cleanup stage (``bootstrap.build_cleaner``: the rewriter, the cleanup policy, the rewrite cap)."""
    badger: Badger
    """The badge stage (``trust.badge.TierBadger``: the tiers policy and the clock)."""
    tools: ToolPassages
    """The tool steps (``tools.passages.ToolPassages``: the tool policy, the quote threshold, the clock
    and the metrics): triage lifted for tools, the passages offered, the calls counted."""
    notes: ReplyNotes
    """The notes after an in-scope reply (``messages.ReplyNotes``: the messages it renders)."""
    trail: AuditTrail
    """The record side of a request: ``audit`` and ``metrics`` with what each record names."""
    today: Callable[[], dt.date]
    """The process's one clock (``utc_today``): the badger's and the pages' (``bootstrap`` hands both the
    same one)."""
    fetcher: SafeFetcher
    """The process's SSRF-safe web fetcher (``bootstrap.build_fetcher``); shared so its cache is."""
    query_rewriter: QueryRewriter | None = None
    """The upstream model's query rewrite before retrieval (``GATEWAY_QUERY_REWRITE``; off: None)."""
    answer_parts: AnswerParts = field(init=False, repr=False, compare=False)
    """What ``answer`` is handed (``AnswerParts``), built here from the fields above."""

    def __post_init__(self) -> None:
        draft = DraftParts(self.drafter, self.splitter, self.checker, self.cleaner)
        ending = EndingParts(self.badger, self.notes, self.messages, self.metrics, self.tools, self.trail)
        answer_parts = AnswerParts(
            triager=self.triager,
            retriever=self.retriever,
            deadline=self.settings.upstream_deadline,
            draft=draft,
            ending=ending,
        )
        object.__setattr__(self, "answer_parts", answer_parts)  # frozen: the one place it is set

    async def aclose_models(self) -> None:
        """Close the upstream and every chat model of the process (each client once)."""
        await self.drafter.aclose()
        await self.models.aclose()
