"""Restatement: a chat claim that says what its quote says, in the model's own words, is kept as written.

Quote binding (``binding.restates``) supports a claim whose every content word its quote's sentence
contains, up to inflection and the checks' synonym groups. A faithful paraphrase that names a
condition in lay words ("high blood pressure" for "hypertension") or hedges a flat statement
("usually") fails it and is rewritten to the source's sentence: safe, but the answer reads like a
patchwork of quotes. This module recognises the claims that differ from their quote's sentence only by

- inflection and word order (Snowball stems; function words and punctuation do not count);
- a listed term: a synonym or a lay/clinical pair of ``policies/restatements.yaml`` (``terms``), each
  occurrence in the claim and the source read as the group's first form;
- a hedge the claim adds (``hedges``): "may", "usually", "some people" on a statement the source makes
  flatly is a weaker claim. A claim that drops a source's hedge, or hedges less than the source
  ("usually" for "may"), is stronger: never a restatement, and a claim that binding supported is then
  unsupported too (``HEDGE_CHECK``). So is a claim whose quantifier is stronger than a qualified
  source's ("most" or "all" for "some", "often" for "can": ``quantifiers.stronger``). A negated hedge
  ("not usually") is never read as a hedge. Scale words are also compared word by word, each over the
  content words it governs (``_scale_change``): a claim never adds a ``downward`` word ("rarely",
  "few") nor drops its source's, never says an upward word where its source says a downward one
  ("often recurs" for "rarely recurs", "often" being elsewhere in the sentence too), never ranks a
  word above every source word over the same words ("usually" moved to the clause the source hedges
  with "sometimes"), and never adds a ``universal`` word ("always", "all");

and that restate the whole quote (every content word of the quote is in the claim). The explicit checks
(numbers and units, negation, opposites, quantifiers, entities) must pass on the texts with the terms
read as their group's first form, and none may clash on the texts as written: a restatement is never
weaker than the conflict checks. Such a claim is ``supported`` with the check ``restatement`` and a
reason naming what differs. The data file is validated when the verifier is built (start-up): a bad
entry stops start-up with a ConfigurationError naming the file and the entry.

``bind`` is the one place the cascade asks (``cascade.CascadeVerifier.combine``, chat path).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationInfo, model_validator, with_config

from gateway.resources import bundled
from gateway.settings import Settings
from gateway.text import strip_markers
from gateway.validation import FILE_CONFIG, field_error, load_file
from gateway.verification.binding import Binding, unshared_words
from gateway.verification.checks.all_checks import run_all
from gateway.verification.checks.analysis import Analyses
from gateway.verification.checks.data import CheckData
from gateway.verification.checks.quantifiers import stronger
from gateway.verification.checks.quantities import extract_quantities
from gateway.verification.checks.results import CheckOutcome, CheckResult
from gateway.verification.checks.words import WORD, WordData
from gateway.verification.policy import VerificationPolicy
from gateway.vocabulary import VerdictCheck

RESTATEMENT_FILE = "restatements.yaml"
RESTATEMENT_CHECK = VerdictCheck.RESTATEMENT
"""Verdict check of a claim kept as written because it restates its quote (this module)."""
HEDGE_CHECK = VerdictCheck.HEDGE_DROPPED
"""Verdict check of a claim that drops (or weakens) a hedge of its quoted source: a stronger claim."""

_ENTRY = re.compile(r"[a-z][a-z0-9'-]*(?: [a-z][a-z0-9'-]*)*")
_INFLECTION = r"(?:s|es|ed|d|ing)?"
"""Regular endings a listed word may carry in a text ("kidneys", "leads to"); other forms are listed."""
DOWN = -1
"""Rank of a ``downward`` scale word ("rarely", "few"): no hedge level, the scale's other direction."""
FLAT = 10**6
"""Hedge level of a text with no hedge: stronger than every listed level."""


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class RestatementTerms:
    """``policies/restatements.yaml``: the listed terms and hedges a restatement may differ by."""

    terms: tuple[tuple[str, ...], ...] = ()
    """Groups of words or phrases that state the same thing (a synonym or a lay/clinical pair); each
    occurrence is read as the group's first entry."""
    hedges: tuple[tuple[str, ...], ...] = ()
    """Hedges by level, the weakest first ("may" ... "usually"); a text's level is its weakest hedge's."""
    universal: tuple[str, ...] = ()
    """Words that claim every case ("always", "all"): the level above every hedge (``_scale_change``)."""
    downward: tuple[str, ...] = ()
    """Words that say a thing is rare ("rarely", "few"): the other direction of the scale."""

    @model_validator(mode="after")
    def _entries(self, info: ValidationInfo) -> RestatementTerms:
        """Every group and entry (``_check_entry``), read with the checks' word data (the load's
        context: ``load_restatement_terms``)."""
        data: CheckData = (info.context or {})["data"]
        seen: dict[str, tuple[str, str]] = {}
        """Entry key -> (its group, its place): an entry in two groups is an error."""
        lists: list[tuple[str, tuple[tuple[str, ...], ...]]] = [
            ("terms", self.terms),
            ("hedges", self.hedges),
        ]
        scales = (("universal", self.universal), ("downward", self.downward))
        lists += [(key, (words,)) for key, words in scales if words]
        for key, groups in lists:
            for i, group in enumerate(groups):
                if key == "terms" and len(group) < 2:
                    raise field_error(self, f"{key}[{i}]", "a group needs at least two entries")
                if not group:
                    raise field_error(self, f"{key}[{i}]", "must not be empty")
                for j, entry in enumerate(group):
                    where = f"{key}[{i}][{j}]"
                    _check_entry(self, where, entry, key, data)
                    other = seen.setdefault(_key(entry, data.words), (f"{key}[{i}]", where))
                    if other[0] != f"{key}[{i}]":
                        raise field_error(self, where, f"{entry!r} is already listed at {other[1]}")
        return self


