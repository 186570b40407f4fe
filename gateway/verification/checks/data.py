"""The checks' word data in one value: ``CheckData``, loaded once when the verifier is built.

The verifier (``LocalEntailmentVerifier``) holds it and hands it to each request's ``Analyses``, which
gives it to every ``AnalysedText``; the checks read their word lists and compiled patterns from there.
Loading reads, validates and compiles every file (``data/*.yaml``), so a bad file stops start-up,
naming the file and the key, and the first request pays no loading time. Importing the checks reads
no file.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.verification.checks.entities import EntityWords, entity_words
from gateway.verification.checks.polarity import PolarityWords, polarity_words
from gateway.verification.checks.quantifiers import StrengthPatterns, strength_patterns
from gateway.verification.checks.quantities import QuantityPatterns, quantity_patterns
from gateway.verification.checks.reading import verb_forms
from gateway.verification.checks.role_reader import RoleGrammar, load_role_grammar
from gateway.verification.checks.roles import RolePatterns, role_patterns
from gateway.verification.checks.words import WordData
from gateway.verification.lexicon import load_quantity_words


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
    def load(cls) -> CheckData:
        """Read, validate and compile the checks' data files (``data/*.yaml``), in this order: a bad file
        stops the load naming the file and the key."""
        words = WordData.load()
        quantities = quantity_patterns(load_quantity_words(), words.cues)
        polarity = polarity_words(words.cues, words.lexicon)
        strengths = strength_patterns(words.cues)
        entities = entity_words(words.lexicon)
        grammar = load_role_grammar(words)
        return cls(
            words,
            quantities,
            polarity,
            strengths,
            entities,
            grammar,
            verb_forms(grammar),
            role_patterns(words.cues),
        )
