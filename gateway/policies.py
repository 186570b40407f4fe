"""The whole policy of a directory: thresholds, tiers, the chosen operating context and triage.

Layout of a policy directory::

    thresholds.yaml           retrieval, verification, cleanup and refusal thresholds
    tiers.yaml                source tiers, their base trust scores, age decay and matching rules
    contexts/<name>.yaml      an operating context: scope and triage rules
    triage/                   semantic triage: exemplar banks, classifier, thresholds
    tools.yaml                the tools whose results are trusted (optional)

Any unknown key, wrong type or out-of-range value stops start-up with a ConfigurationError naming the
file, the dotted key and the reason. Each file is validated by pydantic over the frozen dataclasses
its feature owns (``gateway.validation``: the loading, the range and pattern checks, and the one
conversion of its errors): ``retrieval.policy``, ``verification.policy``, ``cleanup.policy``,
``trust.policy`` (the sections of thresholds.yaml and tiers.yaml), ``triage.contexts`` (operating
contexts and their triage rules), ``triage.policy`` (semantic triage) and ``tools.policy``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import with_config

from gateway.cleanup.policy import CleanupPolicy
from gateway.resources import bundled
from gateway.retrieval.policy import RetrievalPolicy
from gateway.settings import Settings
from gateway.tools.policy import ToolPolicy
from gateway.triage.contexts import OperatingContext
from gateway.triage.pattern_lists import context_with_lists, load_pattern_lists
from gateway.triage.policy import TriagePolicy, load_triage_policy
from gateway.trust.policy import TierPolicy
from gateway.validation import FILE_CONFIG, load_file, read_yaml, refuse, validate
from gateway.verification.policy import VerificationPolicy


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class Thresholds:
    retrieval: RetrievalPolicy = field(default_factory=RetrievalPolicy)
    verification: VerificationPolicy = field(default_factory=VerificationPolicy)
    cleanup: CleanupPolicy = field(default_factory=CleanupPolicy)


@dataclass(frozen=True)
class Policy:
    thresholds: Thresholds
    tiers: TierPolicy
    context: OperatingContext
    directory: Path
    triage: TriagePolicy
    tools: ToolPolicy = field(default_factory=ToolPolicy)
    """``tools.yaml`` (defaults when the directory has none)."""


def load_policy(directory: Path, context: str) -> Policy:
    thresholds = load_file(directory / "thresholds.yaml", Thresholds)
    tiers = load_file(directory / "tiers.yaml", TierPolicy)
    context_file = directory / "contexts" / f"{context}.yaml"
    if not context_file.is_file():
        available = sorted(p.stem for p in (directory / "contexts").glob("*.yaml"))
        refuse(str(context_file), "context", f"no such operating context; available: {', '.join(available)}")
    lists = load_pattern_lists(directory / "triage")
    raw = context_with_lists(read_yaml(context_file), lists, str(context_file))
    operating_context = validate(OperatingContext, raw, str(context_file))
    tools = _tool_policy(directory / "tools.yaml", tiers)
    return Policy(
        thresholds=thresholds,
        tiers=tiers,
        context=operating_context,
        directory=directory,
        triage=load_triage_policy(directory / "triage", lists=lists),
        tools=tools,
    )


def _tool_policy(path: Path, tiers: TierPolicy) -> ToolPolicy:
    """``tools.yaml`` (defaults when absent); each trusted tool's tier must be one ``tiers.yaml`` declares."""
    if not path.is_file():
        return ToolPolicy()
    policy = load_file(path, ToolPolicy)
    declared = {tier.id for tier in tiers.tiers}
    for index, tool in enumerate(policy.trusted):
        if tool.tier not in declared:
            reason = f"{tool.tier!r} is not a tier of tiers.yaml ({', '.join(sorted(declared))})"
            refuse(str(path), f"trusted[{index}].tier", reason)
    return policy


def load_configured_policy(settings: Settings) -> Policy:
    """The policy the settings name: their ``policy_dir`` (else the bundled policies) and ``context``."""
    return load_policy(settings.policy_dir or bundled("policies"), settings.context)
