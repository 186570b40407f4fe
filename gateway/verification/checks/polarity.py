"""Polarity checks: negation cues and negative prefixes, opposite words, effect vs no-effect findings."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from gateway.domain import Conflict, ConflictKind
from gateway.verification.checks.results import CheckName, CheckOutcome, CheckResult, clash, pass_result
from gateway.verification.checks.words import WORD, WordData
from gateway.verification.lexicon import Cues, Lexicon


class PolarText(Protocol):
    """What the polarity checks read of a text (``analysis.AnalysedText`` provides it)."""

    @property
    def negations(self) -> tuple[Negation, ...]: ...
    @property
    def polar_stems(self) -> frozenset[str]: ...
    @property
    def words(self) -> frozenset[str]: ...
    @property
    def effect(self) -> bool | None: ...
    @property
    def polarity_lists(self) -> PolarityWords: ...


NEGATION_SCOPE = 4
"""Content words after a negation cue that it governs ("do not take aspirin with food")."""


@dataclass(frozen=True)
class PolarityWords:
    """The cue patterns and word lists of the polarity checks (``polarity_words``; ``CheckData.polarity``)."""

    negation: re.Pattern[str]
    clause_break: re.Pattern[str]
    weakened: re.Pattern[str]
    """"Not all", "not always", "not only": a weaker or wider statement, not the opposite one."""
    conditional: re.Pattern[str]
    """"If it fails to heal, ...": a negation inside a condition asserts nothing."""
    head_skip: re.Pattern[str]
    """Words passed over when finding what a cue negates ("is not [observed]")."""
    not_negative: frozenset[str]
    """Words that only look prefixed ("increased" is not "not creased")."""
    antonyms: tuple[tuple[frozenset[str], frozenset[str]], ...]
    no_effect: re.Pattern[str]
    """"No difference" findings: a claim of one contradicts evidence of an effect, and vice versa."""
    effect: re.Pattern[str]
    antonym_words: frozenset[str] = field(init=False)
    """Every word of ``antonyms``: a text with none of them opposes no word (``check_antonyms``)."""

    def __post_init__(self) -> None:
        words = frozenset(w for pair in self.antonyms for side in pair for w in side)
        object.__setattr__(self, "antonym_words", words)


def polarity_words(found: Cues, lists: Lexicon) -> PolarityWords:
    """Built from ``cues.yaml`` and ``lexicon.yaml`` (``CheckData.load`` builds it at start-up)."""
    return PolarityWords(
        re.compile(rf"\b{found.alternation('negation_cues')}\b"),
        re.compile(rf"[{found.clause_break_punctuation}]|\b{found.alternation('clause_break_words')}\b"),
        re.compile(rf"\s+{found.alternation('negation_weakeners')}\b"),
        re.compile(rf"\b{found.alternation('conditionals')}\b"),
        re.compile(rf"{found.alternation('negation_head_skip')}|[a-z]{{3,}}ly"),
        frozenset(lists.words["not_negative"]),
        tuple((frozenset(a), frozenset(b)) for a, b in lists.antonyms),
        re.compile(rf"\b{found.alternation('no_effect')}\b"),
        re.compile(rf"\b{found.alternation('effect')}\b"),
    )


@dataclass(frozen=True)
class Negation:
    scope: frozenset[str]
    """Stems the cue governs: the next few content words of its clause."""
    clause: frozenset[str]
    """Every content stem of the cue's clause, before and after it (for agreement in any word order)."""
    head: str = ""
    """The stem of the word the cue negates: the first after it that is not a function word or an
    adverb ("is not [observed] in ...", "did not [reduce] ..."); "" when the clause ends first."""


def negations(
    clean: str, prefix_roots: frozenset[str], words: PolarityWords, text_words: WordData
) -> tuple[Negation, ...]:
    """Each asserted negation of a normalised text: cues, and words with a negative prefix ("unrelated").

    A double negative asserts the positive: a cue whose head is a negative-prefix word ("not uncommon")
    or another cue ("not without risk") negates nothing, and neither does the word or cue it heads.
    """
    clean = clean.replace("’", "'")
    found: list[Negation] = []
    cancelled: set[str] = set()
    """Negative-prefix roots and cue positions a preceding cue cancels (a double negative)."""
    for match in words.negation.finditer(clean):
        if str(match.start()) in cancelled:
            continue
        opening, tail = _clause_opening(clean[: match.start()], words), clean[match.end() :]
        if words.weakened.match(tail) or words.conditional.search(opening):
            continue
        brk = words.clause_break.search(tail)
        clause = tail[: brk.start()] if brk else tail
        head = _head(clause, words)
        if head is not None:
            cue = words.negation.match(clause, head.start())
            root = _double_negated_root(head.group(0), words)
            if cue is not None or root:
                cancelled.add(root or str(match.end() + head.start()))
                continue
        after = _stems_in(clause, text_words)
        found.append(
            Negation(
                frozenset(after[:NEGATION_SCOPE]),
                frozenset(after + _stems_in(opening, text_words)),
                text_words.stem(head.group(0)) if head is not None else "",
            )
        )
    roots = prefix_roots - set(WORD.findall(clean)) - cancelled
    stem = text_words.stem
    found += [Negation(frozenset((stem(r),)), frozenset((stem(r),)), stem(r)) for r in roots]
    return tuple(found)


