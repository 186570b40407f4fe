"""Stage 4: split a draft into statements and tell claims from conversation.

Each sentence of the answer becomes one or more statements with its character span. A sentence the
model listed in ``claims`` takes that claim's citations and quote (several listed claims on one
sentence become several atomic statements sharing its span). Questions, acknowledgements and
disclaimers are conversational: they are kept but never need support, unless they cite a source.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from gateway.domain import Draft, DraftClaim, Span, Statement, StatementKind
from gateway.text import sentence_spans, strip_markers
from gateway.upstream.contract import markers_in

CLAIM_MATCH_MIN = 70.0
"""Least token-set similarity (0..100) for a listed claim to belong to an answer sentence."""

_ACKNOWLEDGEMENT = re.compile(
    r"^(hi|hello|thanks?|thank you|you'?re welcome|i'?m sorry|sorry|i understand|i hear you|"
    r"that sounds|good question|great question|i hope|glad|happy to help|of course|sure)\b",
    re.IGNORECASE,
)
_DISCLAIMER = re.compile(
    r"(not (a substitute|medical advice|able to diagnose)|general information|"
    r"(speak|talk|check) (to|with) (your|a) (doctor|gp|pharmacist|clinician|nurse|care team)|"
    r"(ask|contact|see) (your|a) (doctor|gp|pharmacist|clinician|nurse|care team)|"
    r"(the|my|these) (vetted )?sources? (do|does) not|(is|are) not covered by|"
    r"i could not find|i can'?t find)",
    re.IGNORECASE,
)


def classify(sentence: str) -> StatementKind:
    text = strip_markers(sentence).strip()
    if text.endswith("?"):
        return StatementKind.QUESTION
    if _ACKNOWLEDGEMENT.match(text) and len(text.split()) <= 12:
        return StatementKind.ACKNOWLEDGEMENT
    if _DISCLAIMER.search(text):
        return StatementKind.DISCLAIMER
    return StatementKind.CLAIM


def split(draft: Draft) -> list[Statement]:
    spans = sentence_spans(draft.answer)
    sentences = [draft.answer[s.start : s.end] for s in spans]
    listed = _assign_claims(draft.claims, sentences)
    statements: list[Statement] = []
    for index, (span, sentence) in enumerate(zip(spans, sentences, strict=True)):
        markers = markers_in(sentence)
        kind = classify(sentence)
        if kind is not StatementKind.CLAIM and not markers and not listed.get(index):
            statements.append(Statement(sentence, span, kind, sentence_index=index))
            continue
        claims = listed.get(index) or [DraftClaim(strip_markers(sentence), markers, None)]
        for claim in claims:
            numbers = claim.source_numbers or markers
            statements.append(
                Statement(claim.text, span, StatementKind.CLAIM, numbers, claim.quote, sentence_index=index)
            )
    return statements


def _assign_claims(claims: tuple[DraftClaim, ...], sentences: list[str]) -> dict[int, list[DraftClaim]]:
    """Map each listed claim to the answer sentence it states (best token-set match)."""
    plain = [strip_markers(s) for s in sentences]
    assigned: dict[int, list[DraftClaim]] = {}
    for claim in claims:
        scores = [fuzz.token_set_ratio(claim.text, s) for s in plain]
        if not scores:
            break
        best = max(range(len(scores)), key=scores.__getitem__)
        if scores[best] >= CLAIM_MATCH_MIN:
            assigned.setdefault(best, []).append(claim)
    return assigned


def sentence_text(draft: Draft, span: Span) -> str:
    return draft.answer[span.start : span.end]
