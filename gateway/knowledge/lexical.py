"""BM25 over the passages, in numpy: the lexical half of hybrid retrieval.

Each passage is stored as (term ids, term frequencies). From those the index builds a term-major
posting list (CSR: ``offsets``, ``postings``, ``weights``) with the BM25 term weight of every
(term, passage) pair precomputed, so a query is a handful of vectorised slice-adds into one score
array: well under a millisecond at 40k passages.

The index can be saved to and loaded from an ``.npz`` file keyed by the store's version, so a
gateway process restarts without re-reading every passage from Chroma.
"""

from __future__ import annotations

import json
import os
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from gateway.stemming import STEMMER_NAME, stem

ALIAS_MINER = "aliases2"
"""Names the alias miner (aliases.py) in the analyzer: an index saved without its aliases is rebuilt."""

K1 = 1.2
"""BM25 term-frequency saturation."""
B = 0.75
"""BM25 length normalisation."""
MAX_QUERY_REPEAT = 3
"""A term written up to this many times in a query counts that many times (an expanded query
repeats the terms it means most: "heartburn (acid reflux, GERD) reflux"); more repeats count as this."""

_TOKEN = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*")
_STOPWORD_LIST = """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself yourselves s t are is"""
STOPWORDS = frozenset(_STOPWORD_LIST.split())
# "no" and "not" are stopwords for ranking only; negation matters to the verifier, not to BM25.

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float32]


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKD", text.lower()).encode("ascii", "ignore").decode("ascii")


def tokenize(text: str) -> list[str]:
    """Lower-cased, accent-folded, stop-word-free word tokens, Snowball-stemmed (``gateway.stemming``)."""
    return [stem(t) for t in _TOKEN.findall(_fold(text)) if t not in STOPWORDS]


def surface_tokens(text: str) -> list[tuple[str, str]]:
    """(word as written, lower-cased and folded; its index term) for each token ``tokenize`` keeps."""
    return [(t, stem(t)) for t in _TOKEN.findall(_fold(text)) if t not in STOPWORDS]


@dataclass(frozen=True)
class Vocabulary:
    """The indexed terms: each term's first-seen surface word and how many live records contain it."""

    terms: tuple[str, ...]
    surfaces: tuple[str, ...]
    document_frequency: npt.NDArray[np.int64]
    records: int
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Other names the live passages give their topics (aliases.py): alias -> what it names, the
    most often named first."""
    titles: frozenset[str] = frozenset()
    """The live records' document titles."""


@dataclass(frozen=True)
class LexicalHit:
    record_id: str
    score: float


