"""When a sentence speaks of (#31 items 2 and 6): now, history, a question about a topic, a supposition.

One reader, run once per sentence of a request, whose result every rule layer uses: the evidence
reader's signs (``gateway.triage.evidence``), the red-flag rules (which read the sentences of now), the
vital signs and the denials of the semantic layers. The patterns are the policy's
(``policies/triage/evidence.yaml`` and ``triage.yaml``'s ``negation``), each list compiled once into
one alternation:

- **history**: a sentence dated or placed in the past (``background``) and not brought back to now
  (``present``), or framed as a completed episode (``episode.frames``) with nothing of now
  (``episode.now``); widened to the run of past-tense sentences (``episode.past``) of one paragraph
  that tells the same episode ("He went stiff and his eyes rolled back. We ended up in A&E."); a state
  that stayed after a dated event ("I had a stroke in 2021, my arm is still weak": ``episode.residual``)
  with no change of now (``episode.residual_breaks``), and someone else's story told as news (a film, a
  TV drama, the news: ``episode.story``) with no change or time of now (``episode.changed``,
  ``residual_breaks``), are history too;
- **asked**: a question about a topic (``asking.openers``) that reports nothing of the person now
  (``asking.reports``, ``present``, ``negation.hypothetical_now``, a possessive before a complaint);
  read as a report when another sentence of the text reports now ("I took 40. How long until ...?");
- **supposed**: the clauses that suppose, ask or worry (``negation.hypothetical``, up to the clause's
  end: ``negation.terminators``) unless the clause brings it back to now, and what one wants to prevent
  or avoid (``negation.hypothetical_object``: the cue and its object only);
- **resolved** (of a whole text): it says an episode is over (``resolved``: "I've been well since").

Present tense or a time of now ("is", "I'm", "tonight", "an hour ago", "again") keeps a sentence out
of history, so "I had a stroke in 2019 and now my face is drooping again" still reads its second
clause as now.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from gateway.triage.evidence_policy import EvidencePolicy
from gateway.triage.policy import NegationPolicy

_BACKREFERENCE = re.compile(r"\\[1-9]|\(\?P=")


class Matcher:
    """Whether any of a list of patterns occurs in a text: one compiled alternation (each pattern
    alone when one refers back to a group of its own, which an alternation would renumber)."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self._one: re.Pattern[str] | None = None
        self._each: list[re.Pattern[str]] = []
        if any(_BACKREFERENCE.search(p) for p in patterns):
            self._each = [re.compile(p, re.IGNORECASE) for p in patterns]
        elif patterns:
            self._one = re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)

    def __call__(self, text: str) -> bool:
        if self._one is not None:
            return self._one.search(text) is not None
        return any(p.search(text) for p in self._each)

    def first(self, text: str, pos: int) -> int | None:
        """Where the first match at or after ``pos`` starts (None: none)."""
        if self._one is not None:
            found = self._one.search(text, pos)
            return found.start() if found is not None else None
        starts = [m.start() for p in self._each if (m := p.search(text, pos)) is not None]
        return min(starts, default=None)


def _names(sentence: str, event: str) -> bool:
    """Whether ``sentence`` names ``event`` as a word of its own."""
    return re.search(rf"\b{re.escape(event)}\b", sentence, re.IGNORECASE) is not None


Memo = dict[str, "Clues"]
"""One request's clues per sentence (``TenseReader.clues``), made per request and dropped with it."""


class Time(StrEnum):
    """What a sentence speaks of, as one value (``SentenceTime.time``)."""

    NOW = "now"
    HISTORY = "history"
    """Dated, framed as a completed episode, or part of one's run: gives no signs."""
    ASKED = "asked"
    """A question about a topic that reports nothing of now: its signs are asked about."""
    SUPPOSED = "supposed"
    """Of now, with clauses that suppose or worry ("what if ..."): those clauses give no signs."""


