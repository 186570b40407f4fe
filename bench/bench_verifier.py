"""Claim-verification benchmark on the seven shared dev sets: leak, supported recall, AUC, and speed.

Run: ``.venv/bin/python bench/bench_verifier.py [--per-set 800] [--nli-model DIR] [--fit-calibration]``
(claims are encoded as a serving process encodes them: calls of up to three texts in ONNX Runtime,
``--onnx-cache DIR`` (default /tmp/bench_verifier_onnx) and ``--onnx-weights``, larger ones in torch;
``--torch-claims``: torch only; ``--unpacked``: small torch calls padded, as before packing;
``--eager``: packed calls run the eager model, as before the frozen graph;
``--dump FILE``: every claim's verdict, one JSON line each, to inspect or to diff two runs, with the
production path's own verdicts on the rows it times)

Binary task: ``supported`` vs everything else (``refuted`` + ``nei``). Each row's evidence paragraph is
one cited Passage (sentence vectors precomputed, as the knowledge base stores them). Per set and
configuration the bench prints the **leak** (share of not-supported claims passed as supported: what
reaches a patient), the supported recall, and the ROC AUC of the configuration's score:

- rules: ``LocalEntailmentVerifier`` alone (similarity + checks, ``support_threshold``);
- rules + binding (check-only default): the cascade on quote-less claims, as ``/v1/verify`` runs it:
  restatement of the best evidence window + calibrated score at ``check_support_probability``;
- + NLI: the same with the entailment model in ``--nli-model`` wired in (``GATEWAY_NLI_MODEL``).

Sets larger than ``--per-set`` are subsampled (seeded, fixed): the machine has 2 shared cores. The
local verdicts are computed once per row and cached in ``--cache`` (default: this checkout's
``.cache/bench_verifier_local.jsonl``, never shared with another checkout); the cascade then runs its real
code over them (``CachedLocal``). ``--fit-calibration`` refits ``data/check_calibration.json``
(isotonic, sets pooled with equal weight) and prints the threshold that keeps the worst set's leak at
``--target-leak`` (default 1%, half the 2% bound, as margin for unseen sets).

The accuracy table prints, per set and split (tune / held / all): the leak, the supported recall, the
contradiction precision (claims marked contradicted that are truly not supported) and coverage (the
share of not-supported claims marked contradicted), the undecided (``not_verified``) share, and on each
set's ``all`` line of the local checker the claims/s and claims/CPU-s of the production path at batch 8
(``set_speed``: the real local checker, not the cached verdicts; ``--speed-rows`` rows per set, 0: not
timed). The sets are every ``*.jsonl`` of ``--eval``: a held-out directory is scored by the same code
(its own cache: a cache is reused only for the same set names, ``--per-set``, claims encoder and
checker: a digest of ``gateway/verification``, ``gateway/text.py``, ``gateway/domain`` and
``policies/``, ``code_digest``).

``--speed`` instead measures the production path at batches of 1, 8 and 32 claims, ``--repeat``
times, and prints the best run with the load average at the time. Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import os
import random
import re
import statistics
import sys
import time
import zlib
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import roc_auc_score

from bench.serving_encoder import add_serving_encoder_arguments
from gateway.domain import (
    ClaimToCheck,
    Conflict,
    ConflictKind,
    Evidence,
    Passage,
    Span,
    Vector,
    Verdict,
    VerdictLabel,
    VerificationStatus,
)
from gateway.models.cpu import serving_threads
from gateway.models.embedding import Embedder
from gateway.text import passage_from_text, strip_markers
from gateway.verification import binding as binding_module
from gateway.verification import local as local_module
from gateway.verification.anchoring import QuoteAnchoringVerifier
from gateway.verification.binding import unshared_words
from gateway.verification.calibration import DEFAULT_PATH as DATA
from gateway.verification.calibration import ScoreCalibration
from gateway.verification.candidates import TextEncoder
from gateway.verification.cascade import CascadeVerifier, restatement_score
from gateway.verification.checks.analysis import Analyses
from gateway.verification.checks.data import CheckData
from gateway.verification.entailment import NLIStage, load_entailment_model
from gateway.verification.judge import JudgeConfig, LLMJudgeVerifier
from gateway.verification.local import LocalEntailmentVerifier
from gateway.verification.policy import VerificationPolicy
from gateway.verification.verifier import Verifier
from gateway.vocabulary import VerdictCheck, VerifierMethod

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval" / "claims"
SETS = (
    "checkcovid_dev",
    "kqa_dev",
    "covidfact",
    "scifact_rte",
    "citation_integrity",
    "nli4ct",
    "climate_fever",
)
SPEED_BATCH = 8
"""Claims per ``verify()`` call when the per-set claims/s are timed (a typical answer's claims)."""
SEED = 20
ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "bench_verifier_local.jsonl"
"""The default local verdicts cache (``--cache``): this checkout's own, so that two checkouts on one
machine never read or overwrite each other's verdicts (``.cache/`` is ignored by git)."""
ONNX_CACHE = Path("/tmp/bench_verifier_onnx")
"""Where the claims encoder's exported ONNX graph is cached (``--onnx-cache``)."""
CACHE_VERSION = 2
"""Version 2 records every clash (any kind, any similarity) with its conflict; ``local_verdict``
applies the policy's contradiction rule to it."""
CHECK_INPUTS = ("gateway/verification", "gateway/models", "gateway/text.py", "gateway/domain", "policies")
"""What the local verdicts depend on besides the rows: the checker's code and data, the encoder, and
the policies."""
JUDGE_REQUEST_CLAIMS = 8
"""Claims per ``verify()`` call when a judge is wired in (its budget is per call, as per request)."""
P95 = 0.95


def code_digest(root: Path = ROOT, inputs: Sequence[str] = CHECK_INPUTS) -> str:
    """sha-256 (16 hex digits) over the path and bytes of every file of ``inputs`` under ``root``
    (sources, word lists, calibration, policies; ``__pycache__`` skipped): a cache of local verdicts
    is reused only when none of them has changed, so a bench never silently measures older check code."""
    digest = hashlib.sha256()
    for name in inputs:
        base = root / name
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for path in files:
            if "__pycache__" in path.parts:
                continue
            digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def cache_key(per_set: int, claims_runtime: str, digest: str | None = None) -> dict[str, Any]:
    """What a cached local verdict was computed with: the sample size, the cache format, the checker's
    code and data (``code_digest``) and the encoder of the claims. A cache is reused only on equality."""
    return {
        "per_set": per_set,
        "version": CACHE_VERSION,
        "code": digest or code_digest(),
        "claims_encoder": claims_runtime,
    }


def cache_usable(cached: Sequence[dict[str, Any]], key: dict[str, Any], names: Sequence[str]) -> bool:
    """The cache's rows were computed with ``key`` (every field equal) over exactly the sets ``names``."""
    if not cached or any(cached[0].get(field) != value for field, value in key.items()):
        return False
    return {r["set"] for r in cached} == set(names)


def set_names(eval_dir: Path) -> list[str]:
    """The claim sets of ``eval_dir``: the development sets in their usual order, then any other
    ``*.jsonl`` (a held-out directory is scored by the same code)."""
    present = sorted(path.stem for path in eval_dir.glob("*.jsonl"))
    return [n for n in SETS if n in present] + [n for n in present if n not in SETS]


@dataclass(frozen=True)
class Row:
    claim: str
    evidence: str
    supported: bool


def load(name: str, limit: int | None, eval_dir: Path = EVAL) -> list[Row]:
    lines = (eval_dir / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return [Row(r["claim"], r["evidence"], r["label"] == "supported") for r in rows[:limit]]


Splitter = Callable[[str], Sequence[Span]]
"""A sentence splitter (``gateway.text.sentence_spans`` by default; ``bench_splitters.py`` passes others)."""


def passage(index: int, text: str, splitter: Splitter | None = None) -> Passage:
    return passage_from_text(text, f"row-{index}", splitter=splitter)


async def timed(
    verifier: Verifier, claims: list[ClaimToCheck], batch: int
) -> tuple[list[Verdict], list[float]]:
    verdicts: list[Verdict] = []
    latencies: list[float] = []
    for start in range(0, len(claims), batch):
        began = time.perf_counter()
        verdicts += await verifier.verify(claims[start : start + batch])
        latencies.append(time.perf_counter() - began)
    return verdicts, latencies


class CountingEncoder:
    """Counts the texts encoded while timed: with precomputed passage vectors only claims should be."""

    def __init__(self, embedder: TextEncoder) -> None:
        self._embedder = embedder
        self.texts = 0

    def encode(self, texts: Sequence[str]) -> Vector:
        self.texts += len(texts)
        return self._embedder.encode(texts)


def cold_checks() -> None:
    """Forget memoised verbatim keys and word stems (the checks analyse texts per request)."""
    for module in (local_module, binding_module):
        for value in vars(module).values():
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()


def ingest(raw: list[Passage], embedder: Embedder) -> list[Passage]:
    """Sentence vectors for every passage, encoded in one call as ingestion does."""
    sentences = [[t for _, t in p.sentences()] for p in raw]
    flat = embedder.encode([t for group in sentences for t in group])
    out, offset = [], 0
    for p, group in zip(raw, sentences, strict=True):
        out.append(replace(p, sentence_vectors=flat[offset : offset + len(group)]))
        offset += len(group)
    return out


async def speed(
    embedder: Embedder,
    claims_embedder: Embedder,
    policy: VerificationPolicy,
    limit: int | None,
    repeat: int,
    eval_dir: Path,
) -> None:
    """Claims/s on the production path, best of ``repeat`` runs.

    Timed: what a ``/v1/verify`` request does in the full cascade (anchoring, claim encoding, candidate
    windows, checks, restatement binding, calibration). Not timed: passage sentence vectors, computed
    beforehand as ingestion stores them. Each run starts with a new verifier and cold check caches, and
    the number of texts encoded is printed to show that only claims were. claims/CPU-s divides by the
    process's CPU time instead of the wall clock: on a shared machine it shows what the same work gives
    on a core of its own (with one model thread, the serving default). Claims are encoded by
    ``claims_embedder`` (by default a serving process's: ONNX Runtime for calls of up to three texts,
    torch above), passages by ``embedder``.
    """
    rows = load(SETS[0], limit or 256, eval_dir) + load(SETS[1], (limit or 256) // 2, eval_dir)
    passages = ingest([passage(i, r.evidence) for i, r in enumerate(rows)], embedder)
    claims = [
        ClaimToCheck(r.claim, None, ((1, p),), quote_bound=False) for r, p in zip(rows, passages, strict=True)
    ]
    anchoring = QuoteAnchoringVerifier(policy.quote_fuzzy_threshold, policy.quote_min_chars)
    print(
        f"\nspeed: {len(claims)} claims (Check-COVID + K-QA), cascade, precomputed passage vectors, "
        f"claims encoded by {claims_embedder.runtime}, best of {repeat}"
    )
    print(
        f"{'batch':>6}{'claims/s':>10}{'med ms':>9}{'p95 ms':>9}{'claims/CPU-s':>14}"
        "   load average (1/5/15 min)"
    )
    for batch in (1, 8, 32):
        best: tuple[float, float, float, tuple[float, float, float], float] | None = None
        for _ in range(repeat):
            counter = CountingEncoder(claims_embedder)
            cascade = CascadeVerifier(anchoring, LocalEntailmentVerifier(counter, policy), None, policy)
            cold_checks()
            load_avg = os.getloadavg()
            cpu = time.process_time()
            _, latencies = await timed(cascade, claims, batch)
            cpu = time.process_time() - cpu
            if counter.texts > len(claims):
                print(f"  warning: {counter.texts} texts encoded for {len(claims)} claims")
            ordered = sorted(latencies)
            run = (
                len(claims) / sum(latencies),
                statistics.median(latencies) * 1000,
                ordered[min(len(ordered) - 1, int(P95 * len(ordered)))] * 1000,
                load_avg,
                len(claims) / cpu,
            )
            best = run if best is None or run[0] > best[0] else best
        assert best is not None
        print(
            f"{batch:>6}{best[0]:>10.0f}{best[1]:>9.1f}{best[2]:>9.1f}{best[4]:>14.0f}   "
            f"{best[3][0]:.2f} / {best[3][1]:.2f} / {best[3][2]:.2f}"
        )


# --- accuracy over cached local verdicts ------------------------------------------------------


def sample(rows: list[dict[str, Any]], per_set: int) -> list[dict[str, Any]]:
    if len(rows) <= per_set:
        return rows
    return sorted(random.Random(SEED).sample(rows, per_set), key=lambda r: r["id"])


def local_rows(
    embedder: Embedder,
    policy: VerificationPolicy,
    per_set: int,
    cache: Path,
    claims_embedder: Embedder,
    eval_dir: Path,
    splitter: Splitter | None = None,
) -> list[dict[str, Any]]:
    """One record per sampled row: the claim, its label and the local verdict (cached on disk).

    Evidence sentences are encoded by ``embedder`` (as ingestion stores them), claims by ``claims_embedder``.
    Every clash is recorded as a contradiction with its kind and similarity (a recording policy), and
    ``local_verdict`` applies the policy's contradiction rule, so that rule can be tuned on the cache.
    ``per_set`` 0: every row of every set. ``splitter``: how the evidence is split into sentences (the
    cache does not record it: give each splitter its own ``cache``).
    """
    key = cache_key(per_set, claims_embedder.runtime)
    if cache.is_file():
        cached = [json.loads(line) for line in cache.read_text(encoding="utf-8").splitlines() if line]
        if cache_usable(cached, key, set_names(eval_dir)):
            return cached
        print(f"  cache {cache} was computed with other code, data or settings: computed again")
    recording = replace(
        policy, contradiction_similarity=0.0, contradiction_kinds=tuple(k.value for k in ConflictKind)
    )
    local = LocalEntailmentVerifier(claims_embedder, recording)
    out: list[dict[str, Any]] = []
    for name in set_names(eval_dir):
        lines = (eval_dir / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        rows = sample(rows, per_set) if per_set else rows
        passages = ingest([passage(i, r["evidence"], splitter) for i, r in enumerate(rows)], embedder)
        claims = [ClaimToCheck(r["claim"], None, ((1, p),)) for r, p in zip(rows, passages, strict=True)]
        for start in range(0, len(claims), 32):
            assessed = local.assess_all(claims[start : start + 32])
            for row, a in zip(rows[start : start + 32], assessed, strict=True):
                out.append(
                    {
                        **key,
                        "set": name,
                        "id": row["id"],
                        "label": row["label"],
                        "claim": row["claim"],
                        "evidence": row["evidence"],
                        "score": a.score,
                        "check": a.check,
                        "vlabel": a.label.value,
                        "reason": a.reason,
                        "similarity": a.similarity,
                        "conflict": (
                            [a.conflict.kind.value, a.conflict.detail, a.conflict.claim, a.conflict.source]
                            if a.conflict
                            else None
                        ),
                        "cand": a.candidate.text if a.candidate else None,
                        "span": [a.candidate.span.start, a.candidate.span.end] if a.candidate else None,
                    }
                )
        print(f"  local verdicts: {name} ({len(rows)} rows)", flush=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("".join(json.dumps(r) + "\n" for r in out), encoding="utf-8")
    return out


class CachedLocal:
    """The local stage's verdicts for known rows (computed once), so the cascade's own code runs on them."""

    name = "local"

    def __init__(self, verdicts: dict[str, Verdict]) -> None:
        self._verdicts = verdicts

    async def verify(self, claims: Sequence[ClaimToCheck], analyses: Analyses | None = None) -> list[Verdict]:
        return [self._verdicts[c.sources[0][1].id] for c in claims]


KIND_OF_CHECK = {
    "number_mismatch": ConflictKind.NUMBER,
    "negation": ConflictKind.NEGATION,
    "antonym": ConflictKind.OPPOSITE,
    "quantifier": ConflictKind.QUANTIFIER,
    "entity_missing": ConflictKind.ENTITY,
}
"""Version 1 caches (no conflict recorded): the kind from the check (population reads as entity)."""
_CLAIM_PART = re.compile(r"the claim (?:says|names) '([^']+)'")


def cached_conflict(row: dict[str, Any]) -> Conflict:
    if row.get("conflict"):
        kind, detail, claim, source = row["conflict"]
        return Conflict(ConflictKind(kind), detail, claim, source)
    found = _CLAIM_PART.search(row["reason"])
    return Conflict(KIND_OF_CHECK[row["check"]], row["reason"], found.group(1) if found else "")


def local_verdict(row: dict[str, Any], policy: VerificationPolicy, data: CheckData) -> Verdict:
    """The cached local verdict under ``policy``'s contradiction rule (``local.contradicts``); ``data``:
    the checks' word data."""
    evidence = None
    if row["cand"] is not None:
        evidence = Evidence(1, row["id"], row["cand"], Span(*row["span"]))
    label, reason, conflict = VerdictLabel(row["vlabel"]), row["reason"], None
    if label is VerdictLabel.CONTRADICTED:
        conflict = cached_conflict(row)
        analyses = Analyses(data)
        unshared = unshared_words(analyses(strip_markers(row["claim"])), analyses(row["cand"]), conflict)
        trusted = (
            conflict.kind.value in policy.contradiction_kinds
            and row["similarity"] >= policy.contradiction_similarity
            and len(unshared) <= policy.contradiction_max_unshared_words
        )
        if not trusted:
            label, conflict = VerdictLabel.UNSUPPORTED, None
            reason = f"{reason} (a possible conflict, not decided locally)"
    method, check = VerifierMethod.LOCAL, VerdictCheck(row["check"])
    return Verdict(label, row["score"], method, check, reason, evidence, conflict=conflict)


def check_claims(rows: list[dict[str, Any]], splitter: Splitter | None = None) -> list[ClaimToCheck]:
    return [
        ClaimToCheck(
            r["claim"],
            None,
            ((1, passage_from_text(r["evidence"], r["id"], splitter=splitter)),),
            quote_bound=False,
        )
        for r in rows
    ]


def raw_scores(rows: list[dict[str, Any]]) -> np.ndarray:
    """The check-only raw score of each row (``cascade.restatement_score``; contradictions score 0)."""
    out = []
    data = CheckData.load()
    for row in rows:
        verdict = local_verdict(row, VerificationPolicy(), data)
        raw = (
            0.0
            if verdict.label is VerdictLabel.CONTRADICTED
            else restatement_score(row["claim"], verdict, Analyses(data))[0]
        )
        out.append(raw)
    return np.array(out)


def leak_recall(passed: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """(leak, supported recall); nan where a split holds no claim of that side (a small sample)."""

    def share(chosen: np.ndarray) -> float:
        return float(chosen.mean()) if chosen.size else float("nan")

    return share(passed[~truth]), share(passed[truth])


def auc(truth: np.ndarray, score: np.ndarray) -> float:
    if truth.all() or not truth.any():
        return float("nan")
    return float(roc_auc_score(truth, score))


def fit_calibration(rows: list[dict[str, Any]], target: float, write: bool) -> float:
    """Isotonic fit, pooled with equal weight per set; the threshold keeping every set's leak <= target."""
    names = [r["set"] for r in rows]
    counts = {n: names.count(n) for n in set(names)}
    raw = raw_scores(rows)
    truth = np.array([r["label"] == "supported" for r in rows])
    weights = np.array([1.0 / counts[n] for n in names])
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(
        raw, truth, sample_weight=weights
    )
    knots = [float(x) for x in iso.X_thresholds_]
    values = [round(float(y), 4) for y in iso.y_thresholds_]
    if knots[0] > 0.0:
        knots, values = [0.0, *knots], [values[0], *values]
    if knots[-1] < 1.0:
        knots, values = [*knots, 1.0], [*values, values[-1]]
    calibration = ScoreCalibration(tuple(knots), tuple(values))
    probability = np.array([calibration.probability(x) for x in raw])
    chosen = 1.0
    for threshold in sorted(set(np.round(probability, 4)), reverse=False):
        ok = all(
            leak_recall(probability[np.array(names) == n] >= threshold, truth[np.array(names) == n])[0]
            <= target
            for n in counts
        )
        if ok:
            chosen = float(threshold)
            break
    print(f"\ncalibration: {len(knots)} knots; threshold at worst-set leak <= {target:.1%}: {chosen:.4f}")
    if write:
        DATA.write_text(
            json.dumps(
                {
                    "method": "isotonic regression of supported on cascade.restatement_score, seven dev "
                    "sets pooled with equal weight per set (bench/bench_verifier.py --fit-calibration)",
                    "knots": [round(k, 6) for k in knots],
                    "values": values,
                },
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )
        print(f"written: {DATA}")
    return chosen


def split_of(row_id: str) -> str:
    """``tune`` or ``held``: a fixed half of every set by a hash of the row id. Thresholds are chosen on
    ``tune`` only; ``held`` is reported beside it and never looked at while tuning."""
    return "tune" if zlib.crc32(str(row_id).encode("utf-8")) % 2 == 0 else "held"


class OracleJudge:
    """A ChatModel answering the batched judge prompt with each statement's human label (supported ->
    supported, refuted -> contradicted, nei -> unsupported), quoting the start of its evidence: what
    the cascade reaches with a judge that is always right, and how many judge calls it costs."""

    name = "oracle"

    def __init__(self, rows: Sequence[dict[str, Any]]) -> None:
        self._labels = {r["claim"]: (r["label"], r["evidence"]) for r in rows}
        self.calls = 0
        self.claims = 0

    async def complete(self, messages: Any, **_: Any) -> str:
        self.calls += 1
        user = messages[-1]["content"]
        statements = [
            line.split(": ", 1)[1]
            for line in user.splitlines()
            if line.startswith("Statement ") and ": " in line and not line.startswith("Statement: ")
        ]
        if not statements:
            statements = [
                line.split(": ", 1)[1] for line in user.splitlines() if line.startswith("Statement: ")
            ]
        self.claims += len(statements)
        verdicts = []
        for k, text in enumerate(statements, start=1):
            label, evidence = self._labels.get(text, ("nei", ""))
            verdict = {"supported": "supported", "refuted": "contradicted"}.get(label, "unsupported")
            quote = evidence[:40] if verdict != "unsupported" else ""
            conflict = "statement" if verdict == "contradicted" else ""
            verdicts.append(
                {"statement": k, "verdict": verdict, "quote": quote, "reason": "oracle", "conflict": conflict}
            )
        if len(verdicts) == 1 and "Statement: " in user:
            return json.dumps({k: v for k, v in verdicts[0].items() if k != "statement"})
        return json.dumps({"verdicts": verdicts})

    async def stream(self, messages: Any, **kwargs: Any) -> AsyncGenerator[str, None]:
        """The judge never streams; the ChatModel protocol asks for it."""
        yield await self.complete(messages, **kwargs)

    async def aclose(self) -> None:
        return None


@dataclass(frozen=True)
class Figures:
    n: int
    leak: float
    recall: float
    contradiction_precision: float
    contradiction_coverage: float
    contradicted: int
    undecided: float


def figures(verdicts: Sequence[Verdict], truth: np.ndarray) -> Figures:
    passed = np.array([v.supported for v in verdicts])
    contradicted = np.array([v.status is VerificationStatus.CONTRADICTED for v in verdicts])
    undecided = np.array([v.status is VerificationStatus.NOT_VERIFIED for v in verdicts])
    leak, recall = leak_recall(passed, truth)
    caught = contradicted & ~truth
    precision = float(caught.sum() / contradicted.sum()) if contradicted.any() else float("nan")
    coverage = float(caught.sum() / (~truth).sum()) if (~truth).any() else float("nan")
    return Figures(
        len(verdicts), leak, recall, precision, coverage, int(contradicted.sum()), float(undecided.mean())
    )


def verdict_record(config: str, row: dict[str, Any], verdict: Verdict) -> dict[str, Any]:
    """One claim's verdict as a ``--dump`` line: the row, its split and human label, and what the
    configuration said (status, check, score, reason, the conflict and the evidence it quoted)."""
    conflict = verdict.conflict
    return {
        "config": config,
        "set": row["set"],
        "id": row["id"],
        "split": split_of(row["id"]),
        "label": row["label"],
        "claim": row["claim"],
        "status": verdict.status.value,
        "supported": verdict.supported,
        "check": verdict.check.value,
        "score": round(verdict.score, 4),
        "reason": verdict.reason,
        "conflict": [conflict.kind.value, conflict.claim, conflict.source] if conflict else None,
        "evidence": verdict.evidence.text if verdict.evidence else None,
    }


def write_jsonl(path: Path, records: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


async def run_batched(verifier: CascadeVerifier, claims: list[ClaimToCheck], batch: int) -> list[Verdict]:
    verdicts: list[Verdict] = []
    for start in range(0, len(claims), batch):
        verdicts += await verifier.verify(claims[start : start + batch])
    return verdicts


@dataclass(frozen=True)
class Speed:
    n: int
    per_second: float
    per_cpu_second: float


async def set_speed(
    rows: list[dict[str, Any]], embedder: Embedder, policy: VerificationPolicy, limit: int
) -> tuple[Speed, list[Verdict]]:
    """Claims/s of the production path on one set: the full cascade with the real local checker (claims
    encoded, candidate windows, checks, binding, calibration) at ``SPEED_BATCH`` claims per call, over
    its first ``limit`` sampled rows, cold check caches; passage sentence vectors computed beforehand,
    as ingestion stores them. claims/CPU-s divides by the process's CPU time (a core of its own).
    Also returns the verdicts of the timed rows (``--dump`` writes them: the production path's own)."""
    chosen = rows[:limit]
    passages = ingest([passage(i, r["evidence"]) for i, r in enumerate(chosen)], embedder)
    claims = [
        ClaimToCheck(r["claim"], None, ((1, p),), quote_bound=False)
        for r, p in zip(chosen, passages, strict=True)
    ]
    anchoring = QuoteAnchoringVerifier(policy.quote_fuzzy_threshold, policy.quote_min_chars)
    cascade = CascadeVerifier(anchoring, LocalEntailmentVerifier(embedder, policy), None, policy)
    cold_checks()
    cpu = time.process_time()
    verdicts, latencies = await timed(cascade, claims, SPEED_BATCH)
    cpu = time.process_time() - cpu
    return Speed(len(claims), len(claims) / sum(latencies), len(claims) / cpu), verdicts


async def accuracy(
    rows: list[dict[str, Any]],
    policy: VerificationPolicy,
    nli: NLIStage | None,
    judge: bool,
    embedder: Embedder | None = None,
    speed_rows: int = 0,
    dump: Path | None = None,
) -> None:
    """Per set and split: leak, supported recall, contradiction precision / coverage, undecided share;
    and per set the claims/s of the production path at batch ``SPEED_BATCH`` (``set_speed``; when
    ``embedder`` is given and ``speed_rows`` > 0). ``dump``: every claim's verdict under each
    configuration, one JSON object a line (``verdict_record``), for inspection and for diffing runs."""
    anchoring = QuoteAnchoringVerifier(policy.quote_fuzzy_threshold, policy.quote_min_chars)
    data = CheckData.load()
    local = CachedLocal({r["id"]: local_verdict(r, policy, data) for r in rows})
    configs: dict[str, tuple[CascadeVerifier, OracleJudge | None]] = {
        "local checker": (CascadeVerifier(anchoring, local, None, policy, data=data), None),
    }
    if nli is not None:
        configs["local + NLI"] = (CascadeVerifier(anchoring, local, None, policy, nli, data=data), None)
    if judge:
        oracle = OracleJudge(rows)
        judging = JudgeConfig(
            timeout=60.0, quote_threshold=policy.quote_fuzzy_threshold, batch_size=policy.judge_batch_size
        )
        verifier = CascadeVerifier(
            anchoring, local, LLMJudgeVerifier(oracle, judging), policy, nli, data=data
        )
        configs["local + oracle judge"] = (verifier, oracle)
    print(f"\noperating point: {configs['local checker'][0].operating_point}; load {os.getloadavg()[0]:.2f}")
    print("split: tune = crc32(id) even (thresholds chosen here), held = odd (never tuned on)")
    names = list(dict.fromkeys(r["set"] for r in rows))
    speeds: dict[str, Speed] = {}
    dumped: list[dict[str, Any]] = []
    if embedder is not None and speed_rows > 0:
        for name in names:
            subset = [r for r in rows if r["set"] == name]
            speeds[name], timed_verdicts = await set_speed(subset, embedder, policy, speed_rows)
            if dump is not None:
                config = f"production path, batch {SPEED_BATCH}"
                dumped += [verdict_record(config, r, v) for r, v in zip(subset, timed_verdicts, strict=False)]
        print(
            f"claims/s: the production path (full cascade, real local checker) at batch {SPEED_BATCH}, first "
            f"{speed_rows} sampled rows per set; claims/CPU-s: per second of this process's CPU time"
        )
    header = (
        f"{'set':<20}{'split':<6}{'n':>5}{'leak':>7}{'recall':>8}{'contra P':>10}{'n contra':>9}"
        f"{'coverage':>9}{'undecided':>10}{'claims/s':>10}{'claims/CPU-s':>14}"
    )
    for config, (cascade, counted) in configs.items():
        print(f"\n[{config}]")
        print(header)
        worst = {"leak": 0.0, "precision": math.inf}  # inf: no split marked any claim contradicted
        for name in names:
            subset = [r for r in rows if r["set"] == name]
            if not subset:
                continue
            verdicts = await run_batched(cascade, check_claims(subset), JUDGE_REQUEST_CLAIMS)
            if dump is not None:
                dumped += [verdict_record(config, r, v) for r, v in zip(subset, verdicts, strict=True)]
            for part in ("tune", "held", "all"):
                chosen = [i for i, r in enumerate(subset) if part == "all" or split_of(r["id"]) == part]
                truth = np.array([subset[i]["label"] == "supported" for i in chosen])
                f = figures([verdicts[i] for i in chosen], truth)
                if part != "all":
                    worst["leak"] = max(worst["leak"], f.leak)
                    if f.contradicted:
                        worst["precision"] = min(worst["precision"], f.contradiction_precision)
                speed = speeds.get(name) if part == "all" and counted is None and nli is None else None
                timing = f"{speed.per_second:>10.0f}{speed.per_cpu_second:>14.0f}" if speed else ""
                # a split with none marked contradicted has no precision: "none", not nan% or 100%
                precision = f"{f.contradiction_precision:>10.1%}" if f.contradicted else f"{'none':>10}"
                print(
                    f"{name if part == 'tune' else '':<20}{part:<6}{f.n:>5}{f.leak:>7.1%}{f.recall:>8.1%}"
                    f"{precision}{f.contradicted:>9}{f.contradiction_coverage:>9.1%}"
                    f"{f.undecided:>10.1%}{timing}"
                )
        marked = "none marked" if math.isinf(worst["precision"]) else f"{worst['precision']:.1%}"
        print(f"worst split: leak {worst['leak']:.1%}, contradiction precision {marked}")
        if counted is not None:
            total = len(rows)
            print(
                f"judge: {counted.calls} calls for {total} claims "
                f"({100 * counted.calls / total:.1f} calls per 100 claims; "
                f"{100 * counted.claims / total:.1f}% of claims sent; batch {policy.judge_batch_size}, "
                f"budget {policy.judge_budget_per_request} per request of {JUDGE_REQUEST_CLAIMS} claims)"
            )
    if dump is not None:
        write_jsonl(dump, dumped)
        print(f"\nverdicts written: {dump} ({len(dumped)} lines)")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-set", type=int, default=800, help="rows sampled per set (seeded); 0: all rows")
    parser.add_argument("--eval", type=Path, default=EVAL, help="directory of the claim sets (*.jsonl)")
    parser.add_argument(
        "--judge",
        action="store_true",
        help="also the cascade with an oracle judge: judge calls per 100 claims",
    )
    parser.add_argument("--cache", type=Path, default=CACHE, help="local verdicts cache (JSONL)")
    parser.add_argument("--nli-model", type=Path, default=None, help="entailment model directory to wire in")
    parser.add_argument("--fit-calibration", action="store_true", help="refit data/check_calibration.json")
    parser.add_argument("--target-leak", type=float, default=0.01, help="worst-set leak for the threshold")
    parser.add_argument("--limit", type=int, default=None, help="speed: rows per set")
    parser.add_argument("--speed", action="store_true", help="only the claims/s table at batches 1, 8, 32")
    parser.add_argument(
        "--speed-rows",
        type=int,
        default=128,
        help=f"rows per set timed for the per-set claims/s at batch {SPEED_BATCH} (0: not timed)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="speed runs per batch size (best is shown)")
    parser.add_argument(
        "--threads", type=int, default=serving_threads(), help="MiniLM threads (default: a serving process's)"
    )
    parser.add_argument(
        "--dump", type=Path, default=None, help="write every claim's verdict per configuration to this JSONL"
    )
    add_serving_encoder_arguments(parser, "the claims (small calls)")
    parser.set_defaults(onnx_cache=ONNX_CACHE)
    parser.add_argument(
        "--torch-claims",
        action="store_true",
        help="encode the claims in torch only (not the serving path: ONNX Runtime for calls of <= 3 texts)",
    )
    parser.add_argument(
        "--unpacked",
        action="store_true",
        help="small torch calls padded, as before packing (gateway/models/packing.py), to compare",
    )
    parser.add_argument(
        "--eager",
        action="store_true",
        help="packed torch calls run the eager model, not the frozen graph (PackedForward.freeze)",
    )
    args = parser.parse_args()
    if not args.eval.is_dir():
        print(f"skipped: {args.eval} is not present")
        return 0
    # no text cache: repeated runs must measure encoding, not cache hits
    embedder = Embedder(cache_size=0, threads=args.threads, packed=not args.unpacked, frozen=not args.eager)
    claims_embedder = embedder
    if not args.torch_claims:  # the serving process's encoder (Embedder.from_settings), cache off
        claims_embedder = Embedder(
            cache_size=0,
            threads=args.threads,
            onnx_dir=args.onnx_cache,
            onnx_weights=args.onnx_weights,
            packed=not args.unpacked,
            frozen=not args.eager,
        )
    print(f"MiniLM: evidence {embedder.runtime}, claims {claims_embedder.runtime}, {args.threads} thread(s)")
    policy = VerificationPolicy()
    embedder.encode(["warm-up"])
    if args.speed:
        await speed(embedder, claims_embedder, policy, args.limit, args.repeat, args.eval)
        return 0
    rows = local_rows(embedder, policy, args.per_set, args.cache, claims_embedder, args.eval)
    if args.fit_calibration:
        threshold = fit_calibration(rows, args.target_leak, write=True)
        policy = replace(policy, check_support_probability=round(math.ceil(threshold * 100) / 100, 2))
    nli = None
    if args.nli_model is not None:
        nli = NLIStage(load_entailment_model(args.nli_model), policy.nli_entailment_threshold, 600.0)
    await accuracy(rows, policy, nli, args.judge, claims_embedder, args.speed_rows, args.dump)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