class LexicalIndex:
    """BM25 over records keyed by id, with per-record ``tier`` and ``org`` labels for filtering."""

    def __init__(self, title_weight: int = 1) -> None:
        if not 1 <= title_weight <= 20:
            raise ValueError(f"title_weight must be between 1 and 20, got {title_weight}")
        self.title_weight = title_weight
        """How many times a passage's document title counts (BM25 field weighting by repetition)."""
        self._vocab: dict[str, int] = {}
        self._surface: list[str] = []
        """Per term id: the first word (as written, folded) that produced the term."""
        self._ids: list[str] = []
        self._position: dict[str, int] = {}
        self._terms: list[IntArray] = []
        self._freqs: list[IntArray] = []
        self._tiers: list[str] = []
        self._orgs: list[str] = []
        self._live: list[bool] = []
        self._aliases: list[tuple[tuple[str, str], ...]] = []
        self._titles: list[str] = []
        self._dirty = True
        self._offsets: IntArray = np.zeros(1, dtype=np.int32)
        self._postings: IntArray = np.zeros(0, dtype=np.int32)
        self._weights: FloatArray = np.zeros(0, dtype=np.float32)
        self._idf: FloatArray = np.zeros(0, dtype=np.float32)
        self._tier_codes: IntArray = np.zeros(0, dtype=np.int32)
        self._org_codes: IntArray = np.zeros(0, dtype=np.int32)
        self._labels: dict[str, int] = {}

    def __len__(self) -> int:
        return sum(self._live)

    def __contains__(self, record_id: object) -> bool:
        position = self._position.get(str(record_id))
        return position is not None and self._live[position]

    @property
    def analyzer(self) -> str:
        """What the index's terms and counts were made with: a saved index made otherwise is not loaded."""
        return f"{STEMMER_NAME};title={self.title_weight};{ALIAS_MINER}"

    def add(self, record_id: str, text: str, tier: str = "", org: str = "", title: str = "") -> None:
        """Add (or replace) one record: ``text`` counts once, its document ``title`` ``title_weight``
        times; the other names ``text`` gives its topics are kept for ``vocabulary``."""
        counts: Counter[str] = Counter()
        for words, weight in ((title, self.title_weight), (text, 1)):
            for surface, term in surface_tokens(words):
                counts[term] += weight
                if term not in self._vocab:
                    self._vocab[term] = len(self._vocab)
                    self._surface.append(surface)
        terms = np.fromiter((self._vocab[t] for t in counts), dtype=np.int32, count=len(counts))
        freqs = np.fromiter(counts.values(), dtype=np.int32, count=len(counts))
        self._put(record_id, terms, freqs, tier, org, tuple(mine_aliases(text, title)), title)

    def _put(
        self,
        record_id: str,
        terms: IntArray,
        freqs: IntArray,
        tier: str,
        org: str,
        aliases: tuple[tuple[str, str], ...] = (),
        title: str = "",
    ) -> None:
        position = self._position.get(record_id)
        if position is None:
            self._position[record_id] = len(self._ids)
            self._ids.append(record_id)
            self._terms.append(terms)
            self._freqs.append(freqs)
            self._tiers.append(tier)
            self._orgs.append(org)
            self._live.append(True)
            self._aliases.append(aliases)
            self._titles.append(title)
        else:
            self._terms[position], self._freqs[position] = terms, freqs
            self._tiers[position], self._orgs[position] = tier, org
            self._live[position] = True
            self._aliases[position] = aliases
            self._titles[position] = title
        self._dirty = True

    def title(self, record_id: str) -> str:
        """The document title ``record_id`` was added with ("" when unknown)."""
        position = self._position.get(record_id)
        return self._titles[position] if position is not None else ""

    def remove(self, record_ids: Iterable[str]) -> None:
        for record_id in record_ids:
            position = self._position.get(record_id)
            if position is not None and self._live[position]:
                self._live[position] = False
                self._terms[position] = np.zeros(0, dtype=np.int32)
                self._freqs[position] = np.zeros(0, dtype=np.int32)
                self._aliases[position] = ()
                self._dirty = True

    def _label(self, value: str) -> int:
        return self._labels.setdefault(value, len(self._labels))

    def _build(self) -> None:
        """Recompute the term-major posting lists and BM25 weights from the per-record rows."""
        n_records = len(self._ids)
        lengths = np.fromiter((int(f.sum()) for f in self._freqs), dtype=np.float32, count=n_records)
        live = np.asarray(self._live, dtype=bool)
        n_live = int(live.sum())
        average = float(lengths[live].mean()) if n_live else 1.0
        sizes = np.fromiter((len(t) for t in self._terms), dtype=np.int64, count=n_records)
        docs = np.repeat(np.arange(n_records, dtype=np.int32), sizes)
        terms = np.concatenate(self._terms) if n_records else np.zeros(0, dtype=np.int32)
        freqs = (np.concatenate(self._freqs) if n_records else np.zeros(0, dtype=np.int32)).astype(np.float32)
        norm = K1 * (1.0 - B + B * lengths[docs] / max(average, 1e-9))
        weights = freqs * (K1 + 1.0) / (freqs + norm)
        order = np.argsort(terms, kind="stable")
        n_terms = len(self._vocab)
        document_frequency = np.bincount(terms, minlength=n_terms).astype(np.float32)
        self._offsets = np.concatenate([[0], np.cumsum(document_frequency)]).astype(np.int32)
        self._postings = docs[order]
        self._weights = weights[order].astype(np.float32)
        self._idf = np.log(1.0 + (n_live - document_frequency + 0.5) / (document_frequency + 0.5)).astype(
            np.float32
        )
        self._tier_codes = np.fromiter((self._label(t) for t in self._tiers), dtype=np.int32, count=n_records)
        self._org_codes = np.fromiter((self._label(o) for o in self._orgs), dtype=np.int32, count=n_records)
        self._live_mask = live
        self._dirty = False

    def allowed(self, record_id: str, tiers: Sequence[str] | None, orgs: Sequence[str] | None) -> bool:
        """Whether the record passes the tier and org filters (empty filters pass everything)."""
        position = self._position.get(record_id)
        if position is None:
            return False
        return (not tiers or self._tiers[position] in tiers) and (not orgs or self._orgs[position] in orgs)

    def vocabulary(self) -> Vocabulary:
        """The indexed terms with their surface words and live document frequencies."""
        if self._dirty:
            self._build()
        frequency = np.diff(self._offsets).astype(np.int64)  # removed records hold no terms
        if len(frequency) < len(self._vocab):
            frequency = np.concatenate([frequency, np.zeros(len(self._vocab) - len(frequency), np.int64)])
        named: dict[str, Counter[str]] = {}
        for alive, pairs in zip(self._live, self._aliases, strict=True):
            for alias, target in pairs if alive else ():
                named.setdefault(alias, Counter())[target] += 1
        aliases = {alias: tuple(t for t, _ in targets.most_common()) for alias, targets in named.items()}
        titles = frozenset(t for alive, t in zip(self._live, self._titles, strict=True) if alive and t)
        return Vocabulary(tuple(self._vocab), tuple(self._surface), frequency, len(self), aliases, titles)

    def search(
        self,
        query: str,
        k: int,
        tiers: Sequence[str] | None = None,
        orgs: Sequence[str] | None = None,
    ) -> list[LexicalHit]:
        """The ``k`` best records by BM25 (score > 0), optionally only those with a listed tier/org."""
        if self._dirty:
            self._build()
        if not self._ids:
            return []
        repeats = Counter(self._vocab[t] for t in tokenize(query) if t in self._vocab)
        if not repeats:
            return []
        scores = np.zeros(len(self._ids), dtype=np.float32)
        for term in sorted(repeats):
            start, end = int(self._offsets[term]), int(self._offsets[term + 1])
            weight = self._idf[term] * min(repeats[term], MAX_QUERY_REPEAT)
            scores[self._postings[start:end]] += weight * self._weights[start:end]
        mask = self._live_mask.copy()
        if tiers:
            mask &= np.isin(self._tier_codes, [self._labels.get(t, -1) for t in tiers])
        if orgs:
            mask &= np.isin(self._org_codes, [self._labels.get(o, -1) for o in orgs])
        scores[~mask] = 0.0
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > k:
            candidates = candidates[np.argpartition(-scores[candidates], k - 1)[:k]]
        ranked = candidates[np.argsort(-scores[candidates], kind="stable")]
        return [LexicalHit(self._ids[i], float(scores[i])) for i in ranked]

    # Persistence -------------------------------------------------------------------------------

    def save(self, path: Path, version: str) -> None:
        """Write the index (live records only) to ``path`` atomically, tagged with ``version``."""
        rows = [i for i, alive in enumerate(self._live) if alive]
        sizes = np.asarray([len(self._terms[i]) for i in rows], dtype=np.int64)
        header = {
            "version": version,
            "analyzer": self.analyzer,
            "vocab": list(self._vocab),
            "surface": self._surface,
            "ids": [self._ids[i] for i in rows],
            "tiers": [self._tiers[i] for i in rows],
            "orgs": [self._orgs[i] for i in rows],
            "aliases": [self._aliases[i] for i in rows],
            "titles": [self._titles[i] for i in rows],
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        # one partial file per writer: a gateway and an ``ingest`` beside it may save at once
        partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.partial.npz")
        np.savez(
            partial,
            header=np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8),
            offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
            terms=np.concatenate([self._terms[i] for i in rows]) if rows else np.zeros(0, np.int32),
            freqs=np.concatenate([self._freqs[i] for i in rows]) if rows else np.zeros(0, np.int32),
        )
        partial.replace(path)

    @classmethod
    def load(cls, path: Path, version: str, title_weight: int = 1) -> LexicalIndex | None:
        """The index saved at ``path`` if it exists and was saved for ``version`` by the same analyzer
        (stemmer and title weight); else None."""
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                header = json.loads(bytes(data["header"]).decode("utf-8"))
                index = cls(title_weight)
                if header.get("version") != version or header.get("analyzer") != index.analyzer:
                    return None
                offsets, terms, freqs = data["offsets"], data["terms"], data["freqs"]
        except (OSError, ValueError, KeyError):
            return None
        index._vocab = {t: i for i, t in enumerate(header["vocab"])}
        surface = header.get("surface")
        index._surface = (
            list(surface)
            if isinstance(surface, list) and len(surface) == len(index._vocab)
            else list(index._vocab)
        )
        aliases = header.get("aliases") or [()] * len(header["ids"])
        titles = header.get("titles") or [""] * len(header["ids"])
        for row, record_id in enumerate(header["ids"]):
            start, end = int(offsets[row]), int(offsets[row + 1])
            index._put(
                record_id,
                terms[start:end].astype(np.int32),
                freqs[start:end].astype(np.int32),
                header["tiers"][row],
                header["orgs"][row],
                tuple((str(a), str(t)) for a, t in aliases[row]),
                str(titles[row]),
            )
        return index