@dataclass(frozen=True)
class SentenceTime:
    """The reading of one sentence in its text."""

    history: bool
    asked: bool
    supposed: tuple[tuple[int, int], ...]
    """Spans of the sentence that suppose, ask or worry (the whole sentence when ``asked``)."""
    now: bool
    """Present tense or a time of now (``episode.now``): a history sentence saying so ("he's back to
    normal") starts no episode, and a sign told in it is not told only as history."""

    @property
    def time(self) -> Time:
        if self.history:
            return Time.HISTORY
        if self.asked:
            return Time.ASKED
        return Time.SUPPOSED if self.supposed else Time.NOW


@dataclass
class Clues:
    """What the patterns find in one sentence on its own (``TenseReader.clues``)."""

    now: bool
    dated: bool
    framed: bool
    past: bool
    opener: bool
    reports: bool
    confirms: bool
    supposed: tuple[tuple[int, int], ...]
    residual: bool = False
    """A state told as having stayed (``episode.residual``) with no time of its own (no ``background``,
    no ``residual_breaks``): its dated event may be told in a clause before (``episode.residual_reach``)."""
    breaks: bool = False
    """A change or a time of now (``episode.residual_breaks``, ``changed``), a regained function's words
    (``episode.recovered``) aside."""
    anchor: str = ""
    """The event a ``residual`` clause says it stayed since (a ``residual`` group ``event``), lower-cased."""
    possessed: bool | None = None
    """A possessive before a complaint; read only when needed (it reads the sentence's terms)."""


