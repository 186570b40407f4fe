"""Question focus: a patient's message in, the search queries that matter out.

Real messages are long and messy: a greeting, a backstory, two questions, a misspelt drug, a brand
name, lay words. Searching the whole message as one query lets that noise decide what is found.
``QueryPlanner.plan`` turns a message into a few ``PlannedQuery``:

* sentences that are only courtesy (greetings, thanks, sign-offs) are dropped and filler phrases
  ("I was wondering if", "please") removed (patterns: ``policies/query.yaml``);
* each question sentence becomes a query; a question that names too few topic terms of its own
  ("what else can he do about it?") carries the topic terms of the backstory ("gout", "allopurinol").
  With a backstory, the whole focused message is one more query;
* a word the knowledge base never indexed is corrected to the closest indexed word (rapidfuzz, see
  ``Lexicon``), then brand and lay words get their generic and clinical terms added
  (``policies/vocabulary.yaml``), in both the dense text and the BM25 text.

The store searches every planned query and fuses the lists (store.py), so a message with several
questions retrieves for each.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Annotated

from pydantic import Field, with_config
from rapidfuzz import fuzz, process
from rapidfuzz.distance import JaroWinkler

from gateway.knowledge.aliases import AliasTable
from gateway.knowledge.answer_kinds import SectionKinds, load_section_kinds
from gateway.knowledge.fusion import fused_scores
from gateway.knowledge.lexical import STOPWORDS, Vocabulary, surface_tokens
from gateway.knowledge.rewrite import RewriteWords
from gateway.knowledge.synonyms import WORD as _WORD
from gateway.knowledge.synonyms import Synonyms, load_vocabulary
from gateway.stemming import stem
from gateway.text import split_sentences
from gateway.validation import FILE_CONFIG, UnitInterval, field_error, load_file

_SPACES = re.compile(r"\s+")
_ALPHA = re.compile(r"^[a-z]+$")
_LEADING = re.compile(r"[a-z][a-z']*")
_TOPIC = re.compile(r"^[a-z][a-z0-9]*$")
"""A topic word: letters, possibly with digits after the first ("brca1"), never a bare number."""
_CONNECTIVES = frozenset({"also", "and", "but", "so", "then", "plus", "oh", "ok", "okay", "well", "now"})
"""Words that may open a question sentence before its question word ("also, is it safe ...")."""


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class QueryWords:
    """``policies/query.yaml``: what question focus removes, keeps and carries over."""

    courtesy_sentences: tuple[str, ...] = ()
    filler_phrases: tuple[str, ...] = ()
    question_starts: tuple[str, ...] = ()
    question_cues: tuple[str, ...] = ()
    backstory_words: tuple[str, ...] = ()
    max_questions: Annotated[int, Field(ge=1, le=20)] = 4
    long_message_words: Annotated[int, Field(ge=10, le=1000)] = 80
    min_topic_terms: Annotated[int, Field(ge=0, le=20)] = 2
    max_carried_terms: Annotated[int, Field(ge=0, le=50)] = 6
    max_carried_document_share: UnitInterval = 0.05
    spelling_min_length: Annotated[int, Field(ge=2, le=50)] = 5
    spelling_min_score: Annotated[float, Field(ge=50.0, le=100.0)] = 84.0
    spelling_near_score: Annotated[float, Field(ge=50.0, le=100.0)] = 74.0
    spelling_near_jaro_winkler: Annotated[float, Field(ge=0.5, le=1.0)] = 0.92
    spelling_max_length_difference: Annotated[int, Field(ge=0, le=10)] = 3
    spelling_variants: tuple[tuple[str, str], ...] = ()
    """(pattern, replacement) pairs turning one spelling convention into the knowledge base's
    ("haemorrhage" -> "hemorrhage"): applied to a word the index does not hold, kept when the
    result is indexed."""
    min_question_words: Annotated[int, Field(ge=1, le=10)] = 1
    """A question of fewer words is a fragment ("Bread?") when the message asks a longer one."""
    bm25_title_weight: Annotated[int, Field(ge=1, le=20)] = 1
    """How many times a document's title counts in BM25 (lexical.py)."""
    model_rewrite: RewriteWords = field(default_factory=RewriteWords)
    """The optional query rewrite by the upstream model (rewrite.py): its prompt and bounds."""

    def __post_init__(self) -> None:
        for key in ("courtesy_sentences", "filler_phrases", "question_cues", "spelling_variants"):
            for pattern in getattr(self, key):
                pattern = pattern[0] if isinstance(pattern, tuple) else pattern
                try:
                    re.compile(pattern)
                except re.error as err:
                    raise field_error(self, key, f"bad regular expression {pattern!r}: {err}") from None

    @cached_property
    def courtesy(self) -> re.Pattern[str]:
        return _alternation(self.courtesy_sentences)

    @cached_property
    def filler(self) -> list[re.Pattern[str]]:
        return [re.compile(p, re.IGNORECASE) for p in self.filler_phrases]

    @cached_property
    def cues(self) -> re.Pattern[str]:
        return _alternation(self.question_cues)

    @cached_property
    def starts(self) -> frozenset[str]:
        return frozenset(w.lower() for w in self.question_starts)

    @cached_property
    def variants(self) -> tuple[tuple[re.Pattern[str], str], ...]:
        return tuple((re.compile(p), r) for p, r in self.spelling_variants)

    @cached_property
    def backstory(self) -> frozenset[str]:
        words = {w.lower() for w in self.backstory_words}
        return frozenset(words | {stem(w) for w in words})