def _check_entry(obj: object, where: str, entry: str, key: str, data: CheckData) -> None:
    """One listed entry: lower-case words, no quantity, no negation, not a function word alone."""
    if not _ENTRY.fullmatch(entry):
        raise field_error(obj, where, f"{entry!r} must be lower-case words separated by single spaces")
    if extract_quantities(entry, data.quantities):
        raise field_error(obj, where, f"{entry!r} states a quantity: numbers are the number check's")
    if re.search(rf"\b{data.words.cues.alternation('negation_cues')}\b", entry):  # the negation check's cues
        raise field_error(obj, where, f"{entry!r} contains a negation: reading it as another term flips it")
    if key == "terms" and all(w in data.words.stopwords for w in entry.split()):
        raise field_error(obj, where, f"{entry!r} is only function words: they never count")


def restatement_path(settings: Settings) -> Path:
    """``<policy_dir>/restatements.yaml``, else the bundled one (a policy directory without the file
    uses the bundled list)."""
    path = (settings.policy_dir or bundled("policies")) / RESTATEMENT_FILE
    return path if path.is_file() else bundled("policies") / RESTATEMENT_FILE


def load_restatement_terms(path: Path, data: CheckData) -> RestatementTerms:
    """Read and validate the file (``data``: the checks' word data, which entries are checked with); a
    bad entry raises ConfigurationError naming the file and entry."""
    return load_file(path, RestatementTerms, context={"data": data})


def _alternation(entries: Iterable[str], *, inflect: bool) -> str:
    """Entries as one alternation, longest first; ``inflect``: each word with its regular endings."""
    ending = _INFLECTION if inflect else ""
    ordered = sorted(set(entries), key=len, reverse=True)
    return "|".join(r"\s+".join(re.escape(w) + ending for w in e.split()) for e in ordered)


def _whole(alternation: str, flags: int = 0, after: str = "") -> re.Pattern[str]:
    """The alternation as whole words (not inside a word, a hyphenated word or a contraction)."""
    return re.compile(rf"(?<![\w'’-])(?:{alternation})(?![\w'’-]){after}", flags)


_NOT_A_DATE = r"(?!\s+\d)"
"""A hedge is not followed by a number: "may 5" is a date."""


@dataclass(frozen=True)
class _Reading:
    """A claim or source text with its listed terms read as their group's first entry."""

    text: str
    terms: tuple[str, ...]
    """The listed entries found (as written), for the reason."""


