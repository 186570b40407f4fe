"""Quantities: the verifier's own extraction against quantulum3, and pint's coverage of dose units.

Run (the libraries are optional; a missing one is skipped)::

    .venv/bin/pip install quantulum3==0.10.0 pint==0.25.3
    PYTHONPATH=. .venv/bin/python bench/bench_units.py [--sample 1500]

Over a seeded sample of the claims of the seven sets in ``../shared/eval/claims/``: how many claims
each extractor finds a quantity in, the time per claim (median, p95; ours is the baseline), and
examples found by only one of them. Then which dose and measurement units that patients' leaflets use
pint's default registry knows, and what it reads them as. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.verification.checks.data import CheckData
from gateway.verification.checks.quantities import extract_quantities

CLAIMS = Path(__file__).resolve().parents[2] / "shared" / "eval" / "claims"
DOSE_UNITS = [
    *("mcg", "IU", "units", "mmol/L", "mg/dL", "mg/kg"),
    *("puffs", "tablets", "drops", "bpm", "mmHg", "mL"),
]


def claims(sample: int) -> list[str]:
    texts = [
        json.loads(line)["claim"]
        for path in sorted(CLAIMS.glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    return random.Random(7).sample(texts, min(sample, len(texts)))


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.3f} / {statistics.quantiles(values, n=20)[-1] * 1000:.3f} ms"


def compare_quantulum(texts: list[str]) -> None:
    try:
        from quantulum3 import classifier, parser
    except ImportError:
        print("(quantulum3 not installed: skipped)")
        return
    # Its disambiguation model is a pickled scikit-learn estimator that does not load with current
    # scikit-learn (ModuleNotFoundError: _loss); the rule-based path is what can run.
    classifier.USE_CLF = False
    ours_t: list[float] = []
    theirs_t: list[float] = []
    ours_n = theirs_n = 0
    only_theirs: list[tuple[str, list[tuple[str, str]]]] = []
    patterns = CheckData.load().quantities
    for text in texts:
        started = time.perf_counter()
        mine = extract_quantities(text, patterns)
        ours_t.append(time.perf_counter() - started)
        started = time.perf_counter()
        theirs = parser.parse(text)
        theirs_t.append(time.perf_counter() - started)
        ours_n += bool(mine)
        theirs_n += bool(theirs)
        if theirs and not mine:
            only_theirs.append((text[:90], [(q.surface, q.unit.name) for q in theirs]))
    print(f"claims: {len(texts)}; with a quantity: ours {ours_n}, quantulum3 {theirs_n}")
    print(f"time per claim (median / p95): ours {ms(ours_t)}, quantulum3 {ms(theirs_t)}")
    print("found by quantulum3 only (first 10):")
    for example in only_theirs[:10]:
        print("  ", example)


def pint_units() -> None:
    try:
        import pint
    except ImportError:
        print("(pint not installed: skipped)")
        return
    registry = pint.UnitRegistry()
    print("pint's default registry:")
    for name in DOSE_UNITS:
        try:
            quantity = registry.Quantity(1, name)
            print(f"  {name:<8} -> {quantity.to_base_units().units or 'dimensionless'}")
        except pint.errors.UndefinedUnitError:
            print(f"  {name:<8} -> undefined")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=int, default=1500)
    args = parser.parse_args()
    compare_quantulum(claims(args.sample))
    pint_units()


if __name__ == "__main__":
    main()