# Other names a passage gives its topic (aliases.py reads them; here so that ``add`` mines them) -----

_ALSO = re.compile(
    r"(?P<before>[^.;:!?\n]{0,120}?)[,(]?\s*\b(?:also|sometimes|commonly|formerly|often)\s+"
    r"(?:called|known\s+as|referred\s+to\s+as|named)\s+(?P<alias>[^.;:,()\n\"]{3,60}?)"
    r"(?=\s*(?:[.;:,)\n]|\bor\b|\band\b|\bis\b|\bare\b|\bwhich\b|$))",
    re.IGNORECASE,
)
_ACRONYM = re.compile(r"((?:[A-Za-z][\w'-]*\s+){1,8})\(([A-Z][A-Z0-9]{1,7})s?\)")
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.IGNORECASE)
_DEMONSTRATIVE = re.compile(
    r"\b(?:this|the|these)\s+(?:condition|disease|disorder|syndrome|problem|illness|infection|"
    r"procedure|test|treatment|cancer|tumou?r)s?\s*(?:is|are|was|were)?\s*$",
    re.IGNORECASE,
)
MAX_ALIAS_WORDS = 5


def normal_alias(text: str) -> str:
    """An alias as it is compared: lower-case, single-spaced, without a leading article."""
    return _ARTICLE.sub("", " ".join(text.lower().split())).strip(" -'\"")