def _alternation(patterns: Sequence[str]) -> re.Pattern[str]:
    if not patterns:
        return re.compile(r"(?!x)x")
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


def load_query_words(path: Path) -> QueryWords:
    return load_file(path, QueryWords)


class Lexicon:
    """The knowledge base's own indexed vocabulary: which words it knows, how common each is, and
    the closest indexed word to one it does not know.

    Built from the BM25 index (``LexicalIndex.vocabulary``) when the index changes. Correction looks
    only at indexed words (in live passages) with the same first letter and a similar length, so one
    lookup scores a few thousand short strings (well under a millisecond). A
    candidate needs a rapidfuzz ratio of ``spelling_min_score``, or ``spelling_near_score`` with a
    Jaro-Winkler similarity of ``spelling_near_jaro_winkler`` (a dropped syllable in a long drug
    name: "ciprofaxin" is 78 by ratio, 0.93 by Jaro-Winkler, to "ciprofloxacin").
    """

    def __init__(
        self,
        vocabulary: Vocabulary,
        words: QueryWords,
        extra_known: Iterable[str] = (),
        dictionary: frozenset[str] = frozenset(),
    ) -> None:
        self._words = words
        self._records = max(1, vocabulary.records)
        self._frequency = dict(zip(vocabulary.terms, vocabulary.document_frequency.tolist(), strict=True))
        self._indexed = frozenset(vocabulary.terms)
        self._known = self._indexed | frozenset(w.lower() for w in extra_known)
        self._dictionary = dictionary
        self.aliases = AliasTable(vocabulary.aliases, dictionary, share=self.share, titles=vocabulary.titles)
        """The other names the knowledge base gives its topics (aliases.py): BM25 expansion terms."""
        buckets: dict[tuple[str, int], list[tuple[str, int]]] = {}
        for surface, count in zip(vocabulary.surfaces, vocabulary.document_frequency.tolist(), strict=True):
            if count >= 1 and len(surface) >= 4 and _ALPHA.match(surface):
                buckets.setdefault((surface[0], len(surface)), []).append((surface, int(count)))
        for word in extra_known:
            word = word.lower()
            if len(word) >= 4 and _ALPHA.match(word):
                buckets.setdefault((word[0], len(word)), []).append((word, 2))
        self._buckets = buckets

    def known(self, word: str) -> bool:
        """Indexed, a stop word, a vocabulary key, or a whole word of the model's own vocabulary."""
        word = word.lower()
        return (
            word in STOPWORDS or word in self._known or stem(word) in self._known or word in self._dictionary
        )

    def indexed(self, word: str) -> bool:
        """Whether the knowledge base itself uses ``word``."""
        word = word.lower()
        return word in self._indexed or stem(word) in self._indexed

    def share(self, term: str) -> float:
        """Share of indexed passages holding ``term`` (an index term, i.e. stemmed)."""
        return float(self._frequency.get(term, 0)) / self._records

    def respell(self, word: str) -> str | None:
        """The indexed spelling of a word the index does not hold (``spelling_variants``: British to
        American, "oesophagus" -> "esophagus"), each variant alone, then all of them; else None."""
        if self.indexed(word):
            return None
        variants = self._words.variants
        tried = [pattern.sub(replacement, word) for pattern, replacement in variants]
        combined = word
        for pattern, replacement in variants:
            combined = pattern.sub(replacement, combined)
        for candidate in (*tried, combined):
            if candidate != word and self.indexed(candidate):
                return candidate
        return None

    def correct(self, word: str) -> str | None:
        """The indexed word ``word`` is most likely a misspelling (or another spelling) of, or None."""
        word = word.lower()
        settings = self._words
        if len(word) >= 4 and _ALPHA.match(word):
            respelt = self.respell(word)
            if respelt is not None:
                return respelt
        if len(word) < settings.spelling_min_length or not _ALPHA.match(word) or self.known(word):
            return None
        spread = settings.spelling_max_length_difference
        candidates: list[tuple[str, int]] = []
        for length in range(len(word) - spread, len(word) + spread + 1):
            candidates.extend(self._buckets.get((word[0], length), ()))
        if not candidates:
            return None
        found = [
            (score, text, index)
            for text, score, index in process.extract(
                word,
                [c for c, _ in candidates],
                scorer=fuzz.ratio,
                score_cutoff=min(settings.spelling_min_score, settings.spelling_near_score),
                limit=10,
            )
            if score >= settings.spelling_min_score
            or JaroWinkler.normalized_similarity(word, text) >= settings.spelling_near_jaro_winkler
        ]
        if not found:
            return None
        best = max(score for score, _, _ in found)
        close = [(candidates[index][1], text) for score, text, index in found if score >= best - 2.0]
        return max(close)[1]

    def correct_text(self, text: str) -> str:
        """``text`` with each word ``correct`` recognises as a misspelling replaced."""

        def fix(match: re.Match[str]) -> str:
            word = match.group(0)
            return self.correct(word) or word

        return _WORD.sub(fix, text)


