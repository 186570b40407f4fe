"""What a message says, as triage's evidence: health terms, red-flag signs, negation, history, vitals.

Everything here is rules over the words (no embedding): fast, and it names what it found, so that the
patient's safety message and the clinician's view can say which signs decided.

- **Terms** (``policies/triage/evidence.yaml``) are matched per sentence by the product's stem
  (``gateway.stemming``) or by pattern; a sign whose words are negated ("no bleeding", "denies chest
  pain", "without fever": ``NegationPolicy`` of ``triage.yaml``) does not count as a sign, but still
  counts as health content. A pattern runs only on a sentence holding the literals it needs (``prefilter``).
- **Time** (``gateway.triage.tense``, read once per sentence): a sentence of history ("had a bleed in
  2019", "we ended up in A&E"), a question about a topic, or a supposing clause ("what if") gives no
  signs of now.
- **Signs** of a red-flag category (``requires``) are combined over a window of consecutive sentences;
  a long post is judged by its worst window, never by an average. ``escalate`` makes signs plus a
  severity word an emergency on their own.
- **Vitals** (``triage_vitals``): values outside the age's published limits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from gateway import stemming
from gateway.triage.clauses import attached, clauses, joined_by_dash
from gateway.triage.evidence_policy import EvidencePolicy, SignRule
from gateway.triage.found import Hit, Reading, Sentence, Signs
from gateway.triage.policy import NegationPolicy
from gateway.triage.prefilter import fold, may_match
from gateway.triage.tense import Matcher, Memo, SentenceTime, TenseReader
from gateway.triage.term_search import PatternSearch, Prefilter, PressureSearch, Span, TermSearch
from gateway.triage.vitals_policy import PressureSign

_POSSESSIVE = re.compile(r"\b(my|his|her|our|their)\s+(\S+\s+){0,2}$", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['\u2019][A-Za-z]+)*")
_LAST_WORD = re.compile(r"[A-Za-z0-9]+\W*$")
_LOOKAHEAD = 40  # characters after a negation's scope a pseudo-negation pattern may look ahead at

_FUL = re.compile(r"ful(s)?\b", re.IGNORECASE)
"""Snowball strips "-ful" ("handful" -> "hand", "cupful" -> "cup", "mouthful" -> "mouth"): a listed word
so ending is matched whole (and its plural), never by stem, so that "my hands" is no amount."""


def _whole(word: str) -> re.Pattern[str]:
    """A listed word or phrase matched as written (its "-ful" words with or without a plural "s")."""
    words = [_FUL.sub("fuls?", re.escape(w)) for w in word.lower().split()]
    return re.compile(r"\b" + r"\s+".join(words) + r"\b", re.IGNORECASE)


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def stem(word: str) -> str:
    """The product's stem (``gateway.stemming``) of a word as written (any case, apostrophes dropped)."""
    return stemming.stem(word.lower().replace("'", "").replace("\u2019", ""))


def listed_stems(word: str) -> tuple[str, ...] | None:
    """The stems a listed word or phrase is matched by, word by word, or None when it is matched as
    written ("-ful" words). A stem matches every word with that stem, so a term written in one form is
    also read in its other senses ("resting" is matched by "a rest"): tests/fixtures/triage/
    stemmed_words.yaml lists the single words reviewed for that (#31, s60)."""
    if _FUL.search(word):
        return None
    return tuple(stem(t) for t in _TOKEN.findall(word))


def _pseudo(negation: NegationPolicy) -> tuple[str, ...]:
    """The pseudo-negations: ``negation.pseudo`` and every other form of a negative a sign is told with
    (``negation.forms``)."""
    return (*negation.pseudo, *(p for forms in negation.forms.values() for p in forms))


def negated(text: str, start: int, negation: NegationPolicy, since: int = 0) -> bool:
    """Whether the words just before ``start`` (same clause, within the window, from ``since`` on) negate
    what follows."""
    before = text[:start]
    cut = since
    for pattern in negation.terminators:
        for match in _compiled(pattern).finditer(before):
            cut = max(cut, match.end())
    scope = " ".join(before[cut:].split()[-negation.window_words :])
    # a pseudo-negation is read with the words that follow it, so that its pattern can look ahead ("not
    # working hard to breathe" is no pseudo "not working"), but only one lying wholly in scope is removed
    after = f" {text[start : start + _LOOKAHEAD]}"
    for pattern in _pseudo(negation):
        for match in list(_compiled(pattern).finditer(scope + after)):
            if match.end() <= len(scope):
                scope = scope[: match.start()] + " " * (match.end() - match.start()) + scope[match.end() :]
    return any(_compiled(p).search(scope) for p in negation.cues)


