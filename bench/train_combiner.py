"""Training data for the learned combiner, generated from raw text, and the fit that writes its weights.

Run: ``PYTHONPATH=. python bench/train_combiner.py [--medquad PATH] [--sections N] [--cache DIR]``

Only raw knowledge-base text is used: the bundled corpus (``knowledge/``) and, when present, sections of
a text corpus such as MedQuAD (``../shared/eval/kb/medquad_kb.jsonl``). Labelled claim sets are never
read. Every pair is (claim, passage, supported?):

- supported: a passage sentence rewritten so that it is no longer verbatim but says the same thing or
  less (a clause dropped, a parenthesis removed, synonyms from a small list, numbers written as words,
  list items reordered, a leading phrase moved to the end);
- not supported, perturbed: a number changed, a negation added or removed, a quantifier strengthened,
  an antonym swapped, a medicine/condition/population swapped for another of the same kind;
- not supported, not enough information: the nearest sentence (MiniLM cosine) of another document, or
  a sentence of another passage of the same document - on topic, but not stated by this passage.

Features are those the verifier computes at run time (``LocalEntailmentVerifier.candidate_features``),
and the model is a class-balanced, L2-regularised logistic regression fitted with numpy. A fixed seed
makes the file reproducible.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from gateway.domain import Passage, Vector
from gateway.text import passage_from_text, sentence_spans
from gateway.verification.checks.data import CheckData
from gateway.verification.combiner import FEATURES, WEIGHTS_FILE

SEED = 20261122
REPO = Path(__file__).resolve().parents[1]
DEFAULT_MEDQUAD = REPO.parent / "shared" / "eval" / "kb" / "medquad_kb.jsonl"
MIN_WORDS, MAX_WORDS = 6, 45
SECTION_CHARS = 900
"""MedQuAD sections are cut to about a chunk's size."""
L2 = 1e-2
STEPS = 3000
LEARNING_RATE = 0.5


@dataclass(frozen=True)
class Pair:
    claim: str
    passage: int
    supported: bool
    kind: str


# --------------------------------------------------------------------------------------------------
# Sources


def bundled_passages() -> list[Passage]:
    from gateway.knowledge.chunking import chunk_document
    from gateway.knowledge.loaders import load_manifest

    passages = []
    for document in load_manifest(REPO / "knowledge"):
        for chunk in chunk_document(document):
            passages.append(_passage(chunk.id, document.id, chunk.text))
    return passages


def medquad_passages(path: Path, sections: int, rng: random.Random) -> list[Passage]:
    if not path.is_file() or sections <= 0:
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng.shuffle(rows)
    passages = []
    for row in rows[:sections]:
        text = re.sub(r"(?m)^\s*-\s+|\s+-\s+(?=[A-Z])", " ", str(row["text"]))
        text = re.sub(r"\s+", " ", text).strip()
        spans = sentence_spans(text)
        kept = [s for s in spans if s.end <= SECTION_CHARS] or spans[:1]
        if len(kept) < 2:
            continue
        text = text[: kept[-1].end]
        passages.append(_passage(str(row["id"]), str(row["url"]) or str(row["id"]), text))
    return passages


def _passage(pid: str, document_id: str, text: str) -> Passage:
    return passage_from_text(text, pid, document_id=document_id)


# --------------------------------------------------------------------------------------------------
# Rewrites that keep the meaning (or say less)

SYNONYMS = {
    "doctor": "physician",
    "medicine": "medication",
    "medicines": "medications",
    "reduce": "lower",
    "reduces": "lowers",
    "increase": "raise",
    "increases": "raises",
    "symptoms": "signs",
    "treat": "manage",
    "illness": "disease",
    "often": "frequently",
    "about": "approximately",
    "children": "kids",
    "risk": "chance",
    "serious": "severe",
    "start": "begin",
    "stop": "discontinue",
    "need": "require",
    "needs": "requires",
    "quickly": "rapidly",
    "usually": "typically",
    "important": "essential",
    "people": "individuals",
    "problems": "issues",
    "large": "big",
    "small": "little",
    "occur": "happen",
    "occurs": "happens",
    "affect": "impact",
    "affects": "impacts",
    "prevent": "avoid",
    "keep": "maintain",
    "help": "assist",
    "helps": "assists",
    "cause": "lead to",
    "causes": "leads to",
    "use": "take",
    "used": "taken",
    "many": "numerous",
    "common": "frequent",
    "check": "test",
    "buy": "purchase",
    "get": "obtain",
    "tell": "inform",
    "enough": "sufficient",
    "main": "primary",
    "also": "additionally",
    "shows": "indicates",
}
_DIGIT_NAMES = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
)
_NUMBER_WORDS = {str(n): w for n, w in enumerate(_DIGIT_NAMES)}


