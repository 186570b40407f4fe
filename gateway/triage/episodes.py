"""Narrative grammar of a long post (#31 item 6): which sentences tell a completed episode.

A post's back-story rarely names a date: "we ended up in A&E", "back then", "she was diagnosed with",
"they said it was". Such a frame (``evidence.yaml`` ``episode.frames``) makes its sentence history, and
within a paragraph a run of sentences told in the past tense with nothing of now (``episode.past``,
``episode.now``) is one episode: history when any sentence of the run is ("He went stiff and his eyes
rolled back. We ended up in A&E."). Present tense or a time of now ("is", "I'm", "tonight", "an hour
ago", "again") keeps a sentence out of both, so "I had a stroke in 2019 and now my face is drooping
again" still reads its second clause as now.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gateway.triage.evidence_policy import EpisodePolicy


class Episodes:
    """``episode`` of ``evidence.yaml``, compiled once per policy."""

    def __init__(self, policy: EpisodePolicy) -> None:
        self.policy = policy
        self._frames = [re.compile(p, re.IGNORECASE) for p in policy.frames]
        self._past = [re.compile(p, re.IGNORECASE) for p in policy.past]
        self._now = [re.compile(p, re.IGNORECASE) for p in policy.now]

    def speaks_now(self, sentence: str) -> bool:
        return any(p.search(sentence) for p in self._now)

    def framed(self, sentence: str) -> bool:
        """A completed-episode frame, with nothing of now."""
        return not self.speaks_now(sentence) and any(p.search(sentence) for p in self._frames)

    def told(self, sentence: str) -> bool:
        """Told in the past tense, with nothing of now."""
        return any(p.search(sentence) for p in self._past) and not self.speaks_now(sentence)

    def history(
        self, sentences: Sequence[str], paragraphs: Sequence[int], history: Sequence[bool]
    ) -> list[bool]:
        """``history`` (each sentence read on its own) widened to every sentence of an episode's run.

        ``paragraphs``: each sentence's paragraph; a run never crosses a blank line unless
        ``episode.across_paragraphs``. A history sentence that also speaks of now ("he's back to
        normal") starts no run."""
        widened = list(history)
        member = [
            self.told(s) or (h and not self.speaks_now(s)) for s, h in zip(sentences, history, strict=True)
        ]
        run: list[int] = []
        for i in range(len(sentences) + 1):
            joins = i < len(sentences) and member[i]
            if joins and (not run or self.policy.across_paragraphs or paragraphs[run[-1]] == paragraphs[i]):
                run.append(i)
                continue
            if any(history[j] for j in run):
                for j in run:
                    widened[j] = True
            run = [i] if joins else []
        return widened