class Restatement:
    """Recognises restatements (see module doc); built once at start-up from the validated file."""

    def __init__(
        self, terms: RestatementTerms, scope_words: int, scope_overlap: float, data: CheckData
    ) -> None:
        """``scope_words``, ``scope_overlap``: a source hedge counts when at least ``scope_overlap`` of
        the first ``scope_words`` content words it governs are the claim's (``_source_level``). ``data``:
        the checks' word data (the verifier's)."""
        self._clause_break = data.polarity.clause_break
        self._words = data.words
        self._terms = terms
        self._scope_words = scope_words
        self._scope_overlap = scope_overlap
        self._head: dict[str, str] = {}
        for group in terms.terms:
            for entry in group:
                self._head[_key(entry, self._words)] = group[0]
        entries = [entry for group in terms.terms for entry in group]
        self._term_pattern = _whole(_alternation(entries, inflect=True), re.IGNORECASE) if entries else None
        self._levels = [
            _whole(_alternation(group, inflect=False), after=_NOT_A_DATE) for group in terms.hedges
        ]
        hedges = [entry for group in terms.hedges for entry in group]
        self._hedge_words = frozenset(w for entry in hedges for w in entry.split())
        self._up = len(terms.hedges)
        """Rank of a ``universal`` word: above every hedge level (a ``downward`` word's rank is ``DOWN``)."""
        self._rank = {_key(e, self._words): rank for rank, group in enumerate(terms.hedges) for e in group}
        self._rank.update({_key(e, self._words): self._up for e in terms.universal})
        self._rank.update({_key(e, self._words): DOWN for e in terms.downward})
        scale = [*hedges, *terms.universal, *terms.downward]
        self._scale = _whole(_alternation(scale, inflect=False), after=_NOT_A_DATE) if scale else None
        negation = data.words.cues.alternation("negation_cues")
        scaled = _alternation(scale, inflect=False)
        self._negated_scale = re.compile(rf"\b{negation}\s+(?:{scaled})(?![\w'’-])") if scale else None
        self._negated_hedge = (
            re.compile(rf"\b{negation}\s+(?:{_alternation(hedges, inflect=False)})(?![\w'’-])")
            if hedges
            else None
        )

    def _unhedged(self, text: str) -> str:
        """The text without its hedges, for comparing content words (the checks read it with them)."""
        return text if self._scale is None else self._scale.sub(" ", text.lower())

    def bind(self, claim: str, quote: str, context: str, binding: Binding, analyses: Analyses) -> Binding:
        """Binding's outcome for a chat claim, adjusted for restatement (the cascade's one call).

        ``quote``: the anchored quote as found in the passage; ``context``: its whole sentence(s).
        A claim binding supports stays supported unless it drops a hedge of its source; one binding
        rejects only for words its source lacks (no clash) is supported when it restates the quote.
        """
        text = strip_markers(claim)
        if binding.restates:
            dropped = (
                self._dropped_hedge(text, context)
                or _stronger(text, context, analyses)
                or self._scale_change(text, context)
            )
            return binding if dropped is None else Binding(False, HEDGE_CHECK, dropped)
        if binding.clash and not self._listed_clash(binding, self._read(text), self._read(context)):
            return binding
        detail = self.restates(text, quote, context, analyses)
        if detail is None:
            return binding
        return Binding(True, RESTATEMENT_CHECK, detail)

    def restates(self, claim: str, quote: str, context: str, analyses: Analyses) -> str | None:
        """The reason naming what differs when ``claim`` restates ``quote`` (in its sentence ``context``),
        else None."""
        mine, theirs, quoted = self._read(claim), self._read(context), self._read(quote)
        if any(
            r.clash and not self._listed_clash(r, mine, theirs)
            for r in run_all(analyses(claim), analyses(context))
        ):
            return None
        if self._dropped_hedge(claim, context) is not None or _stronger(claim, context, analyses):
            return None
        if self._scale_change(claim, context) is not None:
            return None
        if not all(
            r.outcome is CheckOutcome.PASS for r in run_all(analyses(mine.text), analyses(theirs.text))
        ):
            return None
        said, source = analyses(self._unhedged(mine.text)), analyses(self._unhedged(theirs.text))
        if unshared_words(said, source) or unshared_words(analyses(self._unhedged(quoted.text)), said):
            return None
        return self._reason(mine, theirs, claim)

    def _listed_clash(self, result: CheckResult | Binding, mine: _Reading, theirs: _Reading) -> bool:
        """A clash on the texts as written between two entries of one listed group ("insomnia" named
        where the source names "sleeplessness"): the listed pair itself, which the checks on the read
        texts judge instead."""
        conflict = result.conflict
        if conflict is None:
            return False
        said = {
            self._head.get(_key(t, self._words))
            for t in mine.terms
            if _key(t, self._words) in _key(conflict.claim, self._words)
        }
        other = {self._head.get(_key(t, self._words)) for t in theirs.terms}
        return bool(said - {None}) and bool((said & other) - {None})

    def _read(self, text: str) -> _Reading:
        if self._term_pattern is None:
            return _Reading(text, ())
        found: list[str] = []

        def head(match: re.Match[str]) -> str:
            found.append(match.group(0).lower())
            return self._head.get(_key(match.group(0), self._words), match.group(0))

        return _Reading(self._term_pattern.sub(head, text), tuple(found))

    def _reason(self, mine: _Reading, theirs: _Reading, claim: str) -> str:
        parts = ["the claim restates its quoted source"]
        pairs = sorted(
            {
                f"{a!r} ~ {b!r}"
                for a in mine.terms
                for b in theirs.terms
                if _key(a, self._words) != _key(b, self._words) and self._same(a, b)
            }
        )
        if pairs:
            parts.append(f"listed terms {', '.join(pairs)}")
        added = self._hedges_in(claim)
        if added:
            parts.append(f"hedged ({', '.join(added)}) where the source is not weaker")
        return "; ".join(parts)

    def _same(self, a: str, b: str) -> bool:
        return self._head.get(_key(a, self._words)) is not None and self._head.get(
            _key(a, self._words)
        ) == self._head.get(_key(b, self._words))

    def _hedges_in(self, text: str) -> list[str]:
        lowered = text.lower()
        return [m.group(0) for pattern in self._levels for m in pattern.finditer(lowered)]

    def level(self, text: str) -> int:
        """The text's hedge level: its weakest hedge's index in ``hedges`` (0 weakest), ``FLAT`` if none."""
        lowered = text.lower()
        return next((level for level, pattern in enumerate(self._levels) if pattern.search(lowered)), FLAT)

    def _scope(self, text: str, match: re.Match[str]) -> set[str]:
        """The keys of the content words a hedge governs: the first ``scope_words`` after it in its
        clause, else (a hedge ending its clause: "..., in some cases") the last ones before it."""
        clause_break = self._clause_break
        breaks = [m.end() for m in clause_break.finditer(text, 0, match.start())]
        start = breaks[-1] if breaks else 0
        end_break = clause_break.search(text, match.end())
        end = end_break.start() if end_break else len(text)
        after = self._content(text[match.end() : end])[: self._scope_words]
        before = self._content(text[start : match.start()])[-self._scope_words :]
        return set(after or before)

    def _content(self, text: str) -> list[str]:
        return [
            self._words.stem(w)
            for w in WORD.findall(text)
            if w not in self._words.stopwords
            and w not in self._hedge_words
            and len(w) > 1
            and not w.isdigit()
        ]

    def _source_level(self, claim: str, context: str) -> tuple[int, list[str]]:
        """The source's hedge level over the hedges governing what the claim says (a hedge of another
        clause of the sentence does not weaken the claim's statement), and those hedges. A hedge whose
        clause has no content word governs the whole sentence."""
        lowered = context.lower()
        claimed = {self._words.stem(w) for w in WORD.findall(claim.lower())}
        level, governing = FLAT, []
        for rank, pattern in enumerate(self._levels):
            for match in pattern.finditer(lowered):
                scope = self._scope(lowered, match)
                if not scope or len(scope & claimed) >= self._scope_overlap * len(scope):
                    level = min(level, rank)
                    governing.append(match.group(0))
        return level, governing

    def _dropped_hedge(self, claim: str, context: str) -> str | None:
        """Why the claim is stronger than its source's hedging (None: it is not)."""
        if self._negated_hedge is not None and self._negated_hedge.search(claim.lower()):
            return "the claim negates a hedge ('not usually'): not a restatement of its quoted source"
        mine = self.level(claim)
        theirs, governing = self._source_level(claim, context)
        if mine <= theirs:
            return None
        hedge = ", ".join(repr(h) for h in governing)
        stated = "states flatly" if mine == FLAT else "hedges less"
        return f"the quoted source hedges ({hedge}); the claim {stated}: a stronger claim"

    def _scaled(self, text: str) -> list[tuple[str, int, set[str]]]:
        """Each scale word of the text (a hedge, a ``universal`` or a ``downward`` word, not negated):
        (the word, its rank, the content words it governs: ``_scope``)."""
        if self._scale is None:
            return []
        lowered = text.lower()
        found = self._negated_scale.finditer(lowered) if self._negated_scale is not None else ()
        negated = {m.end() for m in found}
        return [
            (m.group(0), self._rank[_key(m.group(0), self._words)], self._scope(lowered, m))
            for m in self._scale.finditer(lowered)
            if m.end() not in negated
        ]

    def _governs(self, source: set[str], claimed: set[str]) -> bool:
        """Does a source word with scope ``source`` govern what a claim word with scope ``claimed`` says?
        An empty scope (a word alone in its clause: "Rarely, ...") governs the whole sentence."""
        return not source or not claimed or len(source & claimed) >= self._scope_overlap * len(source)

    def _scale_change(self, claim: str, context: str) -> str | None:
        """Why the claim moves a scale word against its source, word by word over what each governs
        (None: it does not). The whole-text levels (``_dropped_hedge``) miss a word changed where the
        other clause keeps it ("often treated ... and rarely recurs" -> "... and often recurs"):

        - a ``downward`` word ("rarely", "few") of the claim where the source has none over those words,
          or an upward one ("often", "most", "always") where the source has a downward one;
        - an upward word ranked above every source word governing those words ("usually" where the
          source says "sometimes"), or a ``universal`` one where none does;
        - a source's ``downward`` word over the claim's words that the claim drops.
        """
        mine, theirs = self._scaled(claim), self._scaled(context)
        claimed_words = set(self._content(claim.lower()))
        for word, rank, scope in mine:
            governing = [r for _, r, s in theirs if self._governs(s, scope)]
            if rank == DOWN and DOWN not in governing:
                return f"the claim says {word!r} where its quoted source does not: another claim"
            if rank != DOWN and DOWN in governing:
                return f"the claim says {word!r} where its quoted source says it is rare: another claim"
            if rank != DOWN and (governing or rank == self._up) and all(rank > r for r in governing):
                return f"the claim says {word!r} where its quoted source qualifies less: a stronger claim"
        for word, rank, scope in theirs:
            kept = any(r == DOWN and self._governs(scope, s) for _, r, s in mine)
            if rank == DOWN and self._governs(scope, claimed_words) and not kept:
                return f"the quoted source says {word!r}; the claim does not: another claim"
        return None


def _stronger(claim: str, context: str, analyses: Analyses) -> str | None:
    """Why the claim generalises more strongly than its qualified source (None: it does not)."""
    if not stronger(analyses(claim), analyses(context)):
        return None
    return "the quoted source qualifies its statement ('some', 'can'); the claim's quantifier is stronger"


def _key(entry: str, words: WordData) -> str:
    """A listed entry or a matched text as a lookup key: each word's stem, single spaces."""
    return " ".join(words.stem(w) for w in WORD.findall(entry.lower()))


def build_restatement(settings: Settings, policy: VerificationPolicy, data: CheckData) -> Restatement:
    """The restatement check over the policy directory's ``restatements.yaml`` (validated now);
    ``data``: the checks' word data."""
    terms = load_restatement_terms(restatement_path(settings), data)
    scope = policy.restatement_hedge_scope_words, policy.restatement_hedge_scope_overlap
    return Restatement(terms, *scope, data)
