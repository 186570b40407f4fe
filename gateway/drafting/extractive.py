"""The built-in extractive responder: the embedded default, with no model and no key.

It answers with the passage sentences closest in meaning to the question, each cited and quoted
verbatim, so it honours the same citation contract as a real model and the whole pipeline (including
verification) runs offline. Every sentence comes from one document, the one holding the sentence
closest to the question: a sentence lifted from another document keeps its words but loses its subject
("Adult doses usually range from 250 mg to 500 mg three times a day" from an amoxicillin leaflet reads
as a paracetamol dose in an answer about paracetamol), and verification cannot see that.

A question in a passage (a sentence ending in "?", or a MedQuAD heading such as "What is (are) Gout ?")
is never quoted: it states nothing. When no sentence is close enough to the question, the responder
raises ``NothingToQuote`` and the request is refused as ``nothing_to_quote`` (not ``malformed_output``:
nothing is malformed, the sources simply hold no answer to quote).

Sentences are ranked by their cosine to the question plus two small bonuses (``policies/extractive.yaml``):
the share of the question's focus words (Snowball stems) the sentence holds, and a cue when the question
asks a kind of thing ("how often ...?") and the sentence holds the words that answer it ("every 4 to 6
hours"). Cosine alone answered "how often can I take paracetamol?" with "Paracetamol is a common
painkiller ...", the sentence most *about* paracetamol, instead of the dosing interval.

Only passages as relevant as the relevance gate asks of the best one (``retrieval.min_relevance``) are
quoted: a weaker passage is in the context for the model's sake, not as an answer. Without this, "side
effects of ibuprofen" was answered from the amoxicillin leaflet (relevance 0.45), whose "the most common
side effects of amoxicillin are ..." is the sentence closest to the question, while the ibuprofen label
(0.56) was retrieved first.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

import anyio.to_thread
import numpy as np

from gateway.domain import ChatRequest, Draft, Passage
from gateway.drafting.contract import DraftEnd, DraftPart, DraftSentence, assemble, sentence_line
from gateway.drafting.extractive_policy import ExtractivePolicy, load_extractive_policy
from gateway.errors import NothingToQuote
from gateway.knowledge.lexical import STOPWORDS
from gateway.models.embedding import Embedder
from gateway.stemming import stem
from gateway.text import load_question_words

MAX_SENTENCES = 3
"""Sentences in an extractive answer: enough to answer, few enough to read."""
MIN_SIMILARITY = 0.3
"""Sentences less similar than this to the question are never chosen."""
PER_PASSAGE = 2
"""At most this many sentences come from one passage, so the answer draws on several passages."""
HEADING_MAX_WORDS = 12
"""A line this short without closing punctuation that asks (a question word first) is a heading."""
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _stems(text: str, asking: frozenset[str], ignored: frozenset[str] = frozenset()) -> set[str]:
    words = _WORD.findall(text.lower())
    return {stem(w) for w in words if w not in STOPWORDS and w not in asking and w not in ignored}


def is_heading_question(sentence: str, asking: frozenset[str]) -> bool:
    """A question, or a heading that asks one (MedQuAD: "What is (are) Gout ?", "How to prevent
    Gout"): never quoted as a fact, since it states nothing. ``asking``: the question words
    (``load_question_words``)."""
    text = sentence.strip().rstrip("*_#").strip()
    if text.endswith("?"):
        return True
    words = text.split()
    return (
        bool(words)
        and len(words) <= HEADING_MAX_WORDS
        and text[-1] not in ".!:;"
        and words[0].lower().strip("*_#") in asking
    )


class ExtractiveResponder:
    name = "extractive"
    calls_tools = False
    """No model: the client's tools cannot be offered, so a request offering them is triaged as without."""

    def __init__(
        self,
        embedder: Embedder,
        min_relevance: float = 0.0,
        policy: ExtractivePolicy | None = None,
        policy_dir: Path | None = None,
        min_similarity: float = MIN_SIMILARITY,
        question_words: Path | None = None,
    ) -> None:
        """``policy``: how sentences are ranked (default: ``extractive.yaml`` of ``policy_dir``, else
        the bundled one); ``min_similarity``: the floor below which no sentence is chosen. The question
        words (``question_words``, default the bundled list) are read here, when the responder is built
        at start-up (a bad file stops it)."""
        self._embedder = embedder
        self._min_similarity = min_similarity
        self._min_relevance = min_relevance
        self._policy = policy or load_extractive_policy(policy_dir)
        self._ignored = frozenset(w.lower() for w in self._policy.ignored_words)
        self._asking = load_question_words(question_words)

    async def stream(
        self, request: ChatRequest, passages: Sequence[Passage]
    ) -> AsyncGenerator[DraftPart, None]:
        """The same parts a model following the contract writes: each chosen sentence, cited, quoted
        verbatim (no urgency read: the responder has no judgement of its own)."""
        started = time.perf_counter()
        chosen = await anyio.to_thread.run_sync(self._choose, request.question, passages)
        if not chosen:
            raise NothingToQuote("no passage sentence is close enough to the question to quote")
        for number, sentence in chosen:
            yield DraftSentence(sentence, (number,), sentence)
        raw = "\n".join(sentence_line(s, (n,), s) for n, s in chosen)
        yield DraftEnd(raw, time.perf_counter() - started)

    async def draft(self, request: ChatRequest, passages: Sequence[Passage]) -> Draft:
        sentences: list[DraftSentence] = []
        async for part in self.stream(request, passages):
            if isinstance(part, DraftSentence):
                sentences.append(part)
            elif isinstance(part, DraftEnd):
                return assemble(sentences, part.raw, part.seconds)
        raise AssertionError("the stream ends with DraftEnd")  # pragma: no cover

    def _choose(self, question: str, passages: Sequence[Passage]) -> list[tuple[int, str]]:
        candidates: list[tuple[int, int, str]] = []
        documents: list[str] = []
        vectors = []
        floor = self._min_relevance if any(p.score >= self._min_relevance for p in passages) else 0.0
        for number, passage in enumerate(passages, start=1):
            if passage.score < floor:
                continue
            sentences = passage.sentences()
            matrix = passage.sentence_vectors
            if matrix is None or len(matrix) != len(sentences):
                matrix = self._embedder.encode([text for _, text in sentences])
            for index, (_, text) in enumerate(sentences):
                if is_heading_question(text, self._asking):
                    continue
                candidates.append((number, index, text))
                documents.append(passage.document_id)
                vectors.append(matrix[index])
        if not candidates:
            return []
        query = self._embedder.encode_one(question)
        similarities = np.asarray(vectors, dtype=np.float32) @ query
        topic = documents[int(np.argmax(similarities))]
        ranks = similarities + self._bonuses(question, [text for _, _, text in candidates])
        order = np.argsort(-ranks, kind="stable")
        picked: list[tuple[int, int, str]] = []
        per_passage: dict[int, int] = {}
        for i in order:
            if len(picked) == MAX_SENTENCES:
                break
            if similarities[i] < self._min_similarity:
                continue
            number, index, text = candidates[int(i)]
            if documents[int(i)] != topic:
                continue
            if per_passage.get(number, 0) >= PER_PASSAGE or any(text == p[2] for p in picked):
                continue
            per_passage[number] = per_passage.get(number, 0) + 1
            picked.append(candidates[int(i)])
        picked.sort(key=lambda c: (c[0], c[1]))
        return [(number, text) for number, _, text in picked]

    def _bonuses(self, question: str, sentences: Sequence[str]) -> np.ndarray:
        """Per sentence: ``focus_weight`` x its share of the question's focus words, plus
        ``cue_weight`` when it answers a kind of question the question asks."""
        policy = self._policy
        focus = _stems(question, self._asking, self._ignored)
        kinds = policy.kinds(question)
        bonus = np.zeros(len(sentences), dtype=np.float32)
        for i, sentence in enumerate(sentences):
            if focus:
                bonus[i] += policy.focus_weight * len(focus & _stems(sentence, self._asking)) / len(focus)
            if any(kind.answered.search(sentence) for kind in kinds):
                bonus[i] += policy.cue_weight
        return bonus

    async def aclose(self) -> None:
        return None
