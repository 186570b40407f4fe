"""Train the triage classifier heads and write ``policies/triage/classifier.json``.

Run (reproduces the shipped file; about 3 minutes on 2 cores, then seconds with the cache)::

    PYTHONPATH=. HF_HUB_OFFLINE=1 .venv/bin/python bench/train_triage.py --cache /tmp/triage-cache

Two logistic-regression heads over MiniLM embeddings (scikit-learn, training time only; the gateway
evaluates them with numpy):

- ``emergency``: positives are every exemplar of ``policies/triage/emergency_exemplars.yaml`` and the
  ``suicide`` rows of the shared set's training split; negatives are the contrast banks and training
  rows of ``clinical.jsonl`` and ``non_clinical.jsonl``. ``depression`` rows are left out: their
  subreddit label is too noisy to call them non-emergencies.
- ``clinical``: positives are the health question banks, all exemplars and the clinical rows; negatives
  are the ``non_health`` bank and the non-clinical rows.

Both heads also see 2,000 question titles of ``../shared/eval/kb/medquad_kb.jsonl`` ("What are the
symptoms of ...?") as health questions that are not emergencies.

Groups are weighted so that the project's own exemplars count as much as the (much larger, differently
worded) shared rows. Prints 5-fold cross-validated figures on the exemplar banks before writing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from bench.triage_data import EVAL, ROOT, encode_cached, shared_rows
from gateway.models.embedding import Embedder
from gateway.triage.policy import load_categories, load_contrast_banks

POLICY = ROOT / "policies" / "triage"
KB = EVAL.parent / "kb" / "medquad_kb.jsonl"
"""Beside the triage set: found from a git worktree too (``ROOT.parent`` alone missed it there)."""


def kb_titles(limit: int = 2000) -> list[str]:
    """A sample of the question titles of ../shared/eval/kb/medquad_kb.jsonl (health questions)."""
    path = KB
    if not path.is_file():
        return []
    titles = sorted({json.loads(line)["title"] for line in path.open(encoding="utf-8")})
    step = max(1, len(titles) // limit)
    return titles[::step][:limit]


def _fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, c: float) -> LogisticRegression:
    model = LogisticRegression(C=c, max_iter=2000)
    model.fit(x, y, sample_weight=w)
    return model


def _group_weights(groups: list[tuple[np.ndarray, int, float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stack (vectors, label, total weight) groups; each group's rows share its total weight."""
    xs, ys, ws = [], [], []
    for vectors, label, total in groups:
        if len(vectors) == 0:
            continue
        xs.append(vectors)
        ys.append(np.full(len(vectors), label))
        ws.append(np.full(len(vectors), total / len(vectors)))
    w = np.concatenate(ws)
    return np.vstack(xs), np.concatenate(ys), w * len(w) / w.sum()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=None, help="scratch directory for embeddings")
    parser.add_argument("--c", type=float, default=4.0, help="inverse regularisation strength")
    parser.add_argument("--out", type=Path, default=POLICY / "classifier.json")
    args = parser.parse_args()

    embedder = Embedder()
    categories = load_categories(POLICY / "emergency_exemplars.yaml")
    banks = load_contrast_banks(POLICY / "contrast_exemplars.yaml")
    exemplars = [e for c in categories.values() for e in c.exemplars]

    def enc(texts: list[str], name: str) -> np.ndarray:
        return encode_cached(embedder, texts, args.cache, name)

    v_emerg = enc(exemplars, "exemplars")
    v_nonem = enc(list(banks.non_emergency), "non_emergency")
    v_health = enc(list(banks.health_questions), "health_questions")
    v_nonhealth = enc(list(banks.non_health), "non_health")
    suicide = [r.text for r in shared_rows("suicide_risk", "train") if r.label == "suicide"]
    clinical = [r.text for r in shared_rows("clinical", "train")]
    non_clinical = [r.text for r in shared_rows("non_clinical", "train")]
    titles = kb_titles()
    v_titles = enc(titles, "kb_titles")
    v_suicide = enc(suicide, "suicide_train")
    v_clinical = enc(clinical, "clinical_train")
    v_non_clinical = enc(non_clinical, "non_clinical_train")

    emergency_groups = [
        (v_emerg, 1, 3.0),
        (v_suicide, 1, 1.0),
        (v_nonem, 0, 1.5),
        (v_health, 0, 1.0),
        (v_nonhealth, 0, 0.5),
        (v_clinical, 0, 1.5),
        (v_titles, 0, 0.5),
        (v_non_clinical, 0, 1.5),
    ]
    clinical_groups = [
        (np.vstack([v_health, v_nonem, v_emerg]), 1, 1.5),
        (v_clinical, 1, 1.5),
        (v_titles, 1, 0.5),
        (v_nonhealth, 0, 0.5),
        (v_non_clinical, 0, 2.5),
    ]
    _exemplar_table(v_emerg, np.vstack([v_nonem, v_health, v_nonhealth]), v_clinical, v_non_clinical)
    heads = {}
    for name, groups in (("emergency", emergency_groups), ("clinical", clinical_groups)):
        x, y, w = _group_weights(groups)
        _cross_validate(name, x, y, w, args.c, len(groups[0][0]))
        model = _fit(x, y, w, args.c)
        heads[name] = {
            "weights": [round(float(v), 6) for v in model.coef_[0]],
            "bias": round(float(model.intercept_[0]), 6),
        }
    payload = {
        "model": Path(embedder.model_path).name,
        "command": "python bench/train_triage.py",
        "trained_on": {
            "emergency_exemplars": len(exemplars),
            "non_emergency": len(banks.non_emergency),
            "health_questions": len(banks.health_questions),
            "non_health": len(banks.non_health),
            "shared_suicide_train": len(suicide),
            "shared_clinical_train": len(clinical),
            "shared_non_clinical_train": len(non_clinical),
            "kb_question_titles": len(titles),
        },
        "heads": heads,
    }
    args.out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


