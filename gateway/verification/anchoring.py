"""Quote anchoring: the quote a claim carries must really occur in the passage it cites.

Exact match (after normalising case, quotes, dashes and whitespace) first, then rapidfuzz's best
partial alignment at a policy threshold. The matched span's offsets are reported in the passage's own
text so the clinician view can mark them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import anyio.to_thread
from rapidfuzz import fuzz

from gateway.domain import ClaimToCheck, Evidence, Passage, Span, Verdict, VerdictLabel
from gateway.text import normalise, strip_markers
from gateway.vocabulary import VerdictCheck, VerifierMethod


@dataclass(frozen=True)
class Anchor:
    span: Span
    score: float
    exact: bool


@lru_cache(maxsize=4096)
def _normalised_char(ch: str) -> str:
    return " " if ch.isspace() else normalise(ch)


@lru_cache(maxsize=256)
def _normalised_with_offsets(text: str) -> tuple[str, tuple[int, ...]]:
    """``normalise(text)`` plus, for each output character, its offset in ``text``.

    Kept for the last passages seen: every claim citing a passage aligns against the same text.
    """
    out: list[str] = []
    offsets: list[int] = []
    previous_space = True
    for i, ch in enumerate(text):
        piece = _normalised_char(ch)
        if piece == " " or piece == "":
            if not previous_space:
                out.append(" ")
                offsets.append(i)
            previous_space = True
            continue
        for c in piece:
            out.append(c)
            offsets.append(i)
        previous_space = False
    while out and out[-1] == " ":
        out.pop()
        offsets.pop()
    return "".join(out), tuple(offsets)


def find_quote(quote: str, passage_text: str, threshold: float) -> Anchor | None:
    """Locate ``quote`` in ``passage_text``; None when no alignment reaches ``threshold`` (0..1)."""
    needle = normalise(strip_markers(quote)).strip(" .\"'")
    if not needle:
        return None
    haystack, offsets = _normalised_with_offsets(passage_text)
    if not haystack:
        return None
    index = haystack.find(needle)
    if index >= 0:
        return Anchor(Span(offsets[index], offsets[index + len(needle) - 1] + 1), 1.0, True)
    alignment = fuzz.partial_ratio_alignment(needle, haystack, score_cutoff=threshold * 100)
    if alignment is None or alignment.score < threshold * 100:
        return None
    start, end = alignment.dest_start, alignment.dest_end
    if end <= start:
        return None
    return Anchor(Span(offsets[start], offsets[end - 1] + 1), alignment.score / 100, False)


class QuoteAnchoringVerifier:
    """Supported when the claim's quote is found in one of the sources it cites; nothing else.

    The weakest verifier: it proves the model did not invent its evidence, not that the evidence
    entails the claim. It is the first step of the cascade and the whole verifier only when
    configured so.
    """

    name = VerifierMethod.ANCHORING

    def __init__(self, threshold: float, min_chars: int) -> None:
        self._threshold = threshold
        self._min_chars = min_chars

    async def verify(self, claims: Sequence[ClaimToCheck]) -> list[Verdict]:
        """Off the event loop: fuzzy matching many claims against many passages is CPU work."""
        return await anyio.to_thread.run_sync(lambda: [self.check(claim) for claim in claims])

    def check(self, claim: ClaimToCheck) -> Verdict:
        if not claim.sources:
            return Verdict(
                VerdictLabel.UNSUPPORTED, 0.0, self.name, VerdictCheck.NO_SOURCE, "the claim cites no source"
            )
        quote = (claim.quote or "").strip()
        if len(quote) < self._min_chars:
            return Verdict(
                VerdictLabel.UNSUPPORTED,
                0.0,
                self.name,
                VerdictCheck.NO_QUOTE,
                "the claim carries no usable quote",
            )
        best: tuple[Anchor, int, Passage] | None = None
        for number, passage in claim.sources:
            anchor = find_quote(quote, passage.text, self._threshold)
            if anchor and (best is None or anchor.score > best[0].score):
                best = (anchor, number, passage)
        if best is None:
            return Verdict(
                VerdictLabel.UNSUPPORTED,
                0.0,
                self.name,
                VerdictCheck.QUOTE_NOT_FOUND,
                "the quote does not occur in the cited source",
            )
        anchor, number, passage = best
        evidence = Evidence(
            number, passage.id, passage.text[anchor.span.start : anchor.span.end], anchor.span
        )
        check = VerdictCheck.QUOTE_EXACT if anchor.exact else VerdictCheck.QUOTE_FUZZY
        return Verdict(
            VerdictLabel.SUPPORTED,
            anchor.score,
            self.name,
            check,
            "quote found in the cited source",
            evidence,
        )
