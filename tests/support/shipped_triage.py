"""The shipped general policy's triage, and the decision on one message under it with a semantic read
the test gives (the rule layers decide when it says nothing): shared by the triage unit tests."""

from __future__ import annotations

import shutil
from pathlib import Path

from gateway.domain import Triage
from gateway.policies import load_policy
from gateway.triage.policy import TriagePolicy
from gateway.triage.semantic import SemanticScore
from gateway.triage.tense import Time
from tests.support.triage import confident_read, decide_message, reader_of, semantic_read, with_unbound_rule

REPO = Path(__file__).resolve().parents[2]
POLICY = load_policy(REPO / "policies", "general")
CATARACT = load_policy(REPO / "policies", "cataract-followup")
"""The second shipped context, for tests that a pattern list reaches every context."""
GENERAL = POLICY.context
TRIAGE = POLICY.triage
VITALS = TRIAGE.vitals
RULE_ON = with_unbound_rule(TRIAGE)
"""The shipped policy with ``unbound`` on (it ships on since the fourth pass: docs/safety.md)."""


def score(*, emergency: float = 0.0, near: str | None = None, similarity: float = 0.0) -> SemanticScore:
    """What the semantic layers would say: by default nothing (a health question, no emergency)."""
    fired = emergency >= TRIAGE.settings.emergency_probability
    return semantic_read(TRIAGE, near=near, similarity=similarity, emergency=emergency, classifier=fired)


def suicide_read() -> SemanticScore:
    """A classifier read of thoughts of suicide below any confident bar (P 0.66, as the model reads a
    waiting-room message), with no exemplar firing: the gate and the words decide."""
    return semantic_read(TRIAGE, near="suicidal_intent", similarity=0.32, emergency=0.66, classifier=True)


def judge(message: str, semantic: SemanticScore | None = None, policy: TriagePolicy = TRIAGE) -> Triage:
    return decide_message(message, GENERAL, policy, semantic or score())


def judge_raise(message: str, near: str, policy: TriagePolicy = RULE_ON) -> Triage:
    """The decision when the semantic layers confidently raise ``near`` (by default with the unbound rule
    on)."""
    return decide_message(message, GENERAL, policy, confident_read(policy, near))


def copy_policies(tmp_path: Path) -> Path:
    """A copy of the shipped triage policy directory, for a test to edit."""
    target = tmp_path / "triage"
    shutil.copytree(REPO / "policies" / "triage", target)
    return target


def sentence_times(text: str) -> list[Time]:
    """The time (now, history, ...) the shipped evidence reader gives each sentence of ``text``."""
    return [s.time for s in reader_of(TRIAGE).read(text).sentences]