def _words(text: str) -> int:
    return len(text.split())


def _sentence(text: str) -> str:
    text = text.strip(" ,;:")
    return (text[:1].upper() + text[1:]).rstrip(".") + "." if text else text


def drop_clause(s: str, rng: random.Random) -> str | None:
    parts = [p for p in re.split(r",\s+|;\s+|\s+which\s+|\s+because\s+", s) if _words(p) >= MIN_WORDS]
    if len(parts) < 1 or parts[0] == s:
        return None
    return _sentence(parts[0]) if not re.match(r"(?i)^(if|when|unless|although)\b", parts[0]) else None


def drop_parenthesis(s: str, rng: random.Random) -> str | None:
    out = re.sub(r"\s*\([^)]*\)", "", s)
    return out if out != s else None


def synonyms(s: str, rng: random.Random) -> str | None:
    words = s.split()
    changed = False
    for i, word in enumerate(words):
        bare = word.strip(".,;:").lower()
        if bare in SYNONYMS and rng.random() < 0.8:
            words[i] = word.lower().replace(bare, SYNONYMS[bare])
            changed = True
    return " ".join(words) if changed else None


def numbers_as_words(s: str, rng: random.Random) -> str | None:
    out = re.sub(
        r"(?<![\d.,-])\b(\d{1,2})\b(?![\d.,%-])", lambda m: _NUMBER_WORDS.get(m.group(1), m.group(1)), s
    )
    return out if out != s else None


def reorder_list(s: str, rng: random.Random) -> str | None:
    match = re.search(r"\b(\w+(?: \w+)?) and (\w+(?: \w+)?)([.,])", s)
    if not match or match.group(1).lower() in _DATA.words.stopwords:
        return None
    a, b = match.group(1), match.group(2)
    return s[: match.start()] + f"{b} and {a}{match.group(3)}" + s[match.end() :]


def move_leading_phrase(s: str, rng: random.Random) -> str | None:
    match = re.match(r"^((?:In|For|During|After|Before|Among|With)\b[^,]{3,40}),\s+(.+?)\.?$", s)
    if not match:
        return None
    head = match.group(1)
    return _sentence(f"{match.group(2)} {head[:1].lower() + head[1:]}")


PARAPHRASES: tuple[Callable[[str, random.Random], str | None], ...] = (
    drop_clause,
    drop_parenthesis,
    synonyms,
    numbers_as_words,
    reorder_list,
    move_leading_phrase,
)

# --------------------------------------------------------------------------------------------------
# Perturbations that change the meaning

_AUXILIARY = re.compile(r"\b(is|are|was|were|can|may|should|will|could|might|must|does|do)\b(?! not)")
_NEGATED = re.compile(r"\b(is|are|was|were|can|may|should|will|could|might|must|does|do) not\b|\bnever\b")
ANTONYMS = {
    "increase": "decrease",
    "increases": "decreases",
    "increased": "decreased",
    "higher": "lower",
    "lower": "higher",
    "reduce": "increase",
    "reduces": "increases",
    "reduced": "increased",
    "more": "less",
    "less": "more",
    "common": "rare",
    "rare": "common",
    "early": "late",
    "before": "after",
    "after": "before",
    "high": "low",
    "low": "high",
    "safe": "unsafe",
    "effective": "ineffective",
    "improve": "worsen",
    "improves": "worsens",
    "acute": "chronic",
    "chronic": "acute",
    "benign": "malignant",
    "malignant": "benign",
    "slowly": "quickly",
    "better": "worse",
    "worse": "better",
    "most": "few",
    "upper": "lower",
    "inherited": "acquired",
}
_STRONGER = (
    (r"\bmay\b", "will always"),
    (r"\bcan\b", "always"),
    (r"\bsome\b", "all"),
    (r"\bsometimes\b", "always"),
    (r"\boften\b", "always"),
    (r"\bmost\b", "all"),
    (r"\bmany\b", "all"),
    (r"\busually\b", "always"),
    (r"\bcould\b", "will certainly"),
    (r"\bmight\b", "will definitely"),
)


