"""Quote binding: a claim is supported locally only when it restates the source words it quotes.

The chat contract makes the model copy a verbatim quote per claim. Anchoring proves the quote is in
the cited passage; binding proves the claim says nothing the quote does not. The context is the
quote with the rest of its sentence(s) in the passage (``quote_context``). The claim restates it when

- every number, unit, dose, range and frequency of the claim is stated there (``checks.numbers``,
  units converted);
- polarity, opposites and quantifiers agree (``check_negation``, ``check_antonyms``,
  ``check_quantifier``), every medicine, condition and population is there (``check_entities``), and
  no relation has its roles swapped (``check_roles``: "A causes B" against "B causes A"), and the order
  of roles is confirmed (``check_role_order``: by the role reader, else by the source's word order
  around each verb of the claim);
- every other content word of the claim is there, up to inflection (Snowball English stemmer),
  British/American spelling and the listed synonym groups (``checks.words.synonyms``).

Anything else is not a restatement, and the failure names the part of the claim the source does not
contain. Binding never looks at embeddings: it is exact by construction, so a paraphrase fails it
(the claim is then rewritten to the source's own sentence by SourceCleanup, or decided by an
entailment model or the judge when a site configures one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.domain import Conflict, ConflictKind, Passage, Span
from gateway.text import sentence_spans, strip_markers
from gateway.verification.checks.analysis import POSSESSIVE, WORD_PARTS, AnalysedText, Analyses
from gateway.verification.checks.entities import check_entities
from gateway.verification.checks.numbers import check_numbers
from gateway.verification.checks.polarity import check_antonyms, check_negation
from gateway.verification.checks.quantifiers import check_quantifier
from gateway.verification.checks.results import CheckOutcome
from gateway.verification.checks.roles import (
    check_role_order,
    check_roles,
    restated_inverse_cues,
    reversed_comparison,
)
from gateway.verification.checks.words import tokens
from gateway.vocabulary import VerdictCheck

_PARTS = WORD_PARTS
_POSSESSIVE = POSSESSIVE
MAX_LISTED = 4
"""Missing words named in a reason (the rest are counted)."""


@dataclass(frozen=True)
class Binding:
    """Whether a claim restates its context; ``check``/``detail`` name what it adds when it does not."""

    restates: bool
    check: VerdictCheck
    """``quote_bound`` (restates), ``quote_binding`` (words missing) or the check that failed."""
    detail: str
    clash: bool = False
    """The claim contradicts its quote (a number, polarity, quantifier or entity changed)."""
    conflict: Conflict | None = None
    """The clash's conflict: what the claim says and what the quoted source says instead."""


_CODE = re.compile(r"[a-z]+-?\d+[a-z\d-]*")
"""A name with digits after letters ("b12", "il-6", "h1n1", "covid-19"): a content word the quoted
source must contain as written ("vitamin b6" is not "vitamin b12"); numbers with units are the number
check's."""


def _keys(text: AnalysedText) -> tuple[frozenset[str], tuple[str, ...]]:
    """(keys of every word of ``text``, its content words in order), British spelling read as American
    (``AnalysedText.word_keys``: read once per text)."""
    return text.word_keys


_ONE = "one"
""""One" reads as a determiner ("one type of test"), so it is no quantity and no content word; but a
claim saying "one altered copy" where its source states numbers ("two altered copies") and never "one"
adds a number the source does not state."""


def _quantity_words(text: AnalysedText) -> frozenset[str]:
    """The words of the text's extracted quantities ("twice a day", "4 hours"): the number check's."""
    return frozenset(w for q in text.quantities for w in tokens(q.text.lower()))


def _owned_by_numbers(word: str, owned: frozenset[str]) -> bool:
    """Is ``word`` part of a quantity the number check compares? A number word or a word with digits
    outside every extracted quantity ("a second vaccine", "1970s", "3s-cov-2") is not: it is a content
    word the source must contain like any other."""
    return word in owned or all(p in owned for p in _PARTS.split(word) if p)