class EvidenceReader:
    """Reads texts against ``evidence.yaml`` (built once per policy)."""

    def __init__(
        self,
        policy: EvidencePolicy,
        negation: NegationPolicy,
        pressures: Mapping[str, PressureSign],
        prefilter: Prefilter = may_match,
    ) -> None:
        """``pressures``: ``vitals.yaml`` ``pressure_signs``, the limits of the groups reading a pressure;
        ``prefilter``: whether a pattern may match a sentence, asked before it is searched."""
        self.policy = policy
        self.negation = negation
        self._phrases: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._suffixes: list[tuple[str, tuple[str, ...]]] = []
        # a group's patterns and readers, in the order of the groups (``term_search``)
        self._searches: list[TermSearch] = []
        self._paired: list[PatternSearch] = []  # also read across a dash (``TermGroup.pairs``)
        for name, group in policy.terms.items():
            prefixes = [re.escape(w.rstrip("*").lower()) for w in group.words if w.endswith("*")]
            suffixes = tuple(w.lstrip("*").lower() for w in group.words if w.startswith("*"))
            if suffixes:
                self._suffixes.append((name, suffixes))
            if prefixes:
                prefixed = re.compile(r"\b(?:" + "|".join(prefixes) + r")\w*", re.IGNORECASE)
                self._searches.append(PatternSearch.of(name, prefixed, prefilter))
            for word in group.words:
                if word.endswith("*") or word.startswith("*"):
                    continue
                stems = listed_stems(word)
                if stems is None:
                    self._searches.append(PatternSearch.of(name, _whole(word), prefilter))
                elif stems:
                    self._phrases.setdefault(stems[0], []).append((stems, name))
            # each pattern compiled on its own: one alternation of them all defeats re's prefix scan
            self._searches.extend(
                PatternSearch.of(name, re.compile(p, re.IGNORECASE), prefilter) for p in group.patterns
            )
            paired = [
                PatternSearch.of(name, _compiled(p), prefilter) for pair in group.pairs for p in pair.patterns
            ]
            self._searches.extend(paired)
            self._paired.extend(paired)
            if group.reads is not None:  # read by ``pressure.py``, in the group's place
                self._searches.append(PressureSearch(name, pressures.get(name)))
        for entries in self._phrases.values():
            entries.sort(key=lambda entry: -len(entry[0]))
        self._forms = [
            (tuple(stem(t) for t in _TOKEN.findall(word)), _compiled(pattern))
            for word, patterns in negation.forms.items()
            for pattern in patterns
        ]
        self._unless = {name: Matcher(group.unless) for name, group in policy.terms.items() if group.unless}
        self._dated = frozenset(n for n, g in policy.terms.items() if g.unless and g.unless_scope == "term")
        self._history_counts = frozenset(n for n, g in policy.terms.items() if g.history_counts)
        self._dates = policy.term_dates.parts
        # a red flag's own signs are health content too
        required = {g for rule in policy.categories.values() for groups in rule.requires for g in groups}
        self._core = frozenset(policy.health_gate)
        self._gate = frozenset(policy.health_gate) | required
        self._figurative = [_compiled(p) for p in policy.figurative]
        self.tense = TenseReader(policy, negation, self._possessed)

    def literal(self, text: str) -> str:
        """``text`` with its figurative wording (``evidence.yaml`` ``figurative``) blanked: idioms are
        not signs, nor health content."""
        for pattern in self._figurative:
            text = pattern.sub(lambda m: " " * len(m.group(0)), text)
        return text

    def sentences(
        self, text: str, memo: Memo | None = None, history: frozenset[str] = frozenset()
    ) -> list[Sentence]:
        """The text's sentences, each with when it speaks of (``gateway.triage.tense``); ``memo``: the
        request's tense clues per sentence (``TenseReader.clues``); ``history``: sentences read as
        history in the text ``text`` was cut from (``RuleReadings.history``), history here too."""
        parts = clauses(self.literal(text))
        times = self.tense.read(
            [p.text for p in parts], [p.paragraph for p in parts], memo, [p.end for p in parts]
        )
        return [
            Sentence(p.text, replace(when, history=True) if p.text.strip() in history else when, p.end)
            for p, when in zip(parts, times, strict=True)
        ]

    def _possessed(self, sentence: str) -> bool:
        """Whether a term of ``asking.possessed`` groups follows a possessive ("is my chest pain
        serious?", "why is his breathing so fast"): a question about someone's own complaint."""
        groups = set(self.policy.asking.possessed)
        unread = Sentence(sentence, SentenceTime(False, False, (), False))
        for start, hit in self._words(unread, 0):
            if hit.group in groups and _POSSESSIVE.search(sentence[:start]):
                return True
        return False

    def read(self, text: str, memo: Memo | None = None, history: frozenset[str] = frozenset()) -> Reading:
        """Every term of ``text``, each sentence read for when it speaks of (see ``sentences``)."""
        sentences = self.sentences(text, memo, history)
        hits: list[Hit] = []
        for index in range(len(sentences)):
            hits.extend(self._hits(sentences, index))
        health = any(h.group in self._gate for h in hits)
        core = any(h.group in self._core for h in hits)
        return Reading(tuple(sentences), tuple(hits), health, core, self.tense.resolved(text))

    def over(self, reading: Reading) -> frozenset[str]:
        """The red flags whose history fires (``history_fires``) told as over in a text: it says an
        episode ended (``resolved``) and names their signs only as history ("had thoughts of ending my
        life a few years ago ... I've been well since")."""
        if not reading.resolved:
            return frozenset()
        found = []
        for name, rule in self.policy.categories.items():
            needed = {g for alternatives in rule.requires for g in alternatives}
            mentioned = [h for h in reading.hits if h.group in needed and not h.negated]
            if (
                rule.history_fires
                and any(h.background for h in mentioned)
                and all(h.background or h.supposed for h in mentioned)
            ):
                found.append(name)
        return frozenset(found)

    def _hits(self, sentences: Sequence[Sentence], index: int) -> Iterable[Hit]:
        """The hits of sentence ``index``; a group's ``unless`` is read (with its dash-joined clauses)
        only when that group is found in it; a pair is read across a dash too."""
        sentence = sentences[index]
        spans = sentence.when.supposed
        excepted: dict[str, bool] = {}
        dashed: str | None = None
        for start, hit in [*self._words(sentence, index), *self._across_dash(sentences, index)]:
            matcher = self._unless.get(hit.group)
            if matcher is not None and hit.group in self._dated:
                if attached(sentence.text, start, start + len(hit.text), matcher, self._dates):
                    continue  # its date, where it is told, keeps it out (``TermGroup.unless_scope``)
            elif matcher is not None:
                if hit.group not in excepted:
                    if dashed is None:
                        dashed = joined_by_dash(sentences, index)
                    excepted[hit.group] = matcher(dashed)
                if excepted[hit.group]:
                    continue  # not a sign in this sentence (``TermGroup.unless``)
            if any(a <= start < b for a, b in spans):
                yield Hit(
                    hit.group, hit.text, hit.sentence, hit.negated, hit.background, True, sentence.asked
                )
            else:
                yield hit

    def _words(self, sentence: Sentence, index: int) -> Iterable[tuple[int, Hit]]:
        text = sentence.text
        matches = list(_TOKEN.finditer(text))
        written = [(m.start(), m.end(), stem(m.group(0))) for m in matches]
        long_words = [(m, w) for m in matches if len(w := m.group(0).lower()) > 5]
        for group, suffixes in self._suffixes:
            for match, word in long_words:
                if word.endswith(suffixes):
                    yield (
                        match.start(),
                        self._hit(group, text, match.start(), match.end(), index, sentence.background),
                    )
        # the phrases of the words as written, and those the other forms of a negative add ("nobody can
        # wake him": "can't wake him"); the words as written still count ("nobody can" is despair's too)
        seen: set[tuple[int, int, str]] = set()
        told = self._told(text, written)
        for tokens in (written, told) if told != written else (written,):
            stems = [t[2] for t in tokens]
            for i, (start, _, first) in enumerate(tokens):
                for phrase, group in self._phrases.get(first, ()):
                    if tuple(stems[i : i + len(phrase)]) == phrase:
                        end = tokens[i + len(phrase) - 1][1]
                        if (start, end, group) not in seen:
                            seen.add((start, end, group))
                            yield start, self._hit(group, text, start, end, index, sentence.background)
        folded = fold(text)
        for search in self._searches:
            for start, end, flags in search.spans(text, folded):
                yield start, self._pattern_hit(search.group, text, (start, end, flags), index, sentence)

    def _told(self, text: str, tokens: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
        """``tokens`` with each other form of a negative (``negation.forms``: "haven't been able to",
        "no one can") read as its written form ("can't"): the tokens of the written form, each spanning
        the whole match, stand for the tokens the match covers."""
        found = sorted(((m, w) for w, p in self._forms for m in p.finditer(text)), key=lambda f: f[0].start())
        done = 0
        for match, written in found:
            if match.start() < done:
                continue  # overlaps a form already read
            inside = [i for i, t in enumerate(tokens) if t[0] >= match.start() and t[1] <= match.end()]
            if inside:
                first, last = inside[0], inside[-1]
                span = (tokens[first][0], tokens[last][1])
                tokens = [*tokens[:first], *((*span, w) for w in written), *tokens[last + 1 :]]
                done = match.end()
        return tokens

    def _across_dash(self, sentences: Sequence[Sentence], index: int) -> Iterable[tuple[int, Hit]]:
        """A pair's part and state on either side of a dash ("my left arm - it's gone weak")."""
        sentence = sentences[index]
        if sentence.end != "-" or index + 1 >= len(sentences):
            return
        cut, joined = len(sentence.text), f"{sentence.text} - {sentences[index + 1].text}"
        for search in self._paired:
            for start, end, flags in search.spans(joined, fold(joined)):
                if start < cut < end:
                    yield start, self._pattern_hit(search.group, joined, (start, end, flags), index, sentence)

    def _pattern_hit(self, group: str, text: str, span: Span, index: int, sentence: Sentence) -> Hit:
        start, end, flags = span
        last = _LAST_WORD.search(text[start:end])
        return self._hit(
            group,
            text,
            start,
            end,
            index,
            sentence.background,
            start + last.start() if last is not None else None,
            flags,
        )

    def _hit(
        self,
        group: str,
        text: str,
        start: int,
        end: int,
        index: int,
        background: bool,
        last: int | None = None,
        flags: tuple[int, ...] = (),
    ) -> Hit:
        """``last``: where a pattern's final word starts: a pattern spanning a negation ("breathing is not
        hard") is negated by what stands before its final word too. ``flags``: where the pattern's
        red-flag parts start (``flag_parts``): each is read as the rule layer reads it, so that a denial
        further from the final word than the window still denies ("my leg has never been more swollen
        than the other")."""
        negatable = self.policy.terms[group].negatable
        is_negated = negatable and (
            negated(text, start, self.negation)
            or any(negated(text, flag, self.negation) for flag in flags if flag > start)
            or (last is not None and last > start and negated(text[:end], last, self.negation, since=start))
        )
        return Hit(group, text[start:end], index, is_negated, background)

    # --- red-flag signs -----------------------------------------------------------------------

    def denied(self, reading: Reading, category: str) -> bool:
        """Whether the message denies this red flag's signs ("no chest pain", "no stiff neck or rash"):
        for one of its ``requires`` lists, a sign is named only in denial and none of the list is
        present (``negation.denials``); or, for a red flag whose history fires, its signs are only
        history in a text read as resolved (``Reading.resolved``: the message says it is over); or,
        for any other (``episode.history_denies``), one of its required signs is told only as history."""
        rule = self.policy.categories.get(category)
        if rule is None or not self.negation.denials:
            return False
        current = [h for h in reading.hits if not h.background and not h.supposed]
        if reading.resolved and rule.history_fires:
            needed = {g for alternatives in rule.requires for g in alternatives}
            past = any(h.background and h.group in needed for h in reading.hits)
            if past and not any(h.group in needed and not h.negated for h in current):
                return True  # told as over in this text ("had thoughts of ending it, well since")
        for alternatives in rule.requires:
            found = [h for h in current if h.group in alternatives]
            if found and all(h.negated for h in found):
                return True  # one of its required signs denied ("no stiff neck, no rash"), none present
        if self.policy.episode.history_denies and not rule.history_fires:
            for alternatives in rule.requires:
                if any(self.policy.terms[g].anywhere for g in alternatives):
                    continue  # who the message is about ("pregnant") is not an episode
                named = [h for h in reading.hits if h.group in alternatives and not h.negated]
                if named and all(h.background and not reading.sentences[h.sentence].when.now for h in named):
                    return True  # one of its required signs told only as history ("had a bleed in 2019")
        return False

    def reassured(self, reading: Reading, category: str, signs_met: bool = False) -> bool:
        """Whether the text tells what is well now (``reassurance.well`` said, or ``reassurance.denied``
        denied) and no sign of acuity (``reassurance.acuity``) said of now: the semantic layers may not
        decide ``category`` alone (``evidence.yaml`` ``reassurance``; ``signs_met``: its own signs
        are present, which ``applies_to: unbound`` leaves to the semantic layers). A statement of safety
        is read apart, once, for the red flag that would be raised (``states_safe``)."""
        policy = self.policy.reassurance
        if not policy.enabled or category in policy.exempt:
            return False
        if signs_met and policy.applies_to == "unbound":
            return False
        now = [h for h in reading.hits if not (h.background or h.supposed)]
        acuity = frozenset(policy.acuity)
        if any(h.group in acuity and not h.negated for h in now):
            return False
        well, denied = frozenset(policy.well), frozenset(policy.denied)
        return any((h.group in well and not h.negated) or (h.group in denied and h.negated) for h in now)

    def acuity_denied(self, reading: Reading, category: str) -> bool:
        """Whether the text denies, of now, what would make ``category``'s signs grave and affirms none
        of it (``reassurance.acuity_denied``): the groups of ``reassurance.acuity`` and of the red
        flag's ``escalate`` alternatives, less its required signs told of now."""
        policy = self.policy.reassurance
        rule = self.policy.categories.get(category)
        if not policy.acuity_denied or rule is None or category in policy.exempt:
            return False
        now = [h for h in reading.hits if not (h.background or h.supposed)]
        required = {g for alternatives in rule.requires for g in alternatives}
        told = {h.group for h in now if not h.negated and h.group in required}
        graver = (frozenset(policy.acuity) | {g for alt in rule.escalate for g in alt}) - told
        grave = [h for h in now if h.group in graver]
        return bool(grave) and all(h.negated for h in grave)

    def states_safe(self, reading: Reading, category: str) -> bool:
        """The person states they are safe now (the category's ``safe_when``) and tells nothing of
        ``safe_unless`` of now: "not thinking of hurting myself, I just can't function". The statement's
        own words are not told of now ("kill myself" of "I'm not going to kill myself")."""
        rule = self.policy.categories.get(category)
        if rule is None or not rule.safe_when:
            return False
        now = [h for h in reading.hits if not (h.background or h.supposed or h.negated)]
        safe = frozenset(rule.safe_when)
        statements = [h for h in now if h.group in safe]
        if not statements:
            return False
        unless = frozenset(rule.safe_unless)
        return not any(h.group in unless and not _within(h, statements) for h in now)

    def signs(self, reading: Reading, category: str, supposed: bool = False) -> Signs | None:
        """The category's signs in the worst window of sentences (escalated first), if met; with
        ``supposed``, signs in supposing clauses count too (what an information question asks about)."""
        rule = self.policy.categories.get(category)
        if rule is None:
            return None
        present = {h.group for h in reading.hits}
        if any(present.isdisjoint(alternatives) for alternatives in rule.requires):
            return None  # a required sign is nowhere in the text, so in no window (most categories)
        found: Signs | None = None
        history = rule.history_fires and not reading.resolved
        width = self.policy.window_sentences
        for start in range(max(1, len(reading.sentences) - width + 1)):
            window = range(start, start + width)
            hits = [
                h
                for h in reading.hits
                if (h.sentence in window or self.policy.terms[h.group].anywhere)
                and not h.negated
                and (history or not h.background or h.group in self._history_counts)
                and (supposed or (history and not h.asked) or not h.supposed)
            ]
            # a window never joins a sign told as history with one told of now (who the message is
            # about, an ``anywhere`` group, joins either)
            for told in (False, True) if history else (False,):
                same = [h for h in hits if h.background == told or self.policy.terms[h.group].anywhere]
                met = _met(rule, same)
                if met is None:
                    continue
                if met.escalated:
                    return Signs(category, met.hits, True)
                found = found or Signs(category, met.hits, False)
        return found


@dataclass(frozen=True)
class _Met:
    hits: tuple[Hit, ...]
    escalated: bool


def _met(rule: SignRule, hits: list[Hit]) -> _Met | None:
    groups = {h.group for h in hits}
    if not all(groups & set(alternatives) for alternatives in rule.requires):
        return None
    needed = {g for alternatives in rule.requires for g in alternatives}
    for alternative in rule.escalate:
        if set(alternative) <= groups:
            used = needed | set(alternative)
            return _Met(tuple(h for h in hits if h.group in used), True)
    return _Met(tuple(h for h in hits if h.group in needed), False)


def _within(hit: Hit, statements: list[Hit]) -> bool:
    """``hit``'s words are among those of a statement of its sentence (by text: words told twice in one
    sentence, once in the statement, are read as the statement's)."""
    words = hit.text.lower()
    return any(s.sentence == hit.sentence and words in s.text.lower() for s in statements)
