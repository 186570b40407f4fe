"""One text analysed for the checks: each analysis computed on first use and kept with the text.

A claim is checked against several evidence windows, and a passage against every claim citing it.
The verifier builds one ``AnalysedText`` per distinct text of a request (``Analyses``) and passes it
to the checks, so each text is tokenised, stemmed and searched for numbers, negations, quantifiers,
entities and relations (``reading``: the role reader's and the word-order gate's one reading) at most
once per request, with no module-level cache keyed by text. A passage is cited by many claims across
requests: the cascade keeps its analysed texts between requests in a bounded LRU of its own
(``Readings``, handed to each request's ``Analyses``). ``Analyses`` is given the checks' word
data (``CheckData``, loaded once by the verifier) and hands it to each text. The number and entity
extractors are given to ``Analyses`` too (the current ones by default), so a caller or a test can swap
them.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

from cachetools import LRUCache

from gateway.stemming import stem
from gateway.text import normalise, strip_markers
from gateway.verification.checks.data import CheckData
from gateway.verification.checks.entities import (
    Entity,
    EntityWords,
    extract_entities,
    subjects,
    us_spelling,
)
from gateway.verification.checks.polarity import (
    Negation,
    PolarityWords,
    negations,
    prefix_roots,
    states_effect,
)
from gateway.verification.checks.quantifiers import strength
from gateway.verification.checks.quantities import Quantity, QuantityPatterns, extract_quantities
from gateway.verification.checks.reading import Reading, read
from gateway.verification.checks.role_reader import RoleGrammar
from gateway.verification.checks.roles import Relation, RolePatterns, relations
from gateway.verification.checks.words import WORD, tokens

QuantityExtractor = Callable[[str, QuantityPatterns], tuple[Quantity, ...]]
"""Reads the quantities of a text (the raw text, and the number words and patterns)."""
EntityExtractor = Callable[[str, str, EntityWords], tuple[Entity, ...]]
"""Reads the entities of a text (the raw text, its normalised text in American spelling, and the
entity vocabulary)."""


WORD_PARTS = re.compile(r"['’-]")
"""What splits a word into parts ("covid-19", "patient's")."""
POSSESSIVE = re.compile(r"['’]s$")


def verbatim_key(text: str) -> str:
    """Normal form for the verbatim test: case, quotes, spacing and final punctuation ignored."""
    return normalise(strip_markers(text)).rstrip(" .!?;:")


@dataclass(frozen=True, eq=False)
class AnalysedText:
    """A text and its analyses; immutable (each property is computed once, then fixed)."""

    text: str
    data: CheckData
    """The checks' word data (the verifier's)."""
    quantity_extractor: QuantityExtractor = extract_quantities
    entity_extractor: EntityExtractor = extract_entities

    @cached_property
    def clean(self) -> str:
        """Normalised, citation markers removed: what every analysis reads."""
        return normalise(strip_markers(self.text))

    @cached_property
    def verbatim_key(self) -> str:
        """Normal form for the verbatim test: case, quotes, spacing and final punctuation ignored
        (``verbatim_key`` of the text, read off ``clean``)."""
        return self.clean.rstrip(" .!?;:")

    @cached_property
    def tokens(self) -> tuple[str, ...]:
        return tuple(WORD.findall(self.clean))

    @cached_property
    def words(self) -> frozenset[str]:
        """Every word form, unstemmed (for word lists that stems would blur)."""
        return frozenset(self.tokens)

    @cached_property
    def content_words(self) -> tuple[str, ...]:
        """The words that carry meaning, in order (no stopwords, no bare numbers)."""
        return tuple(t for t in self.tokens if self.data.words.is_content(t))

    @cached_property
    def content_word_stems(self) -> tuple[str, ...]:
        """The stem of each content word, in order."""
        return tuple(self.data.words.stem(w) for w in self.content_words)

    @cached_property
    def content_stems(self) -> frozenset[str]:
        return frozenset(self.content_word_stems)

    @cached_property
    def content_bigrams(self) -> frozenset[tuple[str, str]]:
        """Stem pairs of consecutive content words: who does what to whom, roughly."""
        return frozenset(itertools.pairwise(self.content_word_stems))

    @cached_property
    def quantities(self) -> tuple[Quantity, ...]:
        return self.quantity_extractor(self.text, self.data.quantities)

    @cached_property
    def prefix_roots(self) -> frozenset[str]:
        return prefix_roots(self.tokens, self.data.polarity)

    @cached_property
    def polar_stems(self) -> frozenset[str]:
        """Content stems plus the roots of negative-prefix words ("asymptomatic" also mentions symptoms)."""
        return self.content_stems | {self.data.words.stem(r) for r in self.prefix_roots}

    @property
    def polarity_lists(self) -> PolarityWords:
        """The polarity cues and word lists (the word data's)."""
        return self.data.polarity

    @cached_property
    def negations(self) -> tuple[Negation, ...]:
        return negations(self.clean, self.prefix_roots, self.data.polarity, self.data.words)

    @cached_property
    def effect(self) -> bool | None:
        """True: reports an effect or difference; False: no difference; None: neither or both."""
        return states_effect(self.clean, self.data.polarity)

    @cached_property
    def strength(self) -> int:
        return strength(self.clean, self.data.strengths)

    @cached_property
    def reading(self) -> Reading:
        """The relation reading: relations and clause word order, read once (``checks.reading``). Only
        the word-order gate asks for the clauses, so they are read on first use, not with the relations."""
        data = self.data
        return read(self.clean, self.relations, data.grammar, data.verb_forms)

    @property
    def role_lists(self) -> RolePatterns:
        """The comparison cues (the word data's)."""
        return self.data.roles

    @property
    def role_grammar(self) -> RoleGrammar:
        """The role reader's grammar (the word data's)."""
        return self.data.grammar

    @cached_property
    def relations(self) -> tuple[Relation, ...]:
        """Directed relations: who does what to whom ("A causes B", "A is more ... than B")."""
        data = self.data
        return relations(self.clean, data.roles, data.grammar)

    @cached_property
    def entity_text(self) -> str:
        """The normalised text in American spelling, where entities are looked for."""
        return us_spelling(self.clean, self.data.entities)

    @cached_property
    def entity_words(self) -> tuple[str, ...]:
        return tuple(WORD.findall(self.entity_text))

    @cached_property
    def entity_stems(self) -> tuple[str, ...]:
        """``entity_words`` as Snowball stems (``gateway.stemming``): read once per text, however many
        claims are checked against it."""
        return tuple(stem(w) for w in self.entity_words)

    @cached_property
    def word_keys(self) -> tuple[frozenset[str], tuple[str, ...]]:
        """(the matching key of every word and word part, the content words in order) of
        ``entity_text`` (British spelling read as American): what the binding compares."""
        words = self.data.words
        plain = self.entity_text
        keys: set[str] = set()
        every = tokens(plain)
        for token in every:
            keys.add(words.stem(token))
            for part in WORD_PARTS.split(POSSESSIVE.sub("", token)):
                if part:
                    keys.add(words.stem(part))
        return frozenset(keys), tuple(t for t in every if words.is_content(t))

    @property
    def entity_lists(self) -> EntityWords:
        """The entity vocabulary (the word data's)."""
        return self.data.entities

    @cached_property
    def entities(self) -> tuple[Entity, ...]:
        return self.entity_extractor(self.text, self.entity_text, self.data.entities)

    @cached_property
    def subjects(self) -> Mapping[str, str]:
        """What the text says findings were observed in (``entities.subjects``)."""
        return MappingProxyType(subjects(self))


READINGS_KEPT = 1024
"""Analysed texts a ``Readings`` keeps between requests (least recently used dropped first)."""


class Readings:
    """Analysed texts kept across requests, by text (an LRU of ``size``; thread-safe): a passage and
    its windows, cited by many claims, are read once, not once per request. An analysis depends only
    on the text and the word data, so a kept one reads what a new one would."""

    def __init__(self, data: CheckData, size: int = READINGS_KEPT) -> None:
        self.data = data
        self._texts: LRUCache[str, AnalysedText] = LRUCache(maxsize=size)
        self._lock = threading.Lock()

    def __call__(self, text: str) -> AnalysedText:
        with self._lock:
            analysed = self._texts.get(text)
            if analysed is None:
                analysed = self._texts[text] = AnalysedText(text, self.data)
        return analysed


class Analyses:
    """The analysed texts of one request, by text: each distinct text is analysed once.

    Scoped to one call (a verifier builds one per request); ``kept``: a ``Readings`` to take texts
    from and leave them in (only with the current extractors, which it uses).
    """

    def __init__(
        self,
        data: CheckData,
        quantities: QuantityExtractor = extract_quantities,
        entities: EntityExtractor = extract_entities,
        kept: Readings | None = None,
    ) -> None:
        if kept is not None and (
            kept.data is not data or quantities is not extract_quantities or entities is not extract_entities
        ):
            raise ValueError("kept readings are only shared with the same word data and extractors")
        self.data = data
        self._quantities = quantities
        self._entities = entities
        self._kept = kept
        self._texts: dict[str, AnalysedText] = {}

    def __call__(self, text: str) -> AnalysedText:
        analysed = self._texts.get(text)
        if analysed is None:
            analysed = (
                self._kept(text)
                if self._kept is not None
                else AnalysedText(text, self.data, self._quantities, self._entities)
            )
            self._texts[text] = analysed
        return analysed