def content_terms(text: str) -> set[str]:
    """The index terms of ``text``'s words of three letters or more, numbers aside."""
    return {term for surface, term in surface_tokens(text) if len(surface) > 2 and not surface.isdigit()}


def mine_aliases(text: str, title: str) -> list[tuple[str, str]]:
    """(alias, what it names) pairs found in ``text``, a passage of the document titled ``title``."""
    found: list[tuple[str, str]] = []
    title_words = content_terms(title)
    for match in _ALSO.finditer(text):
        alias = normal_alias(match.group("alias"))
        before = match.group("before")
        words = alias.split()
        if not words or len(words) > MAX_ALIAS_WORDS or all(w in STOPWORDS for w in words):
            continue
        names_title = bool(title_words & content_terms(before)) or bool(_DEMONSTRATIVE.search(before))
        if names_title and not content_terms(alias) <= title_words:  # the title's own words are no alias
            found.append((alias, title))
    for match in _ACRONYM.finditer(text):
        letters = match.group(2).lower()
        if letters in STOPWORDS:
            continue
        words = match.group(1).split()
        long_form = _long_form(words, letters)
        if long_form:
            found.append((match.group(2), long_form))  # capitals mark an acronym (``AliasTable``)
    return found


def _long_form(words: list[str], letters: str) -> str | None:
    """The fewest words before an acronym that spell it (Schwartz & Hearst: each letter, right to
    left, found in order in the words, the first letter opening a word), or None."""
    for start in range(len(words) - 1, max(-1, len(words) - 2 * len(letters) - 1), -1):
        chosen = words[start:]
        if chosen[0].lower() in STOPWORDS or not _spells(" ".join(chosen).lower(), letters):
            continue
        return " ".join(chosen)
    return None


def _spells(long_form: str, letters: str) -> bool:
    position = len(long_form) - 1
    for index in range(len(letters) - 1, -1, -1):
        letter = letters[index]
        while position >= 0 and (
            long_form[position] != letter
            or (index == 0 and position > 0 and long_form[position - 1].isalnum())
        ):
            position -= 1
        if position < 0:
            return False
        position -= 1
    return True