class TenseReader:
    """Reads when each sentence of a text speaks of (built once per policy).

    ``possessed``: whether a sentence names a complaint of ``asking.possessed`` just after a
    possessive ("is my chest pain serious?"), from the evidence reader's terms."""

    def __init__(
        self, policy: EvidencePolicy, negation: NegationPolicy, possessed: Callable[[str], bool]
    ) -> None:
        self.policy = policy
        episode = policy.episode
        self._now = Matcher(episode.now)
        self._frames = Matcher(episode.frames)
        self._past = Matcher(episode.past)
        self._background = Matcher(policy.background)
        self._present = Matcher(policy.present)
        self._reports = Matcher([*policy.asking.reports, *policy.present, *negation.hypothetical_now])
        self._clause_now = Matcher([*policy.present, *negation.hypothetical_now])
        self._openers = Matcher(policy.asking.openers)
        self._resolved = Matcher(policy.resolved)
        self._supposing = Matcher([*negation.hypothetical, *negation.hypothetical_object])
        self._hypothetical = [re.compile(p, re.IGNORECASE) for p in negation.hypothetical]
        self._objects = [re.compile(p, re.IGNORECASE) for p in negation.hypothetical_object]
        self._ends = Matcher(negation.terminators)
        self._possessed = possessed
        self._worries = Matcher(policy.asking.worries)
        self._confirms = Matcher(policy.asking.confirms)
        self._changes_after = frozenset(w.lower() for w in episode.changes_after)
        self._changed = Matcher([*policy.present, *episode.changed])
        self._unchanged = Matcher([*episode.unchanged, *episode.steady])
        self._steady = Matcher(episode.steady)
        self._continues = Matcher(episode.continues)
        self._residual = Matcher(episode.residual)
        self._residual_breaks = Matcher(episode.residual_breaks)
        self._story = Matcher(episode.story)
        residual = (re.compile(p, re.IGNORECASE) for p in episode.residual)
        self._anchors = [p for p in residual if "event" in p.groupindex]
        self._recovered = [re.compile(p, re.IGNORECASE) for p in episode.recovered]
        self._story_now = Matcher([*episode.changed, *episode.residual_breaks])

    def resolved(self, text: str) -> bool:
        """Whether ``text`` says an episode is over (``evidence.yaml`` ``resolved``)."""
        return self._resolved(text)

    def clues(self, sentence: str, memo: Memo | None = None) -> Clues:
        """Each list of patterns searched once in ``sentence`` (remembered in ``memo``: a request reads
        a sentence of its message in each text that holds it)."""
        if memo is not None and (known := memo.get(sentence)) is not None:
            return known
        now = self._now(sentence)
        background = self._background(sentence)
        unrecovered = self._without_recovery(sentence)
        clues = Clues(
            now=now,
            dated=(background and not self._present(sentence))
            or (self._steady(sentence) and not self._changed(sentence))
            or (background and self._residual(sentence) and not self._residual_breaks(unrecovered))
            or (self._story(sentence) and not self._story_now(sentence)),
            framed=not now and self._frames(sentence),
            past=self._past(sentence),
            opener=self._openers(sentence),
            reports=self._reports(sentence),
            confirms=self._confirms(sentence),
            supposed=self._supposed(sentence),
        )
        clues.breaks = self._residual_breaks(unrecovered) or self._story_now(unrecovered)
        clues.residual = not background and not clues.breaks and self._residual(sentence)
        if clues.residual:
            anchored = (m for p in self._anchors if (m := p.search(sentence)) is not None)
            clues.anchor = next((m.group("event").lower() for m in anchored), "")
        if memo is not None:
            memo[sentence] = clues
        return clues

    def _without_recovery(self, sentence: str) -> str:
        """``sentence`` with each regained function's words blanked ("she's walking again")."""
        for pattern in self._recovered:
            sentence = pattern.sub(lambda m: " " * len(m.group(0)), sentence)
        return sentence

    def _supposed(self, sentence: str) -> tuple[tuple[int, int], ...]:
        """Clauses that suppose, ask or worry: from the cue to the end of its clause, unless the
        clause brings it back to now."""
        if not self._supposing(sentence):
            return ()
        spans: list[tuple[int, int]] = []
        for pattern in self._hypothetical:
            for match in pattern.finditer(sentence):
                stop = self._ends.first(sentence, match.end())
                end = len(sentence) if stop is None else min(len(sentence), stop)
                if not self._clause_now(sentence[match.start() : end]):
                    spans.append((match.start(), end))
        for pattern in self._objects:  # the object alone: what follows it may report now
            spans.extend(m.span() for m in pattern.finditer(sentence) if not self._clause_now(m.group(0)))
        return tuple(sorted(spans))

    def _possesses(self, sentence: str, clues: Clues) -> bool:
        if clues.possessed is None:
            clues.possessed = self._possessed(sentence)
        return clues.possessed

    def _asks(self, sentence: str, clues: Clues) -> bool:
        return clues.opener and not clues.reports and not self._possesses(sentence, clues)

    def read(
        self,
        sentences: Sequence[str],
        paragraphs: Sequence[int],
        memo: Memo | None = None,
        ends: Sequence[str] = (),
    ) -> list[SentenceTime]:
        """When each sentence of one text speaks of. ``paragraphs``: each sentence's paragraph (an
        episode's run never crosses a blank line unless ``episode.across_paragraphs``); ``ends``: what
        ended each (``Clause.end``), read for a change set against a history clause. A text that says
        what it supposed has happened (``asking.confirms``) asks and supposes nothing."""
        clues = [self.clues(s, memo) for s in sentences]
        history = self._carried(sentences, clues, self._history(clues, paragraphs))
        if ends:
            history = self._changes(sentences, paragraphs, ends, clues, history)
        if any(c.confirms for c in clues):  # what was supposed has happened: "I already took them"
            return [SentenceTime(h, False, (), c.now) for c, h in zip(clues, history, strict=True)]
        asked = [self._asks(s, c) for s, c in zip(sentences, clues, strict=True)]
        if any(asked):
            # a report of now elsewhere: its questions are about it ("I took 40. How long until ...?");
            # with ``asking.same_paragraph``, only a report of the question's own paragraph that is not
            # a worry alone ("I'm so anxious it will happen again"): a long post's closing question
            # about a topic stays a question
            reporting = [
                not a and not h and (c.reports or self._possesses(s, c)) and not self._worries(s)
                for s, c, a, h in zip(sentences, clues, asked, history, strict=True)
            ]
            if not self.policy.asking.same_paragraph:
                asked = [False] * len(sentences) if any(reporting) else asked
            else:
                reported = {p for p, r in zip(paragraphs, reporting, strict=True) if r}
                asked = [a and p not in reported for a, p in zip(asked, paragraphs, strict=True)]
        return [
            SentenceTime(h, a, ((0, len(s)),) if a else c.supposed, c.now)
            for s, c, a, h in zip(sentences, clues, asked, history, strict=True)
        ]

    def _changes(
        self,
        sentences: Sequence[str],
        paragraphs: Sequence[int],
        ends: Sequence[str],
        clues: Sequence[Clues],
        history: list[bool],
    ) -> list[bool]:
        """A history clause (dated, not a completed episode's frame) that the next clause of its
        paragraph, going on about it (``episode.continues``), sets against a change of now ("on and
        off for a year, but tonight it's a bowlful") tells the complaint that changes: not history
        (``episode.changes_after``, ``changed``)."""
        kept = list(history)
        for i in range(len(sentences) - 1):
            after = ends[i].lstrip(",;- ").lower()
            if (
                history[i]
                and not clues[i].framed
                and not history[i + 1]
                and paragraphs[i] == paragraphs[i + 1]
                and after in self._changes_after
                and self._changed(f"{after} {sentences[i + 1]}")
                and self._continues(sentences[i + 1])
                and not self._unchanged(sentences[i + 1])
                and not self._resolved(sentences[i + 1])
            ):
                kept[i] = False
        return kept

    def _carried(self, sentences: Sequence[str], clues: Sequence[Clues], history: list[bool]) -> list[bool]:
        """A residual clause with no time of its own is history when a clause at most
        ``episode.residual_reach`` before it (read back over other such clauses) is dated history and no
        clause between tells a change or a time of now ("I had a stroke in 2021. My arm is still weak."),
        unless the next clause tells a change or a time of now ("But in the last hour ...", "Today she's
        suddenly slurring"): safety first, the deficit may be part of that change. A residual clause
        that names its event ("since the stroke", a ``residual`` group ``event``) reads back any number
        of clauses for a dated one naming that event."""
        reach = self.policy.episode.residual_reach
        kept = list(history)
        for i, clue in enumerate(clues):
            if not clue.residual or history[i]:
                continue
            if i + 1 < len(clues) and clues[i + 1].breaks:
                continue  # a change of now told next: the deficit may be part of it
            left, j = reach, i - 1
            while j >= 0 and (left > 0 or clue.anchor) and not clues[j].breaks:
                if history[j] and clues[j].dated and (left > 0 or _names(sentences[j], clue.anchor)):
                    kept[i] = True
                    break
                if not clues[j].residual:
                    left -= 1
                j -= 1
        return kept

    def _history(self, clues: Sequence[Clues], paragraphs: Sequence[int]) -> list[bool]:
        """Each sentence's own history (dated or framed), widened to every sentence of an episode's
        run: consecutive sentences of one paragraph told in the past or as history, with nothing of
        now; a run is history when any of its sentences is on its own."""
        own = [c.dated or c.framed for c in clues]
        widened = list(own)
        member = [not c.now and (c.past or o) for c, o in zip(clues, own, strict=True)]
        across = self.policy.episode.across_paragraphs
        run: list[int] = []
        for i in range(len(clues) + 1):
            joins = i < len(clues) and member[i]
            if joins and (not run or across or paragraphs[run[-1]] == paragraphs[i]):
                run.append(i)
                continue
            if any(own[j] for j in run):
                for j in run:
                    widened[j] = True
            run = [i] if joins else []
        return widened