def _double_negated_root(word: str, words: PolarityWords) -> str:
    """The root a negative prefix reverses in a cue's head ("not [un]related"). Not for the "a-" prefix:
    it also matches "associated", "affected", "approved", and a double negative read there would cancel
    a real negation ("not associated with an increased risk")."""
    return "" if word.startswith("a") else _negated_root(word, words)


def _head(clause: str, words: PolarityWords) -> re.Match[str] | None:
    """The first word of ``clause`` (the text after a cue) that is not passed over (``head_skip``)."""
    skip = words.head_skip
    return next((m for m in WORD.finditer(clause) if not skip.fullmatch(m.group(0))), None)


def _stems_in(clause: str, words: WordData) -> list[str]:
    skip = words.stopwords
    return [words.stem(w) for w in WORD.findall(clause) if w not in skip and len(w) > 1]


def _clause_opening(before: str, words: PolarityWords) -> str:
    """The part of the clause that precedes a negation cue."""
    starts = [m.end() for m in words.clause_break.finditer(before)]
    return before[starts[-1] if starts else 0 :]


def _unmatched(
    mine: Sequence[Negation], other: frozenset[str], theirs: Sequence[Negation], no_effect: bool = False
) -> list[tuple[frozenset[str], bool]]:
    """Negated words the other text mentions but never in a negated clause (it says the opposite), and
    whether the other text states the negated word itself (the head: the same predicate, negated).
    ``no_effect``: this text reports no effect where the other reports one ("had no effect on deaths"
    against "reduced deaths"): its negation denies the other's finding whatever word it heads."""
    negated = frozenset().union(*(n.clause for n in theirs))
    return [
        (n.scope & other, no_effect or n.head in other)
        for n in mine
        if n.scope & other and not n.scope & other & negated
    ]


_NEGATIVE_PREFIX = re.compile(
    r"(?:un|in|im|ir|il|dis|non-?|a(?=[^aeiou]{2}))"
    r"(?P<root>[a-z]{5,}(?:ed|ive|al|ant|ent|able|ible|ful|ic|ar|ate|ary|ous|ly|y))"
)
"""A negative prefix on an adjective-like root: unrelated, ineffective, dissimilar, asymptomatic."""
_PREFIX_INITIALS = frozenset("uidna")
_PREFIXED_LENGTH = 7
"""Every word ``_NEGATIVE_PREFIX`` matches starts with one of these letters and is at least this long
(a one-letter prefix, a five-letter root, a one-letter ending): a cheap test before the pattern."""


def prefix_roots(tokens: Iterable[str], words: PolarityWords) -> frozenset[str]:
    """Roots that the text's negative-prefix words reverse ("unrelated" -> "related")."""
    candidates = (w for w in tokens if len(w) >= _PREFIXED_LENGTH and w[0] in _PREFIX_INITIALS)
    return frozenset(_negated_root(w, words) for w in candidates) - {""}


def _negated_root(word: str, words: PolarityWords) -> str:
    """The root a negative prefix reverses ("unrelated" -> "related", "asymptomatic"), else ""."""
    match = _NEGATIVE_PREFIX.fullmatch(word)
    if not match or word in words.not_negative:
        return ""
    return match.group("root")


def check_negation(claim: PolarText, evidence: PolarText) -> CheckResult:
    """Polarity must agree on what both texts talk about.

    A negation is relevant when it governs words the other text mentions. The check fails when only one
    side has a relevant negation: "do not take aspirin" vs "take aspirin", "no increased risk" vs
    "increased risk", "not recommended" vs "recommended". Negations over words the other text does not
    mention are ignored, and both sides negating (in any word order) agree.

    The clash names a conflict (a contradiction may be reported) only when the other text states the
    negated word itself ("not [observed] in human coronaviruses" against a claim about human
    coronaviruses that says nothing of observing is a different predicate): otherwise it is a clash
    without a conflict, which blocks support and is never a contradiction.
    """
    denied = claim.effect is False and bool(evidence.effect), evidence.effect is False and bool(claim.effect)
    mine = _unmatched(claim.negations, evidence.polar_stems, evidence.negations, denied[0])
    theirs = _unmatched(evidence.negations, claim.polar_stems, claim.negations, denied[1])
    if any(same for _, same in mine + theirs):
        mine, theirs = [m for m in mine if m[1]], [t for t in theirs if t[1]]
    else:
        return _other_predicate(mine, theirs)
    if mine:
        negated = ", ".join(sorted(mine[0][0]))
        return clash(
            CheckName.NEGATION,
            ConflictKind.NEGATION,
            f"the claim negates {negated}; the evidence does not",
            f"not {negated}",
            negated,
        )
    if theirs:
        negated = ", ".join(sorted(theirs[0][0]))
        return clash(
            CheckName.NEGATION,
            ConflictKind.NEGATION,
            f"the evidence negates {negated}; the claim does not",
            negated,
            f"not {negated}",
        )
    return pass_result(CheckName.NEGATION)


