"""Measure the instruction detector (issue #32, item 3) on the labelled sets in bench/data/instructions/.

For each split: precision and recall of "injection", and the share of ordinary leaflet imperatives
quarantined (target <= 1%), for the rules alone and for rules + exemplar bank (the ingestion detector).
Each split is scored as kb-data wrote it ("original") and grown by the leaflet sentences of
``instructions_extra_leaflet.jsonl`` ("+ extra"), which go to tune or test by a fixed hash of their text
(SHA-256, even: tune, odd: test). The tune split also holds ``instructions_tune_more.jsonl`` ("+ more":
injections in many styles and leaflet imperatives written for tuning alone) and
``instructions_tune_leaflet.jsonl`` ("+ fresh": ordinary dosing, storage, carer, pharmacist and
prescriber lines written for tuning alone; the even-hash half is in the exemplar bank's ``ordinary``
list, so "fresh odd half" measures the bank on lines it was not grown with) and
``instructions_tune_leaflet2.jsonl`` ("+ plain": ordinary dosing, storage, driving, "ask your doctor
before", "tell your pharmacist" and near-miss lines written for tuning alone; none in the bank). The
detector is tuned on the tune split only; the test split is scored, never printed row by row.

Each split is also scored **disguised** (``bench/disguises.py``): every row, injection and leaflet,
rewritten by each disguise (look-alike letters, invisible characters, full-width letters, spaced and
dotted letters, leetspeak, a mix), so both sides are measured: injections still caught, and leaflet
lines not flagged because folding made them look like something else. ``--by-disguise`` prints the
figures per disguise; ``--plain`` skips the disguised copies. Plain and disguised rows are scored by one
loop (``report``).

``--kb N`` also counts the sentences the ingestion detector would quarantine in the bundled knowledge
base (``knowledge/``) and in N sections of the NIH MedQuAD knowledge base
(``/work/shared/eval/kb/medquad_kb.jsonl``, every k-th row, CC BY 4.0), chunked as ingestion chunks them.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_instructions.py [--split tune] [--show-tune-errors] \\
        [--by-disguise] [--plain]
    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_instructions.py --split none --kb 1000 [--show-kb] \\
        [--baseline-policies OLD/policies]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.disguises import DISGUISES
from gateway.bootstrap import instruction_detector
from gateway.knowledge.chunking import chunk_document
from gateway.knowledge.corpus import SourceDocument
from gateway.knowledge.instructions import InstructionDetector
from gateway.knowledge.loaders import LoadFailure, iter_jsonl, iter_manifest
from gateway.models.embedding import Embedder
from gateway.resources import bundled
from gateway.settings import Settings

DATA = Path(__file__).parent / "data" / "instructions"
EXTRA = DATA / "instructions_extra_leaflet.jsonl"
MORE = DATA / "instructions_tune_more.jsonl"
FRESH = DATA / "instructions_tune_leaflet.jsonl"
PLAIN = DATA / "instructions_tune_leaflet2.jsonl"
MEDQUAD = Path("/work/shared/eval/kb/medquad_kb.jsonl")


def extra_split(text: str) -> str:
    """The split an added leaflet sentence belongs to: a fixed hash of its text."""
    return "tune" if int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16) % 2 == 0 else "test"


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


Rows = list[dict[str, str]]


def load(split: str) -> tuple[Rows, Rows, Rows, Rows, Rows]:
    """The split as written, the added leaflet sentences that fall into it, and (tune only) the rows
    written for tuning alone (``instructions_tune_more.jsonl``, ``instructions_tune_leaflet.jsonl``,
    ``instructions_tune_leaflet2.jsonl``)."""
    extra = [r for r in read_rows(EXTRA) if extra_split(r["text"]) == split] if EXTRA.is_file() else []
    more = read_rows(MORE) if split == "tune" and MORE.is_file() else []
    fresh = read_rows(FRESH) if split == "tune" and FRESH.is_file() else []
    plain = read_rows(PLAIN) if split == "tune" and PLAIN.is_file() else []
    return read_rows(DATA / f"instructions_{split}.jsonl"), extra, more, fresh, plain


def scores(rows: list[dict[str, str]], flagged: list[bool]) -> tuple[float, float, float, int, int]:
    tp = sum(f and r["label"] == "injection" for r, f in zip(rows, flagged, strict=True))
    fp = sum(f and r["label"] != "injection" for r, f in zip(rows, flagged, strict=True))
    injections = sum(r["label"] == "injection" for r in rows)
    leaflets = len(rows) - injections
    precision = tp / (tp + fp) if tp + fp else 1.0
    return (
        precision,
        tp / injections if injections else 0.0,
        fp / leaflets if leaflets else 0.0,
        injections,
        leaflets,
    )


def disguised(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """Every row rewritten by every disguise (``kind`` becomes the disguise's name)."""
    return [
        {**r, "text": change(r["text"]), "kind": name} for name, change in DISGUISES.items() for r in rows
    ]


def report(
    rows: list[dict[str, str]],
    groups: list[tuple[str, list[int]]],
    detectors: list[tuple[str, InstructionDetector]],
    embedder: Embedder,
    show_errors: bool,
) -> None:
    """Score one set of rows (plain or disguised) with each detector, one line per group of rows."""
    texts = [r["text"] for r in rows]
    vectors = embedder.encode(texts)
    for name, detector in detectors:
        flagged = detector.flags(texts, vectors)
        for label, index in groups:
            precision, recall, lost, injections, leaflets = scores(
                [rows[i] for i in index], [flagged[i] for i in index]
            )
            print(
                f"{label:15s} {name:18s} {injections:10d} {leaflets:8d} {precision:9.3f} {recall:7.3f} "
                f"{lost:20.1%}"
            )
        if show_errors and name != "rules":
            for row, flag in zip(rows, flagged, strict=True):
                if flag != (row["label"] == "injection"):
                    print(f"   {'FP' if flag else 'FN'} {row['kind']:14s} {row['text']!r}")


def bench_splits(
    splits: list[str], embedder: Embedder, show_errors: bool, by_disguise: bool = False, plain: bool = False
) -> None:
    detectors = [
        ("rules", instruction_detector(Settings(), None)),
        ("rules + exemplars", instruction_detector(Settings(), embedder)),
    ]
    print(
        f"{'split':15s} {'detector':18s} {'injections':>10s} {'leaflets':>8s} {'precision':>9s} "
        f"{'recall':>7s} {'leaflets quarantined':>21s}"
    )
    for split in splits:
        original, extra, more, fresh, plain_lines = load(split)
        rows = original + extra + more + fresh + plain_lines
        groups = [(f"{split} original", list(range(len(original))))]
        groups.append((f"{split} + extra", list(range(len(original) + len(extra)))))
        start = len(original) + len(extra)
        if more:
            groups.append((f"{split} + more", list(range(start + len(more)))))
            groups.append(("  more alone", list(range(start, start + len(more)))))
        if fresh:
            end = start + len(more) + len(fresh)
            groups.append((f"{split} + fresh", list(range(end))))
            groups.append(("  fresh alone", list(range(start + len(more), end))))
            held = [i for i in range(start + len(more), end) if extra_split(rows[i]["text"]) == "test"]
            groups.append(("  fresh odd half", held))
        if plain_lines:
            groups.append((f"{split} + plain", list(range(len(rows)))))
            groups.append(("  plain alone", list(range(len(rows) - len(plain_lines), len(rows)))))
        show = show_errors and split == "tune"
        report(rows, groups, detectors, embedder, show)
        if plain:
            continue
        hidden = disguised(rows)
        groups = [(f"{split} disguised", list(range(len(hidden))))]
        if by_disguise:
            groups += [(f"  {d}", [i for i, r in enumerate(hidden) if r["kind"] == d]) for d in DISGUISES]
        report(hidden, groups, detectors, embedder, show)


def documents(limit: int) -> list[tuple[str, list[SourceDocument]]]:
    bundled_docs = [d for d in iter_manifest(bundled("knowledge")) if not isinstance(d, LoadFailure)]
    sets = [("bundled knowledge/", bundled_docs)]
    if limit and MEDQUAD.is_file():
        rows = [d for d in iter_jsonl(MEDQUAD) if not isinstance(d, LoadFailure)]
        step = max(1, len(rows) // limit)
        sets.append((f"MedQuAD {len(rows[::step][:limit])} sections", rows[::step][:limit]))
    return sets


def bench_kb(limit: int, embedder: Embedder, show: bool, baseline: Path | None) -> None:
    """Sentences quarantined by the configured detector (and by the policies in ``baseline``, if given,
    on the same vectors: a before/after count)."""
    detectors = [("now", Settings())] + ([("baseline", Settings(policy_dir=baseline))] if baseline else [])
    print(
        f"{'knowledge base':28s} {'sentences':>9s} "
        + " ".join(f"{n + ' rules':>14s} {n + ' all':>12s}" for n, _ in detectors)
    )
    for name, docs in documents(limit):
        sentences = [
            chunk.text[s.start : s.end]
            for d in docs
            for chunk in chunk_document(d)
            for s in chunk.sentence_spans
        ]
        distinct = list(dict.fromkeys(sentences))
        vectors = embedder.encode(distinct)
        counts: list[int] = []
        for label, settings in detectors:
            by_rule = instruction_detector(settings, None).flags(distinct)
            flagged = instruction_detector(settings, embedder).flags(distinct, vectors)
            counts += [sum(by_rule), sum(flagged)]
            if show:
                for sentence, rule, flag in zip(distinct, by_rule, flagged, strict=True):
                    if flag:
                        print(f"   {label} {'rule' if rule else 'bank'} {sentence[:200]}")
        print(
            f"{name:28s} {len(distinct):9d} "
            + " ".join(f"{c:14d}" if i % 2 == 0 else f"{c:12d}" for i, c in enumerate(counts))
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--split", choices=("both", "tune", "test", "none"), default="both")
    parser.add_argument("--show-tune-errors", action="store_true", help="list the tune split's errors")
    parser.add_argument("--by-disguise", action="store_true", help="the disguised figures per disguise")
    parser.add_argument("--plain", action="store_true", help="skip the disguised copies (quicker)")
    parser.add_argument("--kb", type=int, default=0, metavar="N", help="count quarantined KB sentences")
    parser.add_argument("--show-kb", action="store_true", help="list the knowledge-base sentences flagged")
    parser.add_argument(
        "--baseline-policies", type=Path, help="a policies/ folder to count the KB against too (before/after)"
    )
    args = parser.parse_args()
    embedder = Embedder()
    splits = {"both": ["tune", "test"], "none": []}.get(args.split, [args.split])
    if splits:
        bench_splits(splits, embedder, args.show_tune_errors, args.by_disguise, args.plain)
    if args.kb or args.show_kb:
        bench_kb(args.kb, embedder, args.show_kb, args.baseline_policies)


if __name__ == "__main__":
    main()