def _exemplar_table(emerg: np.ndarray, contrast: np.ndarray, clinical: np.ndarray, other: np.ndarray) -> None:
    """Exemplar layer by threshold: leave-one-out recall on the emergency bank (each exemplar against
    the rest), and the share of shared training rows (clinical, non-clinical) it would flag."""
    sims = emerg @ emerg.T
    np.fill_diagonal(sims, -1.0)
    loo = sims.max(axis=1)
    loo_contrast = (emerg @ contrast.T).max(axis=1)

    def flags(rows: np.ndarray, threshold: float, margin: float) -> float:
        best = (rows @ emerg.T).max(axis=1)
        return float(np.mean((best >= threshold) & (best >= (rows @ contrast.T).max(axis=1) + margin)))

    print("exemplar layer: threshold margin | LOO recall | clinical flagged | non-clinical flagged")
    for threshold in (0.5, 0.55, 0.6, 0.62, 0.65, 0.7):
        for margin in (0.0, 0.02, 0.05):
            recall = float(np.mean((loo >= threshold) & (loo >= loo_contrast + margin)))
            print(
                f"  {threshold:.2f} {margin:.2f} | {recall:.3f} | {flags(clinical, threshold, margin):.3f}"
                f" | {flags(other, threshold, margin):.3f}"
            )


def _cross_validate(name: str, x: np.ndarray, y: np.ndarray, w: np.ndarray, c: float, first: int) -> None:
    """5-fold CV: recall on the positive class, and on the first group (the project's own bank)."""
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
    predicted = np.zeros(len(y))
    for train, test in folds.split(x, y):
        predicted[test] = _fit(x[train], y[train], w[train], c).predict_proba(x[test])[:, 1]
    positive = y == 1
    for threshold in (0.2, 0.3, 0.4, 0.5, 0.6):
        print(
            f"{name} >= {threshold:.1f}: CV recall {np.mean(predicted[positive] >= threshold):.3f}, "
            f"first-group recall {np.mean(predicted[:first] >= threshold):.3f}, "
            f"false positives {np.mean(predicted[~positive] >= threshold):.3f}"
        )


if __name__ == "__main__":
    main()
