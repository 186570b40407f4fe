"""Claim form: is the claim a complete statement the word-level checks can compare?

The checks compare what a claim states (numbers, polarity, entities, content words) with its evidence;
they do not read grammar. A claim that states no relation passes every one of them whenever its words
are in the evidence, whatever the evidence relates them by. So a claim is checked for form first, by
rules over its words (``data/lexicon.yaml``):

- it ends (outside brackets) on a word that needs a continuation (``dangling_endings``: an article,
  an auxiliary, a preposition, a conjunction: "Preliminary results of the screening are"; an
  auxiliary may end a comparison, "than adults are"), or leaves a bracket open;
- it has no finite verb: it opens with no instruction verb (``instructions``: "Take ..."), has no
  auxiliary, modal or copula (``auxiliaries``), no word after an adverb in -ly ("usually take"), and
  no listed verb (``roles.yaml`` ``verbs``, in a finite form: "Masks protect children") and no word
  inflected as a verb (-s, -ed) where a verb can stand: after a word that opens a noun phrase
  (``phrase_openers``) or a possessive, before "of", "and" or "or", or last, such a word is read as a
  noun. A claim without a verb is a headline ("Convalescent plasma to treat covid-19", "Belief in
  conspiracy theories and social distancing over time").

Such a claim is MISSING its statement (``CheckName.FORM``): the local checker leaves it
``not_verified`` rather than deciding it from shared words. No parser is installed, so the verb test is
a rule of thumb: it errs towards "no verb" (a base-form verb that is not listed, after a plural
subject, reads as none), which only leaves a claim undecided.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from gateway.text import strip_markers
from gateway.verification.checks.reading import verb_forms
from gateway.verification.checks.results import CheckName, CheckOutcome, CheckResult, pass_result
from gateway.verification.checks.words import lexicon

_INFLECTED = re.compile(r"[a-z]{2,}(?:ed|[^su's]s)")
"""A word inflected as a verb might be: "reduced", "reduces" (not "-ss", "-us", "-is", "'s")."""
_NOUN_FOLLOWERS = frozenset(("of", "and", "or"))
"""After a plural noun, not after a verb: "readmissions of", "theories and"."""
_BRACKETS = (("(", ")"), ("[", "]"))
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_COMPARED = re.compile(r"\b(?:than|as)\b", re.IGNORECASE)
"""An auxiliary may end a comparison ("more often than adults are")."""
_LAST = re.compile(r"[a-z0-9]+(?:['’-][a-z0-9]+)*")


def _last_word(text: str) -> str:
    """The text's last word outside brackets ("plasma Lp(a)." ends on "lp")."""
    found = _LAST.findall(_BRACKETED.sub(" ", text).lower())
    return found[-1] if found else ""


class FormText(Protocol):
    """What the form check reads of a claim (``analysis.AnalysedText`` provides it)."""

    @property
    def text(self) -> str: ...
    @property
    def tokens(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class FormWords:
    dangling: frozenset[str]
    auxiliaries: frozenset[str]
    instructions: frozenset[str]
    openers: frozenset[str]


@cache
def form_words() -> FormWords:
    """Built on first use from ``lexicon.yaml`` (the verifier loads the word data at start-up)."""
    words = lexicon().words
    return FormWords(
        frozenset(words["dangling_endings"]),
        frozenset(words["auxiliaries"]),
        frozenset(words["instructions"]),
        frozenset(words["phrase_openers"]),
    )


def has_finite_verb(tokens: tuple[str, ...]) -> bool:
    """An instruction verb first, an auxiliary, modal or copula, or a word inflected as a verb (or
    following an -ly adverb) where a verb can stand."""
    words = form_words()
    if (tokens and tokens[0] in words.instructions) or any(t in words.auxiliaries for t in tokens):
        return True
    for i in range(1, len(tokens) - 1):
        word, before, after = tokens[i], tokens[i - 1], tokens[i + 1]
        if before in words.openers or before.endswith(("'s", "’s")) or after in _NOUN_FOLLOWERS:
            continue
        if _INFLECTED.fullmatch(word) or (before.endswith("ly") and word not in words.openers):
            return True
        if word in verb_forms() and not word.endswith("ing"):  # "Masks protect children"
            return True
    return len(tokens) > 1 and tokens[-1].endswith("ed") and tokens[-2] not in words.openers


def incomplete(claim: FormText) -> str:
    """Why the claim is not a complete statement, or "" when it is."""
    if not claim.tokens:
        return ""
    words = form_words()
    plain = strip_markers(claim.text)
    last = _last_word(plain)
    if last in words.dangling and not (last in words.auxiliaries and _COMPARED.search(plain)):
        return f"it ends on {last!r}"
    for opening, closing in _BRACKETS:
        if plain.count(opening) > plain.count(closing):
            return f"it leaves {opening!r} open"
    if not has_finite_verb(claim.tokens):
        return "it has no verb"
    return ""


def check_form(claim: FormText) -> CheckResult:
    """MISSING when the claim is not a complete statement (see the module docstring)."""
    why = incomplete(claim)
    if not why:
        return pass_result(CheckName.FORM)
    detail = f"the claim is not a complete statement ({why}): the local checks cannot compare it"
    return CheckResult(CheckName.FORM, CheckOutcome.MISSING, detail)