@dataclass(frozen=True)
class PlannedQuery:
    """One search of a message: ``text`` is embedded (dense, question matching); ``lexical`` goes to BM25."""

    text: str
    lexical: str
    question: bool = True
    """Whether the query asks something (question matching only runs for questions: a keyword
    search matched against question titles finds sections by their topic word alone)."""


@dataclass(frozen=True)
class _Sentence:
    text: str
    """Focused: filler removed, spelling corrected, synonyms inserted after the words they explain."""
    expansions: tuple[str, ...]
    topics: tuple[tuple[str, float], ...]
    """Topic words of the sentence as written (after correction), each with its passage share."""
    question: bool


class QueryPlanner:
    """Turns a patient's message into the queries worth searching (see the module docstring)."""

    def __init__(self, words: QueryWords, synonyms: Synonyms, kinds: SectionKinds | None = None) -> None:
        self.words = words
        self.synonyms = synonyms
        self.kinds = kinds or SectionKinds()
        """The section kinds a question asks for (answer_kinds.py): ranks the fused candidates."""

    def lexicon(self, vocabulary: Vocabulary, dictionary: frozenset[str] = frozenset()) -> Lexicon:
        return Lexicon(vocabulary, self.words, self.synonyms.words, dictionary)

    def asks(self, text: str) -> bool:
        return _asks(text, self.words)

    def asked_kinds(self, plans: Sequence[PlannedQuery]) -> frozenset[str]:
        """The section kinds the planned questions ask (all plans when none is a question)."""
        asking = [p.text for p in plans if p.question] or [p.text for p in plans]
        return frozenset().union(*(self.kinds.asked(text) for text in asking))

    def order(
        self, plans: Sequence[PlannedQuery], lists: Sequence[Sequence[str]], heading_of: Callable[[str], str]
    ) -> list[str]:
        """The record ids of the searched ``lists`` fused, those headed by the kind of answer the
        ``plans`` ask moved up (``SectionKinds.rerank``): the one order the store and the bench use."""
        return self.kinds.rerank(fused_scores(lists), self.asked_kinds(plans), heading_of)

    def plan(self, message: str, lexicon: Lexicon | None = None) -> list[PlannedQuery]:
        sentences = [s for s in (self._sentence(raw, lexicon) for raw in _split(message)) if s is not None]
        if not sentences:
            whole = " ".join(message.split())
            return [PlannedQuery(whole, whole, _asks(whole, self.words))] if whole else []
        questions = [s for s in sentences if s.question]
        if any(len(q.text.split()) >= self.words.min_question_words for q in questions):
            # "Bread? Fruit? Potatoes? Is there an eating plan for diabetics?": the fragments are
            # examples of the question, not questions of their own; they count as its backstory
            questions = [q for q in questions if len(q.text.split()) >= self.words.min_question_words]
        backstory = [s for s in sentences if s not in questions]
        queries: list[PlannedQuery] = []
        carried = self._carried(backstory)
        whole_words = sum(len(s.text.split()) for s in sentences)
        separate = len(questions) > 1 or whole_words > self.words.long_message_words
        for question in questions[: self.words.max_questions] if separate else ():
            text, extra = question.text, question.expansions
            if len(question.topics) < self.words.min_topic_terms:
                own = {t.lower() for t, _ in question.topics}
                add = [t for t in carried if t.lower() not in own]
                if add:
                    text = f"{text} {' '.join(add)}"
            queries.append(PlannedQuery(text, _join(text, extra), True))
        if len(questions) < 2 or backstory:
            text = " ".join(s.text for s in sentences)
            extra = tuple(e for s in sentences for e in s.expansions)
            focused = PlannedQuery(text, _join(text, extra), bool(questions))
            if focused not in queries:
                queries.append(focused)
        return queries

    def _carried(self, backstory: list[_Sentence]) -> list[str]:
        """The ``max_carried_terms`` rarest topic words of the backstory, in message order."""
        shares: dict[str, float] = {}
        for sentence in backstory:
            for word, share in sentence.topics:
                shares.setdefault(word, share)
        rarest = sorted(shares, key=lambda w: shares[w])[: self.words.max_carried_terms]
        return [w for w in shares if w in rarest]

    def _sentence(self, raw: str, lexicon: Lexicon | None) -> _Sentence | None:
        words = self.words
        text = " ".join(raw.split())
        asked = "?" in text
        if not asked and words.courtesy.search(text):
            return None
        cue = bool(words.cues.search(text))
        for pattern in words.filler:
            text = pattern.sub(" ", text)
        text = _SPACES.sub(" ", text).strip(" ,;:-")
        if not any(t for _, t in surface_tokens(text)):
            return None
        leading = [w.replace("'", "") for w in _LEADING.findall(text.lower())[:3]]
        while len(leading) > 1 and leading[0] in _CONNECTIVES:
            leading = leading[1:]
        question = asked or cue or bool(leading and leading[0] in words.starts)
        text = self._correct(text, lexicon)
        text, expansions = self._expand(text, lexicon)
        return _Sentence(text, expansions, self._topics(text, expansions, lexicon), question)

    def _correct(self, text: str, lexicon: Lexicon | None) -> str:
        return text if lexicon is None else lexicon.correct_text(text)

    def _expand(self, text: str, lexicon: Lexicon | None) -> tuple[str, tuple[str, ...]]:
        """The matched keys' terms, for BM25; inserted after the key in the text as well
        ("GlucaGen (glucagon)") when the knowledge base does not use one of the key's words itself.

        A word the sources use ("contagious", "chemo") already means to the model what the sources
        mean by it; rewording it in the dense query only moves the vector away from them.
        """
        added: list[str] = []
        parts: list[str] = []
        done = 0
        for start, end, normal in self.synonyms.find(text):
            written = text[start:end]
            terms = [t for t in self.synonyms.terms[normal] if t.lower() != written.lower()]
            added.extend(terms)
            parts.append(text[done:end])
            done = end
            if normal in self.synonyms.lexical_only:
                continue
            foreign = lexicon is None or not all(lexicon.indexed(w) for w in _WORD.findall(written))
            if terms and foreign:
                parts.append(f" ({', '.join(terms)})")
        parts.append(text[done:])
        if lexicon is not None:  # the knowledge base's own other names: BM25 only
            added.extend(w for w in lexicon.aliases.expand(text) if w not in added)
        return "".join(parts), tuple(added)

    def _topics(
        self, text: str, expansions: tuple[str, ...], lexicon: Lexicon | None
    ) -> tuple[tuple[str, float], ...]:
        """Words naming what the sentence is about: indexed, not too common, not backstory chatter."""
        limit = self.words.max_carried_document_share
        found: dict[str, float] = {}
        for written, term in surface_tokens(text):
            surface = written.removesuffix("'s").replace("'", "")
            if surface in STOPWORDS or term in self.words.backstory or surface in self.words.backstory:
                continue
            if not _TOPIC.match(surface) or len(surface) < 2:
                continue
            share = lexicon.share(term) if lexicon is not None else 0.0
            if lexicon is not None and (not lexicon.known(surface) or share > limit):
                continue
            found.setdefault(surface, share)
        return tuple(found.items())


