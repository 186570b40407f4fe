"""Measure the instruction detector (issue #32, item 3) on the labelled sets in bench/data/instructions/.

For each split: precision and recall of "injection", and the share of ordinary leaflet imperatives
quarantined (target <= 1%), for the rules alone and for rules + exemplar bank (the ingestion detector).
The detector is tuned on the tune split only; the test split is scored, never printed row by row.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_instructions.py [--show-tune-errors]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gateway.knowledge.embedding import Embedder
from gateway.knowledge.instructions import InstructionDetector
from gateway.settings import Settings

DATA = Path(__file__).parent / "data" / "instructions"


def load(split: str) -> list[dict[str, str]]:
    with (DATA / f"instructions_{split}.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def scores(rows: list[dict[str, str]], flagged: list[bool]) -> tuple[float, float, float, int, int]:
    tp = sum(f and r["label"] == "injection" for r, f in zip(rows, flagged, strict=True))
    fp = sum(f and r["label"] != "injection" for r, f in zip(rows, flagged, strict=True))
    injections = sum(r["label"] == "injection" for r in rows)
    leaflets = len(rows) - injections
    precision = tp / (tp + fp) if tp + fp else 1.0
    return precision, tp / injections, fp / leaflets, injections, leaflets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--show-tune-errors", action="store_true", help="list the tune split's errors")
    args = parser.parse_args()
    embedder = Embedder()
    detector = InstructionDetector.from_settings(Settings(), embedder)
    rules = InstructionDetector.from_settings(Settings(), None)
    print(
        f"{'split':6s} {'detector':18s} {'injections':>10s} {'leaflets':>8s} {'precision':>9s} "
        f"{'recall':>7s} {'leaflets quarantined':>21s}"
    )
    for split in ("tune", "test"):
        rows = load(split)
        texts = [r["text"] for r in rows]
        vectors = embedder.encode(texts)
        for name, flagged in (
            ("rules", rules.flags(texts)),
            ("rules + exemplars", detector.flags(texts, vectors)),
        ):
            precision, recall, lost, injections, leaflets = scores(rows, flagged)
            print(
                f"{split:6s} {name:18s} {injections:10d} {leaflets:8d} {precision:9.3f} {recall:7.3f} "
                f"{lost:20.1%}"
            )
            if args.show_tune_errors and split == "tune" and name != "rules":
                for row, flag in zip(rows, flagged, strict=True):
                    if flag != (row["label"] == "injection"):
                        print(f"   {'FP' if flag else 'FN'} {row['kind']:14s} {row['text']}")


if __name__ == "__main__":
    main()