def change_number(s: str, rng: random.Random) -> str | None:
    found = list(re.finditer(r"(?<![\w.-])(\d+(?:\.\d+)?)(?![\w-])", s))
    if not found:
        return None
    match = rng.choice(found)
    value = float(match.group(1))
    new = rng.choice([value * 2, value + rng.randint(1, 9), max(value / 2, 0.5), value * 10])
    text = f"{new:g}"
    return None if text == match.group(1) else s[: match.start()] + text + s[match.end() :]


def flip_negation(s: str, rng: random.Random) -> str | None:
    negated = _NEGATED.search(s)
    if negated:
        if negated.group(0) == "never":
            return s[: negated.start()] + "always" + s[negated.end() :]
        return s[: negated.start()] + negated.group(1) + s[negated.end() :]
    aux = _AUXILIARY.search(s)
    if aux:
        return s[: aux.end()] + " not" + s[aux.end() :]
    return None


def strengthen(s: str, rng: random.Random) -> str | None:
    for pattern, stronger in rng.sample(_STRONGER, len(_STRONGER)):
        if re.search(pattern, s, flags=re.IGNORECASE):
            return re.sub(pattern, stronger, s, count=1, flags=re.IGNORECASE)
    return None


def swap_antonym(s: str, rng: random.Random) -> str | None:
    words = s.split()
    spots = [i for i, w in enumerate(words) if w.strip(".,;:").lower() in ANTONYMS]
    if not spots:
        return None
    i = rng.choice(spots)
    bare = words[i].strip(".,;:").lower()
    words[i] = words[i].lower().replace(bare, ANTONYMS[bare])
    return " ".join(words)


_DATA = CheckData.load()
"""The checks' word data, read once by this script."""
_ENTITIES = _DATA.entities


def _vocabulary_by_kind() -> dict[str, list[str]]:
    kinds: dict[str, list[str]] = {}
    for form, (kind, canonical) in _ENTITIES.vocabulary.items():
        if form == canonical:
            kinds.setdefault(kind, []).append(form)
    return kinds


_KINDS = _vocabulary_by_kind()


def swap_entity(s: str, rng: random.Random) -> str | None:
    found = list(_ENTITIES.vocabulary_pattern.finditer(s.lower()))
    if not found:
        return None
    match = rng.choice(found)
    kind, canonical = _ENTITIES.vocabulary[match.group(0)]
    others = [w for w in _KINDS.get(kind, []) if w != canonical]
    if not others:
        return None
    return s[: match.start()] + rng.choice(others) + s[match.end() :]


PERTURBATIONS: tuple[Callable[[str, random.Random], str | None], ...] = (
    change_number,
    flip_negation,
    strengthen,
    swap_antonym,
    swap_entity,
)

# --------------------------------------------------------------------------------------------------
# Pairs