def _other_predicate(
    mine: Sequence[tuple[frozenset[str], bool]], theirs: Sequence[tuple[frozenset[str], bool]]
) -> CheckResult:
    """Negations over shared words whose negated word the other text does not state: a possible
    conflict (CLASH, so never support), with no conflict named (never a contradiction)."""
    if not mine and not theirs:
        return pass_result(CheckName.NEGATION)
    side, words = ("claim", mine[0][0]) if mine else ("evidence", theirs[0][0])
    detail = f"the {side} negates a clause about {', '.join(sorted(words))}, with another predicate"
    return CheckResult(CheckName.NEGATION, CheckOutcome.CLASH, detail)


def states_effect(clean: str, words: PolarityWords) -> bool | None:
    """True: the normalised text reports an effect or difference; False: no difference; None: neither
    or both."""
    effect, none = bool(words.effect.search(clean)), bool(words.no_effect.search(clean))
    return None if effect == none else effect


def _effect_clash(claim: PolarText, evidence: PolarText) -> CheckResult | None:
    """The claim reports no difference where the evidence reports one, or the reverse."""
    mine, theirs = claim.effect, evidence.effect
    if mine is None or theirs is None or mine == theirs:
        return None
    said = "a difference" if mine else "no difference"
    other = "no difference" if mine else "a difference"
    return clash(
        CheckName.ANTONYM,
        ConflictKind.OPPOSITE,
        f"the claim reports {said}; the evidence does not agree",
        said,
        other,
    )


def check_antonyms(
    claim: PolarText, evidence: PolarText, allowed: frozenset[str] = frozenset()
) -> CheckResult:
    """The claim uses a word whose opposite the evidence uses instead (increases vs reduces);
    ``allowed``: words whose opposition the caller has explained ("less" and "more" of a comparison
    read the other way round, ``roles.reversed_comparison``).

    Whole word forms are compared, never truncated stems: stems merge unrelated words ("early" and
    "ear", "protect" and "protein", "common" and "commodity") and made verbatim claims clash.
    """
    claim_stems = claim.words
    evidence_stems = evidence.words
    lists = claim.polarity_lists
    if claim_stems.isdisjoint(lists.antonym_words) or evidence_stems.isdisjoint(lists.antonym_words):
        return _effect_clash(claim, evidence) or pass_result(CheckName.ANTONYM)
    for left, right in lists.antonyms:
        for mine, other in ((left, right), (right, left)):
            said = claim_stems & mine - allowed
            if said and not evidence_stems & mine and evidence_stems & other - allowed:
                word, opposite = sorted(said)[0], sorted(evidence_stems & other)[0]
                return clash(
                    CheckName.ANTONYM,
                    ConflictKind.OPPOSITE,
                    f"the claim says {word!r}; the evidence says {opposite!r}",
                    word,
                    opposite,
                )
    return _effect_clash(claim, evidence) or pass_result(CheckName.ANTONYM)


_EFFECTS = ("a difference", "no difference")
"""The two sides of ``_effect_clash``'s conflict."""


def one_sided(conflict: Conflict, claim: PolarText) -> bool:
    """Does the claim state an opposite-word conflict one way only? Its words must be a listed antonym
    pair (``lexicon.yaml: antonyms``) and the claim must use no word of the evidence's side: "growth may
    decrease due to increased light" against "lower growth" uses both, so its "increased" opposes
    nothing. A difference against no difference (``_effect_clash``) and conflicts of other kinds: True."""
    if conflict.kind is not ConflictKind.OPPOSITE:
        return True
    if conflict.claim in _EFFECTS:  # no difference against a difference: one-sided by construction
        return True
    for left, right in claim.polarity_lists.antonyms:
        for mine, other in ((left, right), (right, left)):
            if conflict.claim in mine and conflict.source in other:
                return claim.words.isdisjoint(other)
    return False
