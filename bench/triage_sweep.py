"""Sweep how the semantic layers are bound to a red flag's signs (#31 item 2), scores encoded once.

For each variant (every physical red flag's ``semantic`` binding, and triage.yaml's ``unbound_*`` bars)
prints emergency recall (R) and health questions plus non-clinical requests flagged (F), per source.
The test split is never read here (report it with bench_triage.py). Usage:

    PYTHONPATH=. HF_HUB_OFFLINE=1 python bench/triage_sweep.py --cache /tmp/triage_cache
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path
from typing import cast

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bench.bench_triage import DEV, HEALTH, Row, first_set_rows, project_rows, request_of, shared_set_rows
from bench.triage_data import ROOT, encode_cached
from gateway.domain import Scope
from gateway.knowledge.query import load_planner
from gateway.models.embedding import Embedder
from gateway.policies import load_policy
from gateway.triage.decision import decide
from gateway.triage.emergency import RuleReadings, evidence_reader
from gateway.triage.evidence_policy import Binding
from gateway.triage.planning import plan
from gateway.triage.policy import TriagePolicy
from gateway.triage.semantic import SemanticScore, SemanticTriage
from gateway.triage.triager import spelling_corrector


def variant(policy: TriagePolicy, binding: str, probability: float, margin: float) -> TriagePolicy:
    """The policy with every red flag but thoughts of suicide bound so, at these unbound bars."""
    categories = {
        name: rule
        if name == "suicidal_intent"
        else dataclasses.replace(rule, semantic=cast(Binding, binding))
        for name, rule in policy.evidence.categories.items()
    }
    evidence = dataclasses.replace(policy.evidence, categories=categories)
    settings = dataclasses.replace(policy.settings, unbound_probability=probability, unbound_margin=margin)
    return dataclasses.replace(policy, evidence=evidence, settings=settings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--variants", default="gate:0:-1,partial:0:-1,signs:0:-1")
    args = parser.parse_args()
    policy = load_policy(ROOT / "policies", "general")
    model = SemanticTriage(policy.triage, Embedder(), load_planner(ROOT / "policies").words)
    correct = spelling_corrector(model)
    planning_reader = evidence_reader(model.policy)  # the plan is the shipped policy's for every variant
    sources: dict[str, list[Row]] = {
        "first": first_set_rows(),
        "tune": project_rows(DEV / "tune.jsonl"),
        "non_clinical": shared_set_rows("non_clinical"),
        "clinical": shared_set_rows("clinical"),
        "suicide": shared_set_rows("suicide_risk"),
    }
    prepared = {}
    for name, rows in sources.items():
        plans = [
            plan(request_of(list(r.turns)), policy.context, model.policy, planning_reader, correct)
            for r in rows
        ]
        texts = [t for p in plans for t in p.texts]
        key = {"first": "bench_data_triage_messages.jsonl", "tune": "project_tune"}.get(name, "")
        key = key or f"shared_{name if name != 'suicide' else 'suicide_risk'}.jsonl"
        scores = model.score(encode_cached(model.encoder, texts, args.cache, key))  # type: ignore[arg-type]
        split: list[list[SemanticScore]] = []
        start = 0
        for p in plans:
            split.append(scores[start : start + len(p.texts)])
            start += len(p.texts)
        prepared[name] = (rows, plans, split)
    for spec in args.variants.split(","):
        binding, probability, margin = spec.split(":")
        policy_v = variant(model.policy, binding, float(probability), float(margin))
        reader = evidence_reader(policy_v)  # one per variant, as the triage component builds one
        figures = []
        for name, (rows, plans, split) in prepared.items():
            hit = total = flagged = health = 0
            for row, p, s in zip(rows, plans, split, strict=True):
                readings = RuleReadings.of(p, policy.context, policy_v, reader)
                emergency = decide(p, s, policy.context, policy_v, readings).scope is Scope.EMERGENCY
                if row.label == "emergency":
                    total += 1
                    hit += emergency
                elif row.label in HEALTH or row.label == "non_clinical":
                    health += 1
                    flagged += emergency
            recall = f"R {hit}/{total}" if total else ""
            figures.append(f"{name}: {recall} F {flagged}/{health}")
        print(spec, " | ".join(figures), flush=True)


if __name__ == "__main__":
    main()