def _missing_words(claim: AnalysedText, context: AnalysedText) -> list[str]:
    have, _ = _keys(context)
    numeric, skip = claim.data.quantities.numeric_words, claim.data.words.stopwords
    word_key = claim.data.words.stem
    owned = _quantity_words(claim)
    _, wanted = _keys(claim)
    missing: list[str] = []
    for word in wanted:
        numeral = word in numeric or (any(ch.isdigit() for ch in word) and not _CODE.fullmatch(word))
        if numeral and _owned_by_numbers(word, owned):
            continue
        if word_key(word) in have:
            continue
        parts = [p for p in _PARTS.split(_POSSESSIVE.sub("", word)) if p]
        if parts and all(p in skip or p in owned or word_key(p) in have for p in parts):
            continue
        if word not in missing:
            missing.append(word)
    if _ONE in claim.words and _ONE not in owned and _ONE not in context.words and context.quantities:
        missing.append(_ONE)
    return missing


def unshared_words(claim: AnalysedText, context: AnalysedText, conflict: Conflict | None = None) -> list[str]:
    """The claim's content words ``context`` lacks (inflection, spelling and listed synonyms aside),
    leaving out the words of ``conflict``'s own claim part (a swapped word is the conflict itself) and,
    for a negation, the claim's negation cues ("has no effect" against "has an effect": "no" is the
    conflict, whichever cue the claim uses)."""
    word_key = claim.data.words.stem
    own = {word_key(w) for w in tokens(conflict.claim.lower())} if conflict is not None else set()
    negated = conflict is not None and conflict.kind is ConflictKind.NEGATION
    cue = claim.polarity_lists.negation if negated else None
    return [
        w
        for w in _missing_words(claim, context)
        if word_key(w) not in own and (cue is None or not cue.fullmatch(w))
    ]


def restates(claim: str, context: str, analyses: Analyses) -> Binding:
    """Does ``claim`` say only what ``context`` (its quote and the rest of the quote's sentence) says?

    ``analyses``: the request's text analyses (the local verifier may have analysed these texts already).
    """
    analysed, evidence = analyses(strip_markers(claim)), analyses(context)
    explained: frozenset[str] = frozenset()  # a comparison read the other way round: its comparatives
    for check in (
        check_numbers,
        check_negation,
        check_antonyms,
        check_quantifier,
        check_entities,
        check_roles,
        check_role_order,
    ):
        result = check(analysed, evidence)
        conflict = result.conflict
        if check is check_antonyms and conflict is not None and not result.passed:
            words = (conflict.claim.lower(), conflict.source.lower())
            if reversed_comparison(analysed, evidence, words):
                explained = frozenset(words)
                result = check_antonyms(analysed, evidence, explained)
        if not result.passed:
            detail = result.detail or result.name.value
            return Binding(
                False,
                result.verdict_check,
                f"the quoted source does not say this: {detail}",
                result.outcome is CheckOutcome.CLASH,
                result.conflict,
            )
    word_key = analysed.data.words.stem
    explained_keys = {word_key(w) for w in explained | restated_inverse_cues(analysed, evidence)}
    missing = [w for w in _missing_words(analysed, evidence) if word_key(w) not in explained_keys]
    if missing:
        listed = ", ".join(repr(w) for w in missing[:MAX_LISTED])
        more = f" and {len(missing) - MAX_LISTED} more" if len(missing) > MAX_LISTED else ""
        return Binding(
            False, VerdictCheck.QUOTE_BINDING, f"the quoted source does not contain {listed}{more}"
        )
    return Binding(True, VerdictCheck.QUOTE_BOUND, "the claim restates its quoted source")


def quote_context(passage: Passage, span: Span) -> tuple[Span, str]:
    """The whole sentence(s) of ``passage`` that the anchored quote ``span`` touches."""
    text = passage.text
    spans = list(passage.sentence_spans) or sentence_spans(text)
    touched = [s for s in spans if s.start < span.end and span.start < s.end]
    if not touched:
        return span, text[span.start : span.end]
    whole = Span(touched[0].start, touched[-1].end)
    return whole, text[whole.start : whole.end]