def model_words(model_path: str | Path | None) -> frozenset[str]:
    """Whole words of the embedding model's word-piece vocabulary (``vocab.txt``), if it has one:
    ordinary English the spelling corrector must not "correct" when the sources never use it."""
    if model_path is None:
        return frozenset()
    path = Path(model_path) / "vocab.txt"
    if not path.is_file():
        return frozenset()
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(w for w in lines if len(w) >= 3 and _ALPHA.match(w))


def _asks(text: str, words: QueryWords) -> bool:
    """A question mark, a question cue, or a question word first."""
    leading = _LEADING.findall(text.lower())[:1]
    return "?" in text or bool(words.cues.search(text)) or bool(leading and leading[0] in words.starts)


def _split(message: str) -> list[str]:
    """The message's sentences by the one splitter, in its mode for typed text (lower-case starts)."""
    return split_sentences(message, typed=True)


def _join(text: str, extra: Sequence[str]) -> str:
    return f"{text} {' '.join(extra)}" if extra else text


def load_planner(directory: Path, fallback: Path | None = None) -> QueryPlanner:
    """The planner of a policy directory: its ``query.yaml``, ``vocabulary.yaml`` and the section
    kinds of ``extractive.yaml``; a file the directory does not have is read from ``fallback`` (the
    bundled policies) when one is given."""

    def pick(name: str) -> Path:
        path = directory / name
        return fallback / name if fallback is not None and not path.is_file() else path

    words = load_query_words(pick("query.yaml"))
    kinds_path = pick("extractive.yaml")
    kinds = load_section_kinds(kinds_path)
    synonyms = load_vocabulary(pick("vocabulary.yaml"), kinds.search_words, str(kinds_path))
    return QueryPlanner(words, synonyms, kinds)
