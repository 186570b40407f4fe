"""Spelling for triage: "pregant", "feaver", "flopy" read as the words the triage layers know.

Patients misspell exactly the words that matter ("my 3 week old has a feaver and is really flopy"),
and both the red-flag rules and MiniLM's word pieces lose them: the misspelt infant message scores
P(emergency) 0.10, the corrected one 0.99. Before the rules and the encoder see a message, a word is
corrected to the closest word of the triage health banks (``policies/triage/``) when it is
not an English word: not in pyspellchecker's English dictionary (160k words, medical terms such as
"heparin" or "infarction" among them; a plural of one counts; a contraction typed without its
apostrophe counts), not a whole word of the embedding
model's vocabulary, not a stop word. Closeness is retrieval's (``gateway.knowledge.query.Lexicon``:
rapidfuzz, with the ``spelling_*`` thresholds of ``policies/query.yaml``). A word with no close bank
word (a drug name: "bisoprolol") is left as written.

Only the triage decision reads the corrected text; the questions passed on to retrieval and the
model are the patient's own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import numpy as np
from spellchecker import SpellChecker

from gateway.knowledge.lexical import Vocabulary
from gateway.knowledge.query import Lexicon, QueryWords, model_words
from gateway.triage.policy import TriagePolicy

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]")
_NO_INDEX = Vocabulary((), (), np.zeros(0, dtype=np.int64), 0)


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """pyspellchecker's English dictionary (loaded once per process, about 0.2 s), with each
    contraction also as patients type it without the apostrophe ("doesnt": never "does")."""
    words = frozenset(SpellChecker(language="en").word_frequency.dictionary.keys())
    return words | {w.replace("'", "") for w in words if "'" in w}


def bank_words(policy: TriagePolicy) -> frozenset[str]:
    """Every word of the health banks: emergency exemplars, non-emergency and health questions.

    Not the non-health bank: a correction toward "station" or "school" cannot help a safety decision,
    and it can turn a real word the dictionary lacks ("statins") into a non-health one.
    """
    banks = policy.banks
    texts: Iterable[str] = (
        *(e for c in policy.categories.values() for e in c.exemplars),
        *banks.non_emergency,
        *banks.health_questions,
    )
    return frozenset(w.lower() for text in texts for w in _WORD.findall(text))


class TriageSpeller:
    """Corrects a message's misspelt words to the triage banks' vocabulary (see the module docstring)."""

    def __init__(self, policy: TriagePolicy, words: QueryWords, model_path: str | None = None) -> None:
        self._english = english_words() | model_words(model_path)
        self._lexicon = Lexicon(_NO_INDEX, words, bank_words(policy), self._english)

    def correct(self, text: str) -> str:
        return _WORD.sub(self._word, text)

    def _word(self, match: re.Match[str]) -> str:
        word = match.group(0)
        lower = word.lower()
        if lower in self._english or (lower.endswith("s") and lower[:-1] in self._english):
            return word
        return self._lexicon.correct(lower) or word