def generate(passages: Sequence[Passage], sentence_vectors: Sequence[Vector], seed: int = SEED) -> list[Pair]:
    """Positive, perturbed and not-enough-information pairs over ``passages`` (see module docstring)."""
    rng = random.Random(seed)
    owners: list[int] = []
    texts: list[str] = []
    for i, passage in enumerate(passages):
        for _, text in passage.sentences():
            owners.append(i)
            texts.append(text)
    matrix = np.concatenate([np.asarray(v, dtype=np.float32) for v in sentence_vectors])
    documents = np.array([passages[i].document_id for i in owners])
    pairs: list[Pair] = []
    for i, passage in enumerate(passages):
        own = [j for j, o in enumerate(owners) if o == i and MIN_WORDS <= _words(texts[j]) <= MAX_WORDS]
        for j in rng.sample(own, min(2, len(own))):
            s = texts[j]
            for op in rng.sample(PARAPHRASES, len(PARAPHRASES))[:3]:
                out = op(s, rng)
                if out and out.strip() != s.strip():
                    pairs.append(Pair(out, i, True, op.__name__))
            for op in rng.sample(PERTURBATIONS, len(PERTURBATIONS))[:3]:
                out = op(s, rng)
                if out and out.strip() != s.strip():
                    pairs.append(Pair(out, i, False, op.__name__))
            similar = matrix @ matrix[j]
            similar[documents == passage.document_id] = -1.0
            pairs.append(Pair(texts[int(np.argmax(similar))], i, False, "nei_other_document"))
            same_doc = [
                k
                for k, o in enumerate(owners)
                if documents[k] == passage.document_id
                and o != i
                and texts[k] not in passage.text
                and MIN_WORDS <= _words(texts[k]) <= MAX_WORDS
            ]
            if same_doc:
                pairs.append(Pair(texts[rng.choice(same_doc)], i, False, "nei_same_document"))
    return pairs


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """Class-balanced, L2-regularised logistic regression by full-batch gradient descent."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    z = (x - mean) / scale
    weight = np.where(y, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    w = np.zeros(x.shape[1])
    b = 0.0
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-(z @ w + b)))
        g = weight * (p - y)
        w -= LEARNING_RATE * (z.T @ g / len(y) + L2 * w)
        b -= LEARNING_RATE * float(g.mean())
    return w, b, mean, scale


def main() -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description="Generate pairs and fit the learned combiner.")
    parser.add_argument("--medquad", type=Path, default=DEFAULT_MEDQUAD)
    parser.add_argument("--sections", type=int, default=300, help="MedQuAD sections sampled")
    parser.add_argument("--out", type=Path, default=WEIGHTS_FILE)
    parser.add_argument("--cache", type=Path, default=None, help="directory to cache sentence vectors")
    args = parser.parse_args()

    from gateway.domain import ClaimToCheck
    from gateway.models.embedding import Embedder
    from gateway.verification.local import LocalEntailmentVerifier
    from gateway.verification.policy import VerificationPolicy

    rng = random.Random(SEED)
    passages = bundled_passages() + medquad_passages(args.medquad, args.sections, rng)
    embedder = Embedder()
    sentences = [t for p in passages for _, t in p.sentences()]
    cache = args.cache / f"sentences-{SEED}-{len(sentences)}.npy" if args.cache else None
    if cache is not None and cache.is_file():
        flat = np.load(cache)
    else:
        flat = embedder.encode(sentences)
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            np.save(cache, flat)
    vectors: list[Vector] = []
    offset = 0
    for p in passages:
        vectors.append(flat[offset : offset + len(p.sentence_spans)])
        offset += len(p.sentence_spans)
    passages = [replace(p, sentence_vectors=v) for p, v in zip(passages, vectors, strict=True)]
    pairs = generate(passages, vectors)
    claim_vectors = embedder.encode([p.claim for p in pairs])
    verifier = LocalEntailmentVerifier(embedder, VerificationPolicy())
    rows = [
        verifier.candidate_features(
            ClaimToCheck(pair.claim, None, ((1, passages[pair.passage]),)), claim_vectors[k]
        )
        for k, pair in enumerate(pairs)
    ]
    x = np.array(rows, dtype=np.float64)
    y = np.array([p.supported for p in pairs], dtype=np.float64)
    if args.cache is not None:
        np.savez(args.cache / "features.npz", x=x, y=y, kinds=np.array([p.kind for p in pairs]))
    w, b, mean, scale = fit(x, y)
    p = 1 / (1 + np.exp(-(((x - mean) / scale) @ w + b)))
    predicted = p >= 0.5
    truth = y.astype(bool)
    balanced = (predicted[truth].mean() + (~predicted[~truth]).mean()) / 2
    kinds: dict[str, int] = {}
    for pair in pairs:
        kinds[pair.kind] = kinds.get(pair.kind, 0) + 1
    args.out.write_text(
        json.dumps(
            {
                "features": list(FEATURES),
                "weights": [round(float(v), 6) for v in w],
                "bias": round(b, 6),
                "mean": [round(float(v), 6) for v in mean],
                "scale": [round(float(v), 6) for v in scale],
                "trained_on": {
                    "seed": SEED,
                    "passages": len(passages),
                    "pairs": len(pairs),
                    "kinds": kinds,
                    "training_balanced_accuracy": round(float(balanced), 4),
                },
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"{len(pairs)} pairs from {len(passages)} passages; training balanced accuracy {balanced:.3f}")
    print(json.dumps(dict(zip(FEATURES, [round(float(v), 3) for v in w], strict=True)), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
