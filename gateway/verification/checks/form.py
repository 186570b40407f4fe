"""Claim form: is the claim a complete statement the word-level checks can compare?

The checks compare what a claim states (numbers, polarity, entities, content words) with its evidence;
they do not read grammar. A claim cut off mid-sentence passes every one of them whenever its words are
in the evidence, whatever the missing rest would have said. So a claim is checked for form first: it
must not end (outside brackets) on a word no English sentence ends on (``data/lexicon.yaml``
``dangling_endings``: an article, a possessive determiner, a coordinating or subordinating
conjunction: "Preliminary results of the screening and", "Masks reduce the"), nor leave a bracket
open ("Aprotinin (s blocks replication").

Such a claim is MISSING its statement (``CheckName.FORM``): the local checker leaves it
``not_verified`` rather than deciding it from shared words. There is deliberately no verb test: with
no parser installed, a rule for "has a finite verb" misread 4% of the bundled knowledge base's own
sentences (imperatives, "Most people recover ...") as headlines; a preposition or auxiliary may end a
sentence ("unless they advise you to", "where the rash was").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from gateway.text import strip_markers
from gateway.verification.checks.results import CheckName, CheckOutcome, CheckResult, pass_result
from gateway.verification.lexicon import Lexicon

_BRACKETS = (("(", ")"), ("[", "]"))
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
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
class FormCheck:
    """The form check with its word list, built once with the verifier (``LocalEntailmentVerifier``)."""

    dangling_endings: frozenset[str]
    """Words no sentence ends on (``lexicon.yaml`` ``dangling_endings``)."""

    @classmethod
    def of(cls, lexicon: Lexicon) -> FormCheck:
        return cls(frozenset(lexicon.words["dangling_endings"]))

    def incomplete(self, claim: FormText) -> str:
        """Why the claim is not a complete statement, or "" when it is."""
        if not claim.tokens:
            return ""
        plain = strip_markers(claim.text)
        last = _last_word(plain)
        if last in self.dangling_endings:
            return f"it ends on {last!r}"
        for opening, closing in _BRACKETS:
            if plain.count(opening) > plain.count(closing):
                return f"it leaves {opening!r} open"
        return ""

    def run(self, claim: FormText) -> CheckResult:
        """MISSING when the claim is not a complete statement (see the module docstring)."""
        why = self.incomplete(claim)
        if not why:
            return pass_result(CheckName.FORM)
        detail = f"the claim is not a complete statement ({why}): the local checks cannot compare it"
        return CheckResult(CheckName.FORM, CheckOutcome.MISSING, detail)
