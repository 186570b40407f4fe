"""Sentence splitters compared: the gateway's own (``gateway.text.sentence_spans``), pysbd and syntok.

Run: ``.venv/bin/python bench/bench_splitters.py [--kb-sample 400] [--verifier --per-set 150]``

Prints, per splitter:

- **labelled boundaries**: precision, recall and F1 of the sentence starts on
  ``bench/data/sentence_boundaries.yaml`` (medical passages written for this bench: abbreviations,
  decimals, quoted and parenthesised sentences, bullet lines, citation markers), and the cases split
  exactly right;
- **knowledge bases**: on the bundled knowledge base (``knowledge/docs``, every section) and a seeded
  sample of the NIH knowledge base (``/work/shared/eval/kb/medquad_kb.jsonl``, MedQuAD, CC BY 4.0): the
  sentences found and the *suspect* boundaries, counted by rules one can check by eye: a split right
  after an abbreviation ("e.g.", "Dr.", "approx.", "vs.", ...) or a list number ("1."), inside a
  decimal, or before a lower-case word (false splits); a full stop after a word of three or more
  letters followed by a capitalised word inside one sentence (missed splits). Block breaks (new
  lines) and the cuts of overlong runs are not counted: every candidate makes them alike. A few
  disagreements are printed to be judged by eye;
- **speed**: sentences per second over the sample, and the median and p95 time per passage;
- with ``--verifier``: the rows of ``bench/bench_verifier.py``'s sample (``--per-set``) whose evidence
  some candidate splits differently (on the others no verdict can change), then ``bench_verifier.py``
  on those rows once per splitter (a subprocess whose passages are built with that splitter:
  ``passage_from_text(splitter=...)``; patching ``gateway.text.sentence_spans`` instead had measured
  the default splitter in every column), printing each run's local-checker table (leak and supported
  recall per set).

The library splitters are used as the gateway would use them: blank lines and bullet lines are hard
breaks (structure, not sentences), a citation marker after a full stop stays with the sentence it
closes, and overlong runs are cut as ``gateway.text`` cuts them. A library that is not installed is
skipped. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gateway.domain import Span  # noqa: E402
from gateway.knowledge.chunking import sections  # noqa: E402
from gateway.text import MARKER, sentence_spans  # noqa: E402
from gateway.text import _append as append_span  # noqa: E402

SEED = 34
CASES = ROOT / "bench" / "data" / "sentence_boundaries.yaml"
KB = Path("/work/shared/eval/kb/medquad_kb.jsonl")
CLAIMS = Path("/work/shared/eval/claims")
JOINS = {"space": " ", "newline": "\n", "blank": "\n\n"}
_BLOCK = re.compile(r"\n\s*\n|\n(?=\s*[-*•]\s)")
_LEAD = re.compile(r"\s*(?:[-*•]\s+)?")
_MARKER_AFTER = re.compile(r"\s*" + MARKER.pattern)

Splitter = Callable[[str], list[Span]]


# --- candidates ---------------------------------------------------------------------------------


def _blocks(text: str) -> Iterator[tuple[int, int]]:
    start = 0
    for match in _BLOCK.finditer(text):
        yield start, match.start()
        start = match.end()
    yield start, len(text)


def _as_gateway_uses_it(text: str, pieces: Callable[[str], list[tuple[int, int]]]) -> list[Span]:
    """Library boundaries inside blank-line / bullet blocks; markers kept with the sentence they close;
    pieces trimmed and overlong runs cut as ``gateway.text`` does."""
    raw: list[tuple[int, int]] = []
    for block_start, block_end in _blocks(text):
        block = text[block_start:block_end]
        raw.extend((block_start + s, block_start + e) for s, e in pieces(block) if block[s:e].strip())
    moved: list[tuple[int, int]] = []
    for start, end in raw:
        if moved:
            marker = _MARKER_AFTER.match(text, start)
            if marker and moved[-1][1] <= start:
                moved[-1] = (moved[-1][0], marker.end())
                start = marker.end()
        moved.append((start, end))
    spans: list[Span] = []
    for start, end in moved:
        if text[start:end].strip():
            append_span(spans, text, start, end)
    return spans


def pysbd_splitter() -> Splitter | None:
    try:
        import pysbd
    except ImportError:
        return None
    segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)

    def pieces(block: str) -> list[tuple[int, int]]:
        return [(s.start, s.end) for s in segmenter.segment(block)]

    return lambda text: _as_gateway_uses_it(text, pieces)


def syntok_splitter() -> Splitter | None:
    try:
        from syntok import segmenter
    except ImportError:
        return None

    def pieces(block: str) -> list[tuple[int, int]]:
        out = []
        for paragraph in segmenter.analyze(block):
            for sentence in paragraph:
                tokens = list(sentence)
                if tokens:
                    out.append((tokens[0].offset, tokens[-1].offset + len(tokens[-1].value)))
        return out

    return lambda text: _as_gateway_uses_it(text, pieces)


def candidates() -> dict[str, Splitter]:
    found: dict[str, Splitter | None] = {
        "gateway.text": sentence_spans,
        "pysbd 0.3.4": pysbd_splitter(),
        "syntok 1.4.4": syntok_splitter(),
    }
    for name, splitter in found.items():
        if splitter is None:
            print(f"skipped: {name} is not installed")
    return {name: s for name, s in found.items() if s is not None}


# --- labelled boundaries ------------------------------------------------------------------------


def labelled_cases() -> list[tuple[str, set[int]]]:
    """(text, offsets where its 2nd, 3rd, ... sentence starts, past blanks and bullet markers)."""
    cases = []
    for case in yaml.safe_load(CASES.read_text(encoding="utf-8"))["cases"]:
        sentences = case if isinstance(case, list) else case["sentences"]
        join = JOINS["space"] if isinstance(case, list) else JOINS[case.get("join", "space")]
        text, starts = "", set()
        for index, sentence in enumerate(sentences):
            if index:
                text += join
                starts.add(_LEAD.match(text + sentence, len(text)).end())  # type: ignore[union-attr]
            text += sentence
        cases.append((text, starts))
    return cases


def predicted_starts(text: str, spans: list[Span]) -> set[int]:
    return {_LEAD.match(text, s.start).end() for s in spans[1:]}  # type: ignore[union-attr]


def score_labelled(splitter: Splitter, cases: list[tuple[str, set[int]]]) -> dict[str, Any]:
    true_positive = predicted = gold = exact = 0
    misses: list[str] = []
    for text, starts in cases:
        found = predicted_starts(text, splitter(text))
        true_positive += len(found & starts)
        predicted += len(found)
        gold += len(starts)
        exact += found == starts
        if found != starts and len(misses) < 30:
            misses.append(text.replace("\n", "⏎"))
    precision = true_positive / predicted if predicted else 1.0
    recall = true_positive / gold if gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "gold": gold,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "exact": exact,
        "cases": len(cases),
        "wrong": misses,
    }


# --- knowledge bases ----------------------------------------------------------------------------

_ABBREVIATION_END = re.compile(
    r"(?:\b(?:e\.g|i\.e|dr|mr|mrs|ms|prof|approx|vs|fig|figs|no|st|ca|cf|al|ref|refs|vol|pp|eq)\.)$",
    re.IGNORECASE,
)
_CLOSED = re.compile(r"[.!?][\"')\]]*$")
_LIST_NUMBER = re.compile(r"(?:^|:\s*)\d{1,2}\.$")
_MISSED = re.compile(
    r"\b(?!(?:approx|prof|etc|figs|vs|dr|mr|mrs|ms|no|st|al|ca|cf|vol|ref|refs|eq)\.)([a-z]{3,}|\))"
    r"[.!?][\"')]?\s+(?=[A-Z][a-z])"
)


def bundled_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted((ROOT / "knowledge" / "docs").glob("*.md")):
        texts.extend(body for _, body in sections(path.read_text(encoding="utf-8")) if body.strip())
    return texts


def kb_texts(sample: int) -> list[str]:
    if not KB.is_file() or sample <= 0:
        return []
    rows = [json.loads(line) for line in KB.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r["text"] for r in random.Random(SEED).sample(rows, min(sample, len(rows)))]


def suspects(text: str, spans: list[Span]) -> tuple[int, int, list[str]]:
    """(false splits, missed splits, examples) by the rules in the module doc."""
    false_splits = missed = 0
    examples: list[str] = []
    for index, span in enumerate(spans):
        piece = text[span.start : span.end]
        following = text[spans[index + 1].start : spans[index + 1].end] if index + 1 < len(spans) else ""
        between = text[span.end : spans[index + 1].start] if following else ""
        if following and "\n" not in between and _CLOSED.search(piece):
            decimal = piece[-1:] == "." and piece[-2:-1].isdigit() and following[:1].isdigit()
            lower = following[:1].islower()
            if _ABBREVIATION_END.search(piece) or _LIST_NUMBER.search(piece) or decimal or lower:
                false_splits += 1
                if len(examples) < 4:
                    examples.append(f"false split: …{piece[-40:]!r} | {following[:30]!r}")
        for match in _MISSED.finditer(piece):
            if match.end() < len(piece):
                missed += 1
                if len(examples) < 8:
                    examples.append(
                        f"missed split: …{piece[max(0, match.start() - 30) : match.end() + 25]!r}"
                    )
    return false_splits, missed, examples


def score_kb(splitter: Splitter, texts: list[str]) -> dict[str, Any]:
    sentences = false_splits = missed = 0
    examples: list[str] = []
    timings: list[float] = []
    for text in texts:
        started = time.perf_counter()
        spans = splitter(text)
        timings.append(time.perf_counter() - started)
        sentences += len(spans)
        f, m, e = suspects(text, spans)
        false_splits += f
        missed += m
        examples.extend(e[: max(0, 6 - len(examples))])
    total = sum(timings)
    return {
        "texts": len(texts),
        "sentences": sentences,
        "false": false_splits,
        "missed": missed,
        "examples": examples,
        "per_s": sentences / total if total else 0.0,
        "median_ms": 1000 * statistics.median(timings) if timings else 0.0,
        "p95_ms": 1000 * statistics.quantiles(timings, n=20)[18] if len(timings) >= 20 else 0.0,
    }


# --- downstream: the verifier ------------------------------------------------------------------


def differing_rows(
    splitters: dict[str, Splitter], per_set: int, out_dir: Path
) -> dict[str, dict[str, set[str]]]:
    """Write to ``out_dir`` the rows of bench_verifier's sample (same seed, same ``per_set``) whose evidence
    some candidate splits differently from ``gateway.text``: on every other row the verdict cannot change
    (the verifier is deterministic given the evidence's sentence spans). Returns, per candidate and set,
    the ids of the rows it splits differently."""
    from bench.bench_verifier import sample

    out_dir.mkdir(parents=True, exist_ok=True)
    base = splitters["gateway.text"]
    differs: dict[str, dict[str, set[str]]] = {n: {} for n in splitters}
    print(
        f"\nclaim sets: rows of bench_verifier's sample ({per_set} per set) whose evidence is split "
        "differently"
    )
    for path in sorted(CLAIMS.glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        rows = sample(rows, per_set)
        kept, counts = [], dict.fromkeys(splitters, 0)
        for row in rows:
            spans = base(row["evidence"])
            changed = [n for n, s in splitters.items() if s(row["evidence"]) != spans]
            for name in changed:
                counts[name] += 1
                differs[name].setdefault(path.stem, set()).add(row["id"])
            if changed:
                kept.append(row)
        target = out_dir / path.name
        target.unlink(missing_ok=True)
        if kept:
            target.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
        shown = ", ".join(f"{n} {c}" for n, c in counts.items() if n != "gateway.text")
        print(f"  {path.stem:<20}{len(rows):>5} rows: {shown}")
    return differs


def run_verifier_with(name: str, eval_dir: Path) -> dict[str, dict[str, bool]]:
    """The local checker's pass (True) per row id, in a subprocess whose passages are split by ``name``:
    bench_verifier's local verdicts (cached beside the rows) and its cascade."""
    slug = re.sub(r"\W", "_", name)
    out = eval_dir / f"passed_{slug}.json"
    command = [sys.executable, __file__, "--as-splitter", name, str(eval_dir), str(out)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    print(f"  verifier with {name}: {time.perf_counter() - started:.0f}s, exit {done.returncode}")
    if done.returncode:
        print(done.stderr[-2000:])
        return {}
    loaded: dict[str, dict[str, bool]] = json.loads(out.read_text(encoding="utf-8"))
    return loaded


def as_splitter(name: str, eval_dir: Path, out: Path) -> int:
    """bench_verifier's local checker on the rows of ``eval_dir`` with splitter ``name``; writes, per
    set, each row's pass as ``{"<id>|<label>": passed}``."""
    import asyncio
    from dataclasses import replace

    from bench import bench_verifier as bv
    from gateway.domain import VerdictLabel
    from gateway.models.cpu import serving_threads
    from gateway.models.embedding import Embedder
    from gateway.verification.anchoring import QuoteAnchoringVerifier
    from gateway.verification.cascade import CascadeVerifier
    from gateway.verification.checks.data import CheckData
    from gateway.verification.policy import VerificationPolicy

    slug = re.sub(r"\W", "_", name)
    splitter = candidates()[name]
    embedder = Embedder(cache_size=0, threads=serving_threads())
    policy = VerificationPolicy()
    cache = eval_dir / f"cache_{slug}.jsonl.cache"
    rows = bv.local_rows(embedder, policy, 0, cache, embedder, eval_dir, splitter)
    anchoring = QuoteAnchoringVerifier(policy.quote_fuzzy_threshold, policy.quote_min_chars)
    data = CheckData.load()
    local = bv.CachedLocal({r["id"]: bv.local_verdict(r, policy, data) for r in rows})
    cascade = CascadeVerifier(anchoring, local, None, replace(policy), data=data)
    claims = bv.check_claims(rows, splitter)
    verdicts = asyncio.run(bv.run_batched(cascade, claims, bv.JUDGE_REQUEST_CLAIMS))
    passed: dict[str, dict[str, bool]] = {}
    for row, verdict in zip(rows, verdicts, strict=True):
        ok = verdict.label is VerdictLabel.SUPPORTED
        passed.setdefault(row["set"], {})[f"{row['id']}|{row['label']}"] = ok
    out.write_text(json.dumps(passed), encoding="utf-8")
    return 0


def both_sides(
    passed: dict[str, dict[str, bool]], only: dict[str, set[str]]
) -> dict[str, tuple[int, int, int, int]]:
    """Per set, on the rows in ``only``: (supported passed, supported, not-supported passed,
    not-supported)."""
    table = {}
    for name, rows in passed.items():
        chosen = {k: v for k, v in rows.items() if k.split("|", 1)[0] in only.get(name, set())}
        supported = [v for k, v in chosen.items() if k.endswith("|supported")]
        other = [v for k, v in chosen.items() if not k.endswith("|supported")]
        table[name] = (sum(supported), len(supported), sum(other), len(other))
    return table


def print_downstream(
    results: dict[str, dict[str, dict[str, bool]]], differs: dict[str, dict[str, set[str]]]
) -> None:
    base = results.get("gateway.text", {})
    for name, passed in results.items():
        if name == "gateway.text" or not passed or not base:
            continue
        print(f"\n{name} vs gateway.text, on the rows whose evidence they split differently")
        print(f"{'set':<20}{'rows':>5}{'supported pass':>22}{'leak (not-supported passed)':>34}")
        theirs, ours = both_sides(passed, differs[name]), both_sides(base, differs[name])
        for set_name, (sp, sn, lp, ln) in theirs.items():
            bsp, _, blp, _ = ours.get(set_name, (0, 0, 0, 0))
            if sn + ln:
                recall, leak = f"{bsp}/{sn} -> {sp}/{sn}", f"{blp}/{ln} -> {lp}/{ln}"
                print(f"{set_name:<20}{sn + ln:>5}{recall:>22}{leak:>34}")


# --- main ---------------------------------------------------------------------------------------


def main() -> int:
    if "--as-splitter" in sys.argv:
        index = sys.argv.index("--as-splitter")
        return as_splitter(sys.argv[index + 1], Path(sys.argv[index + 2]), Path(sys.argv[index + 3]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb-sample", type=int, default=400, help="NIH knowledge-base sections sampled")
    parser.add_argument("--verifier", action="store_true", help="also bench_verifier.py once per splitter")
    parser.add_argument("--per-set", type=int, default=150, help="bench_verifier rows per claim set")
    parser.add_argument("--show-wrong", action="store_true", help="print the labelled cases each gets wrong")
    args = parser.parse_args()
    splitters = candidates()
    cases = labelled_cases()
    print(f"labelled: {len(cases)} passages, {sum(len(s) for _, s in cases)} boundaries ({CASES.name})")
    print(f"{'splitter':<16}{'precision':>10}{'recall':>8}{'F1':>7}{'exact':>10}")
    for name, splitter in splitters.items():
        s = score_labelled(splitter, cases)
        print(
            f"{name:<16}{s['precision']:>10.1%}{s['recall']:>8.1%}{s['f1']:>7.1%}{s['exact']:>5}/{s['cases']}"
        )
        if args.show_wrong:
            for text in s["wrong"]:
                print(f"    wrong: {text}")
    for label, texts in (
        ("bundled knowledge base (knowledge/docs, every section)", bundled_texts()),
        (
            f"NIH knowledge base (MedQuAD, CC BY 4.0), {args.kb_sample} sections, seed {SEED}",
            kb_texts(args.kb_sample),
        ),
    ):
        if not texts:
            print(f"\n{label}: skipped (not present)")
            continue
        print(f"\n{label}: {len(texts)} texts")
        print(
            f"{'splitter':<16}{'sentences':>10}{'false split':>13}{'missed':>8}{'sent/s':>10}"
            f"{'median ms':>11}{'p95 ms':>9}"
        )
        results = {name: score_kb(splitter, texts) for name, splitter in splitters.items()}
        for name, r in results.items():
            print(
                f"{name:<16}{r['sentences']:>10}{r['false']:>13}{r['missed']:>8}{r['per_s']:>10.0f}"
                f"{r['median_ms']:>11.3f}{r['p95_ms']:>9.3f}"
            )
        for name, r in results.items():
            for example in r["examples"]:
                print(f"  {name}: {example}")
    if args.verifier:
        eval_dir = Path(os.environ.get("TMPDIR", "/tmp")) / "bench_splitters_claims"
        differs = differing_rows(splitters, args.per_set, eval_dir)
        with ThreadPoolExecutor(len(splitters)) as pool:  # one subprocess per splitter, side by side
            runs = {name: pool.submit(run_verifier_with, name, eval_dir) for name in splitters}
        results = {name: run.result() for name, run in runs.items()}
        print_downstream(results, differs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
