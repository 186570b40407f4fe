"""Span attributes: each stage's outcome (counts, labels, scores) and the draft's GenAI attributes.

Counts and labels only: no patient text, unless content capture is on (then the conversation and the
draft ride on the draft span as ``gen_ai.input.messages`` / ``gen_ai.output.messages``, JSON as the
GenAI semantic conventions state them). A stage whose result this module does not know gets no
outcome attributes beyond ``gateway.stage.outcome``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from opentelemetry.util.types import AttributeValue

from gateway.cleanup.cleaner import CleanupStep
from gateway.domain import (
    ChatRequest,
    Draft,
    Retrieval,
    SplitReply,
    Triage,
    TrustReport,
    UrgencyRead,
    Verdict,
)
from gateway.drafting.contract import DraftEnd, DraftSentence
from gateway.vocabulary import StageName

Attributes = dict[str, AttributeValue]


@runtime_checkable
class Recorded(Protocol):
    """What the record stage's span reads of the request's result (``pipeline.result.PipelineResult``,
    named by shape: telemetry sits below the pipeline)."""

    request_id: str
    interruption: object


def draft_attributes(
    args: Sequence[object], request_model: str, provider: str, capture_content: bool
) -> Attributes:
    """The GenAI request attributes of the draft (the model call), known before it runs."""
    attributes: Attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": request_model,
        "gen_ai.provider.name": provider,
    }
    request = next((a for a in args if isinstance(a, ChatRequest)), None)
    if request is None:
        return attributes
    if request.temperature is not None:
        attributes["gen_ai.request.temperature"] = request.temperature
    if request.max_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = request.max_tokens
    if capture_content:
        messages = [
            {"role": m.role.value, "parts": [{"type": "text", "content": m.content}]}
            for m in request.messages
        ]
        attributes["gen_ai.input.messages"] = json.dumps(messages, ensure_ascii=False)
    return attributes


def outcome_attributes(
    stage: str, args: Sequence[object], result: object, capture_content: bool
) -> Attributes:
    """What the stage produced, as attributes named ``gateway.<stage>.*`` (and ``gen_ai.*`` for the draft)."""
    if isinstance(result, Triage):
        return _triage(result)
    if isinstance(result, Retrieval):
        return {
            "gateway.retrieve.passages": len(result.passages),
            "gateway.retrieve.best_relevance": round(result.best_relevance, 4),
            "gateway.retrieve.relevant": result.relevant,
        }
    if isinstance(result, Draft):
        return _draft(result, capture_content)
    if isinstance(result, UrgencyRead):
        return {
            "gateway.draft.part": "urgency",
            "gateway.draft.urgency": result.level.value if result.level else "none",
        }
    if isinstance(result, DraftSentence):
        return {"gateway.draft.part": "sentence", "gateway.draft.citations": len(result.source_numbers)}
    if isinstance(result, DraftEnd):
        return _draft_end(result, capture_content)
    if isinstance(result, SplitReply):
        return {
            "gateway.split.statements": len(result.statements),
            "gateway.split.claims": sum(1 for s in result.statements if s.is_claim),
            "gateway.split.instruction": result.instruction,
        }
    if isinstance(result, CleanupStep):
        return _cleanup(result)
    if isinstance(result, TrustReport):
        return _badge(result)
    if stage == StageName.VERIFY and isinstance(result, list | tuple):
        return _verify([v for v in result if isinstance(v, Verdict)])
    recorded = next((a for a in args if isinstance(a, Recorded)), None)
    if recorded is not None:
        return {
            "gateway.request.id": recorded.request_id,
            "gateway.record.interrupted": bool(recorded.interruption),
        }
    return {}


def _triage(triage: Triage) -> Attributes:
    attributes: Attributes = {
        "gateway.triage.scope": triage.scope.value,
        "gateway.triage.layer": triage.layer.value,
        "gateway.triage.questions": len(triage.questions),
    }
    if triage.rule:
        attributes["gateway.triage.rule"] = triage.rule
    return attributes


def _draft(draft: Draft, capture_content: bool) -> Attributes:
    attributes: Attributes = {
        "gateway.draft.format": draft.format.value,
        "gateway.draft.claims": len(draft.claims),
        "gateway.draft.upstream_ms": round(draft.upstream_seconds * 1000, 3),
    }
    if capture_content:
        output = [{"role": "assistant", "parts": [{"type": "text", "content": draft.answer}]}]
        attributes["gen_ai.output.messages"] = json.dumps(output, ensure_ascii=False)
    return attributes


def _draft_end(end: DraftEnd, capture_content: bool) -> Attributes:
    """The last part of a streamed draft: the whole reply's time (and, when captured, its text)."""
    attributes: Attributes = {
        "gateway.draft.part": "end",
        "gateway.draft.upstream_ms": round(end.seconds * 1000, 3),
    }
    if capture_content:
        output = [{"role": "assistant", "parts": [{"type": "text", "content": end.raw}]}]
        attributes["gen_ai.output.messages"] = json.dumps(output, ensure_ascii=False)
    return attributes


def _verify(verdicts: Sequence[Verdict]) -> Attributes:
    labels: Mapping[str, int] = Counter(v.label.value for v in verdicts)
    attributes: Attributes = {
        "gateway.verify.claims": len(verdicts),
        "gateway.verify.model_failures": sum(1 for v in verdicts if v.failure),
    }
    attributes.update({f"gateway.verify.{label}": count for label, count in labels.items()})
    return attributes


def _cleanup(step: CleanupStep) -> Attributes:
    """One cleanup step (a sentence judged, or the draft's end): the sentences it made final, and the
    refusal it stopped the answer on, if any."""
    attributes: Attributes = {
        "gateway.cleanup.released": len(step.ready),
        "gateway.cleanup.stopped": step.stop is not None,
    }
    if step.stop is not None:
        attributes["gateway.cleanup.reason"] = step.stop[0].value
    return attributes


def _badge(report: TrustReport) -> Attributes:
    summary = report.summary
    attributes: Attributes = {
        "gateway.badge.claims": summary.claims,
        "gateway.badge.supported": summary.supported,
        "gateway.badge.rewritten": summary.rewritten,
        "gateway.badge.removed": summary.removed,
        "gateway.badge.refused": summary.refused,
    }
    if summary.trust_score is not None:
        attributes["gateway.badge.trust_score"] = summary.trust_score
    if summary.reason is not None:
        attributes["gateway.badge.reason"] = summary.reason.value
    return attributes
