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

import hashlib
import re
import zlib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import numpy as np
import spellchecker
from spellchecker import SpellChecker

from gateway.knowledge.lexical import Vocabulary
from gateway.knowledge.query import Lexicon, QueryWords, model_words
from gateway.triage.policy import TriagePolicy
from gateway.validation import refuse

ENGLISH_DICTIONARY = Path(spellchecker.__file__).with_name("resources") / "en.json.gz"
"""pyspellchecker's English dictionary: gzipped JSON, each word with its count."""
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]")
_NO_INDEX = Vocabulary((), (), np.zeros(0, dtype=np.int64), 0)


def load_english_words(path: Path | None = None) -> frozenset[str]:
    """The words of the English dictionary (``ENGLISH_DICTIONARY`` unless ``path``), lower-case, with each
    contraction also as patients type it without the apostrophe ("doesnt": never "does"). Read when the
    speller is built (at start-up: ``bootstrap.build_triager``); a file that cannot be read stops it
    with a ConfigurationError naming the file. The same file with the same bytes gives the same set
    (parsed once per process per content, about 0.2 s, like ``CheckData.load``)."""
    resolved = (path or ENGLISH_DICTIONARY).resolve()
    try:
        digest = hashlib.sha256(resolved.read_bytes()).hexdigest()
    except OSError as err:
        refuse(str(resolved), "-", f"cannot be read: {err.strerror or err}")
    return _english_words(resolved, digest)


@lru_cache(maxsize=2)
def _english_words(path: Path, digest: str) -> frozenset[str]:
    """The words of the dictionary at ``path`` (``digest``, its SHA-256, is the memo's key with it: a
    changed file is another key), read by pyspellchecker's own loader (``local_dictionary``: a
    gzipped or plain JSON object of words and their counts). A failed read raises and is not kept."""
    try:
        counts = SpellChecker(language=None, local_dictionary=str(path)).word_frequency.dictionary
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError, TypeError, AttributeError) as err:
        refuse(str(path), "-", f"not a gzipped JSON object of words and their counts: {err}")
    if not counts:
        refuse(str(path), "-", "holds no words: at least one word and its count is needed")
    words = frozenset(str(word).lower() for word in counts)
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

    def __init__(
        self,
        policy: TriagePolicy,
        words: QueryWords,
        model_path: str | None = None,
        english: Path | None = None,
    ) -> None:
        """The English dictionary (``english``, default ``ENGLISH_DICTIONARY``) is read here
        (``load_english_words``), once, when the triage is built."""
        self._english = load_english_words(english) | model_words(model_path)
        self._lexicon = Lexicon(_NO_INDEX, words, bank_words(policy), self._english)

    def correct(self, text: str) -> str:
        return _WORD.sub(self._word, text)

    def _word(self, match: re.Match[str]) -> str:
        word = match.group(0)
        lower = word.lower()
        if lower in self._english or (lower.endswith("s") and lower[:-1] in self._english):
            return word
        return self._lexicon.correct(lower) or word
