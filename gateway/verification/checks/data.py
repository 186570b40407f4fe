"""The checks' word data in one value: ``CheckData``, loaded once when the verifier is built.

The verifier (``LocalEntailmentVerifier``) holds it and hands it to each request's ``Analyses``, which
gives it to every ``AnalysedText``; the checks read their word lists and compiled patterns from there.
Loading reads, validates and compiles every file (``data/*.yaml``), so a bad file stops start-up,
naming the file and the key, and the first request pays no loading time. Importing the checks reads
no file.

A process loads it once per content of its files: ``load`` is a memo keyed on the files' resolved paths
and the SHA-256 of their bytes (hashing four small files is far cheaper than parsing and compiling
them), so every verifier built over the same files (a test's, each worker's) shares one ``CheckData``,
and a file edited on disk is read again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gateway.verification.checks.entities import EntityWords, entity_words
from gateway.verification.checks.polarity import PolarityWords, polarity_words
from gateway.verification.checks.quantifiers import StrengthPatterns, strength_patterns
from gateway.verification.checks.quantities import QuantityPatterns, quantity_patterns
from gateway.verification.checks.reading import verb_forms
from gateway.verification.checks.role_reader import RoleGrammar, load_role_grammar
from gateway.verification.checks.roles import RolePatterns, role_patterns
from gateway.verification.checks.words import WordData
from gateway.verification.lexicon import DEFAULT_PATH, load_quantity_words

DATA_DIR = DEFAULT_PATH.parent
"""The shipped data files (``gateway/verification/data``)."""
FILES = ("lexicon.yaml", "cues.yaml", "quantities.yaml", "roles.yaml")
"""The files ``CheckData`` is read from, in any directory given to ``load``."""


@dataclass(frozen=True)
class CheckData:
    """Every word list and cue pattern the checks read, loaded and compiled once (``load``)."""

    words: WordData
    quantities: QuantityPatterns
    polarity: PolarityWords
    strengths: StrengthPatterns
    entities: EntityWords
    grammar: RoleGrammar
    verb_forms: frozenset[str]
    """Every inflected form of the grammar's verbs."""
    roles: RolePatterns

    @classmethod
    def load(cls, directory: Path = DATA_DIR) -> CheckData:
        """Read, validate and compile the checks' data files (``FILES`` in ``directory``), in this order:
        a bad file stops the load naming the file and the key. The same files with the same bytes give
        the same object (one load per process per content, ``_load``)."""
        paths = tuple((directory / name).resolve() for name in FILES)
        return _load(tuple((path, _digest(path)) for path in paths))


def _digest(path: Path) -> str:
    """The file's SHA-256 ("" when it cannot be read: the load then names it)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


@lru_cache(maxsize=4)
def _load(files: tuple[tuple[Path, str], ...]) -> CheckData:
    """``CheckData`` from ``files`` (lexicon, cues, quantities, roles, each with its digest: the memo's
    key, so that a changed file is another key). A failed load raises and is not kept."""
    lexicon, cues, quantities_file, roles = (path for path, _digest in files)
    words = WordData.load(lexicon, cues)
    quantities = quantity_patterns(load_quantity_words(quantities_file), words.cues)
    polarity = polarity_words(words.cues, words.lexicon)
    strengths = strength_patterns(words.cues)
    entities = entity_words(words.lexicon)
    grammar = load_role_grammar(words, roles)
    return CheckData(
        words,
        quantities,
        polarity,
        strengths,
        entities,
        grammar,
        verb_forms(grammar),
        role_patterns(words.cues),
    )
